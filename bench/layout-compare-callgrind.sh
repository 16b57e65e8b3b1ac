#!/bin/bash
# Instructions per engine command of two commits, counted by valgrind's callgrind: repeatable where
# wall-clock time on a shared machine is not.
#
#   bench/layout-compare-callgrind.sh OLD NEW      (each a commit, or "." for this working tree)
#
# Each commit is checked out into a temporary git worktree under /tmp (node_modules symlinked,
# built with tsc). This tree's bench/engine-drive.ts writes the engine benchmark's seeded stream to
# a file once; then, for each tree, the driver replays it in-process through that tree's engine
# core under callgrind: a warm-up engine runs the setup and CG_WARM rows, a fresh engine the setup
# and N rows. With N1 and N2 rows, instructions per command = (I(N2) − I(N1)) / (N2 − N1): start-up,
# loading, JIT warm-up and setup cancel out. Every count is taken CG_REPEATS times; both trees
# must end with the same state hash and the same number of records, or the script fails.
# Node runs JIT-ed as usual; --single-threaded keeps compilation and GC on one thread,
# --predictable-gc-schedule takes wall-clock time out of V8's heap sizing (without it the same
# run varied by ~0.5 % of its total, ±450 instructions per command), and fixed hash and random
# seeds keep the run the same from one invocation to the next.
# CG_RECORDS_MAY_DIFFER=1 lets the record counts differ (a change to what the engine writes); the
# state hashes must still agree.
# Env: CG_N1 (10000), CG_N2 (50000), CG_WARM (50000), CG_REPEATS (2),
#      CG_NODE_FLAGS ("--single-threaded --predictable-gc-schedule --hash-seed=1 --random-seed=1").
# About a minute of valgrind per run; the two trees run side by side, 2 sizes × CG_REPEATS pairs.
set -euo pipefail

N1=${CG_N1:-10000}
N2=${CG_N2:-50000}
WARM=${CG_WARM:-50000}
REPEATS=${CG_REPEATS:-2}

WORK_PREFIX=layout-callgrind
# shellcheck source=bench/callgrind-trees.sh
source "$(dirname "$0")/callgrind-trees.sh" "$@"

build "$here"
add_tree "$1" old
old=$tree
add_tree "$2" new
new=$tree
driver="$here/dist/bench/engine-drive.js"
stream="$work/stream.bin"
node "$driver" write "$stream" $(( N2 > WARM ? N2 : WARM ))

# count SIDE TREE N: writes "instructions driver-json" to $work/SIDE.N
count() {
  local out="$work/$1.$3"
  valgrind --tool=callgrind --callgrind-out-file="$out.cg" node $NODE_FLAGS "$driver" run "$2" "$stream" "$WARM" "$3" >"$out.json" 2>"$out.log"
  echo "$(sed -n 's/^summary: //p' "$out.cg") $(cat "$out.json")" >"$out"
  rm -f "$out.cg"
}

echo "engine layout under callgrind: OLD $1 ($(git -C "$old" rev-parse --short HEAD)), NEW $2 ($(git -C "$new" rev-parse --short HEAD))"
echo "stream: seed 20240601, warm-up $WARM rows on a separate engine, N1 $N1, N2 $N2; node $(node --version) $NODE_FLAGS"
declare -A per outcome
for r in $(seq 1 "$REPEATS"); do
  for n in "$N1" "$N2"; do
    count old "$old" "$n" &
    count new "$new" "$n" &
    wait
  done
  for side in old new; do
    read -r i1 j1 <"$work/$side.$N1"
    read -r i2 j2 <"$work/$side.$N2"
    per[$side$r]=$(awk -v a="$i1" -v b="$i2" -v n="$((N2 - N1))" 'BEGIN { printf "%.1f", (b - a) / n }')
    echo "run $r $side: I(N1) $i1, I(N2) $i2, instructions/command ${per[$side$r]}"
    echo "  N1 $j1"
    echo "  N2 $j2"
    outcome[$side$r]=$(echo "$j1 $j2" | sed 's/"tree":"[^"]*",//g')
    # A change to what the engine writes (CG_RECORDS_MAY_DIFFER=1) compares the state hash alone.
    if [ "${CG_RECORDS_MAY_DIFFER:-0}" = 1 ]; then outcome[$side$r]=$(echo "${outcome[$side$r]}" | sed 's/"records":[0-9]*,//g'); fi
  done
  if [ "${outcome[old$r]}" != "${outcome[new$r]}" ]; then
    echo "FAIL: the two trees disagree (records or state hash)" >&2
    exit 1
  fi
  echo "run $r ratio NEW/OLD: $(awk -v n="${per[new$r]}" -v o="${per[old$r]}" 'BEGIN { printf "%.4f", n / o }')"
done
