#!/bin/bash
# Instructions per command of the journal writer (output digest, the record into LMDB with its
# run's checksum, one transaction and flush per batch), for two commits, counted by valgrind's callgrind:
# repeatable where wall-clock time on a shared machine is not.
#
#   bench/journal-writer-callgrind.sh OLD NEW      (each a commit, or "." for this working tree)
#
# Each commit is checked out into a temporary git worktree under /tmp (node_modules symlinked,
# built with tsc), and this tree's built bench/journal.bench.ts is copied into its dist, so both
# trees write the same captured stream in the same batches through their own writer and store.
# Each count runs `journal.bench.js drive N CAP`: the engine captures CAP commands (the same in
# every count), the writer writes all of them once (warm-up), then the first N into a fresh store.
# With N1 and N2, instructions per command = (I(N2) − I(N1)) / (N2 − N1): capture, start-up and
# warm-up cancel out. Outside callgrind, both trees write N2 commands and the script fails unless
# every stored record hashes the same (stamped command and output digest, not the checksum fields,
# whose layout depends on the journal format).
# The counts are differences of two whole-process counts that include the waits for each batch's
# flush, and they vary between runs by more than a small change: at 10,000 and 30,000 commands one
# tree counted 5,048 and 13,132 instructions per command in two runs, at the defaults 5,351 and
# 6,793 (bench/RESULTS.md, "Journal format 4"). Run it several times and compare the ratios.
# CG_STORE=memory counts the writer over a store in memory instead (each batch sealed as the LMDB
# store seals a run, nothing stored, no flush): the writer's own instructions.
# Env: CG_N1 (20000), CG_N2 (80000), CG_STORE (unset: LMDB; memory),
#      CG_NODE_FLAGS ("--single-threaded --predictable-gc-schedule --hash-seed=1 --random-seed=1").
set -euo pipefail

N1=${CG_N1:-20000}
N2=${CG_N2:-80000}

WORK_PREFIX=journal-writer-callgrind
# shellcheck source=bench/callgrind-trees.sh
source "$(dirname "$0")/callgrind-trees.sh" "$@"

trees_with dist/bench/journal.bench.js

# count NAME TREE N: writes "instructions driver-json" to $work/NAME.N
count() {
  local out="$work/$1.$3"
  (cd "$2" && valgrind --tool=callgrind --callgrind-out-file="$out.cg" node $NODE_FLAGS dist/bench/journal.bench.js drive "$3" "$N2" ${CG_STORE:-} >"$out.json" 2>"$out.log")
  echo "$(sed -n 's/^summary: //p' "$out.cg") $(cat "$out.json")" >"$out"
  rm -f "$out.cg"
}

echo "journal writer under callgrind: OLD $1 ($(git -C "$old" rev-parse --short HEAD)), NEW $2 ($(git -C "$new" rev-parse --short HEAD))"
echo "captured $N2 commands, N1 $N1, N2 $N2; node $(node --version) $NODE_FLAGS"
for n in "$N1" "$N2"; do
  count old "$old" "$n" &
  count new "$new" "$n" &
  wait
done
declare -A per
for side in old new; do
  read -r i1 j1 <"$work/$side.$N1"
  read -r i2 j2 <"$work/$side.$N2"
  per[$side]=$(awk -v a="$i1" -v b="$i2" -v n="$((N2 - N1))" 'BEGIN { printf "%.0f", (b - a) / n }')
  echo "$side: I(N1) $i1, I(N2) $i2, instructions/command ${per[$side]}; N2 run $j2"
done
old_digest=$(cd "$old" && node dist/bench/journal.bench.js drive "$N2" "$N2" digest)
new_digest=$(cd "$new" && node dist/bench/journal.bench.js drive "$N2" "$N2" digest)
echo "stored journal of $N2 commands (outside callgrind): OLD $old_digest, NEW $new_digest"
if [ "$old_digest" != "$new_digest" ]; then
  echo "FAIL: the two trees store different journals" >&2
  exit 1
fi
echo "writer NEW/OLD: $(awk -v n="${per[new]}" -v o="${per[old]}" 'BEGIN { printf "%.3f", n / o }')"
