#!/bin/bash
# Instructions per command of the journal worker's path with the history sinks, for two commits,
# counted by valgrind's callgrind: repeatable where wall-clock time on a shared machine is not.
#
#   bench/history-sink-callgrind.sh OLD NEW      (each a commit, or "." for this working tree)
#
# Each commit is checked out into a temporary git worktree under /tmp (node_modules symlinked,
# built with tsc), and this tree's bench/history-sink.bench.ts (built) is copied into its dist, so
# both trees run the same stream and the same loop over their own sinks. Each count runs
# `history-sink.bench.js drive PATH N WARM`: a warm-up run of WARM commands on a fresh data
# directory, then a run of N on another. With N1 and N2 commands, instructions per command =
# (I(N2) − I(N1)) / (N2 − N1): start-up, loading and JIT warm-up cancel out. Paths: the sinks in
# both trees, and in NEW the same puts made raw (the floor for this storage format) and the
# journal alone. Outside callgrind, both trees' sinks store N2 commands and the script fails
# unless every key and value of their history hashes the same.
# Env: CG_N1 (2000), CG_N2 (6000), CG_WARM (2000),
#      CG_NODE_FLAGS ("--single-threaded --predictable-gc-schedule --hash-seed=1 --random-seed=1").
# The counts are of a small history (N2 commands, a few MB): a put's tree descent there is shorter
# than at the wall-clock bench's 50,000 commands.
set -euo pipefail

N1=${CG_N1:-2000}
N2=${CG_N2:-6000}
WARM=${CG_WARM:-2000}

WORK_PREFIX=history-callgrind
# shellcheck source=bench/callgrind-trees.sh
source "$(dirname "$0")/callgrind-trees.sh" "$@"

trees_with dist/bench/history-sink.bench.js

# count NAME TREE PATH N: writes "instructions driver-json" to $work/NAME.N
count() {
  local out="$work/$1.$4"
  (cd "$2" && valgrind --tool=callgrind --callgrind-out-file="$out.cg" node $NODE_FLAGS dist/bench/history-sink.bench.js drive "$3" "$4" "$WARM" >"$out.json" 2>"$out.log")
  echo "$(sed -n 's/^summary: //p' "$out.cg") $(cat "$out.json")" >"$out"
  rm -f "$out.cg"
}

echo "history sinks under callgrind: OLD $1 ($(git -C "$old" rev-parse --short HEAD)), NEW $2 ($(git -C "$new" rev-parse --short HEAD))"
echo "warm-up $WARM commands, N1 $N1, N2 $N2; node $(node --version) $NODE_FLAGS"
for n in "$N1" "$N2"; do
  count oldsinks "$old" sinks "$n" &
  count newsinks "$new" sinks "$n" &
  wait
  count newraw "$new" raw "$n" &
  count newjournal "$new" journal "$n" &
  wait
done
declare -A per
for side in oldsinks newsinks newraw newjournal; do
  read -r i1 j1 <"$work/$side.$N1"
  read -r i2 j2 <"$work/$side.$N2"
  per[$side]=$(awk -v a="$i1" -v b="$i2" -v n="$((N2 - N1))" 'BEGIN { printf "%.0f", (b - a) / n }')
  echo "$side: I(N1) $i1, I(N2) $i2, instructions/command ${per[$side]}; N2 run $j2"
done
old_digest=$(cd "$old" && node dist/bench/history-sink.bench.js drive sinks "$N2" 0 digest)
new_digest=$(cd "$new" && node dist/bench/history-sink.bench.js drive sinks "$N2" 0 digest)
echo "stored history of $N2 commands (outside callgrind): OLD $old_digest, NEW $new_digest"
if [ "$old_digest" != "$new_digest" ]; then
  echo "FAIL: the two trees store different history" >&2
  exit 1
fi
echo "sinks NEW/OLD: $(awk -v n="${per[newsinks]}" -v o="${per[oldsinks]}" 'BEGIN { printf "%.3f", n / o }')"
echo "added by the sinks over the journal: OLD $((per[oldsinks] - per[newjournal])), NEW $((per[newsinks] - per[newjournal])), the raw puts $((per[newraw] - per[newjournal]))"
