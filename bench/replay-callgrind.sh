#!/bin/bash
# Instructions per command of replay on restart (recover(): every checksum and output digest
# checked, the engine rebuilt), and of the engine alone over the same records (no checksum, no
# digest: replay's ceiling), for two commits, counted by valgrind's callgrind: repeatable where
# wall-clock time on a shared machine is not.
#
#   bench/replay-callgrind.sh OLD NEW      (each a commit, or "." for this working tree)
#
# Each commit is checked out into a temporary git worktree under /tmp (node_modules symlinked,
# built with tsc), and this tree's built bench/journal.bench.ts is copied into its dist. Each tree
# writes its own journals of N1 and N2 commands of the mix with its own writer, outside callgrind
# (`journal.bench.js write-journal DIR N`), so each replays the journal format it writes; under
# callgrind it then runs one `recover-journal DIR` (and `recover-journal DIR apply`) of each.
# Instructions per command = (I(N2) − I(N1)) / (N2 − N1): start-up cancels out.
# Env: CG_N1 (20000), CG_N2 (60000),
#      CG_NODE_FLAGS ("--single-threaded --predictable-gc-schedule --hash-seed=1 --random-seed=1").
set -euo pipefail

N1=${CG_N1:-20000}
N2=${CG_N2:-60000}

WORK_PREFIX=replay-callgrind
# shellcheck source=bench/callgrind-trees.sh
source "$(dirname "$0")/callgrind-trees.sh" "$@"

trees_with dist/bench/journal.bench.js

for side in old new; do
  dir=${!side}
  for n in "$N1" "$N2"; do
    (cd "$dir" && node dist/bench/journal.bench.js write-journal "$work/$side-journal.$n" "$n")
  done
done

# count NAME TREE N [apply]: writes "instructions driver-json" to $work/NAME.N
count() {
  local out="$work/$1.$3"
  (cd "$2" && valgrind --tool=callgrind --callgrind-out-file="$out.cg" node $NODE_FLAGS dist/bench/journal.bench.js recover-journal "$work/${1%%-*}-journal.$3" ${4:-} >"$out.json" 2>"$out.log")
  echo "$(sed -n 's/^summary: //p' "$out.cg") $(cat "$out.json")" >"$out"
  rm -f "$out.cg"
}

echo "replay under callgrind: OLD $1 ($(git -C "$old" rev-parse --short HEAD)), NEW $2 ($(git -C "$new" rev-parse --short HEAD))"
echo "journals of N1 $N1 and N2 $N2 commands, each tree's own; node $(node --version) $NODE_FLAGS"
for n in "$N1" "$N2"; do
  count old-recover "$old" "$n" &
  count new-recover "$new" "$n" &
  wait
  count old-apply "$old" "$n" apply &
  count new-apply "$new" "$n" apply &
  wait
done
declare -A per
for name in old-recover new-recover old-apply new-apply; do
  read -r i1 j1 <"$work/$name.$N1"
  read -r i2 j2 <"$work/$name.$N2"
  per[$name]=$(awk -v a="$i1" -v b="$i2" -v n="$((N2 - N1))" 'BEGIN { printf "%.0f", (b - a) / n }')
  echo "$name: I(N1) $i1, I(N2) $i2, instructions/command ${per[$name]}; N2 run $j2"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
echo "recover NEW/OLD: $(ratio "${per[new-recover]}" "${per[old-recover]}"); engine alone NEW/OLD: $(ratio "${per[new-apply]}" "${per[old-apply]}")"
echo "recover ÷ engine alone: OLD $(ratio "${per[old-recover]}" "${per[old-apply]}"), NEW $(ratio "${per[new-recover]}" "${per[new-apply]}")"
