#!/bin/bash
# Instructions per codec operation, generated codec against the hand-written one it replaced
# (bench/baseline/codec-handwritten.ts), counted by valgrind's callgrind: for every case of
# bench/codec.bench.ts and each codec, `codec.bench.js count` runs the case's loop N1 and N2 times
# after the same warm-up; instructions per operation = (I(N2) − I(N1)) / (N2 − N1).
#
#   bench/codec-callgrind.sh          (builds this tree first)
#
# Env: CG_N1 (20000), CG_N2 (220000), CG_BUILD (1; 0: use the tree's dist/ as built),
#      CG_NODE_FLAGS ("--single-threaded --hash-seed=1 --random-seed=1").
# 7 cases × 2 sizes, the two codecs' runs side by side: 14 pairs of valgrind runs of 30–60 s.
set -euo pipefail

N1=${CG_N1:-20000}
N2=${CG_N2:-220000}
NODE_FLAGS=${CG_NODE_FLAGS:-"--single-threaded --hash-seed=1 --random-seed=1"}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/codec-callgrind.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ "${CG_BUILD:-1}" != 0 ]; then (cd "$here" && npx tsc -p tsconfig.json) >&2; fi
bench="$here/dist/bench/codec.bench.js"
CASES=7

# count CASE CODEC N: writes the instruction total to $work/CODEC.N and the case name to $work/name
count() {
  local out="$work/$2.$3"
  valgrind --tool=callgrind --callgrind-out-file="$out.cg" node $NODE_FLAGS "$bench" count "$1" "$2" "$3" >"$out.json" 2>"$out.log"
  sed -n 's/^summary: //p' "$out.cg" >"$out"
  sed -n 's/.*"case":"\([^"]*\)".*/\1/p' "$out.json" >"$work/name"
}

echo "codec under callgrind: N1 $N1, N2 $N2; node $(node --version) $NODE_FLAGS"
echo "| operation | hand-written (instructions/op) | generated (instructions/op) | generated / hand-written |"
echo "|---|---:|---:|---:|"
for c in $(seq 0 $((CASES - 1))); do
  declare -A per=()
  for n in "$N1" "$N2"; do
    count "$c" hand "$n" &
    count "$c" gen "$n" &
    wait
  done
  for codec in hand gen; do
    per[$codec]=$(awk -v a="$(cat "$work/$codec.$N1")" -v b="$(cat "$work/$codec.$N2")" -v n="$((N2 - N1))" 'BEGIN { printf "%.1f", (b - a) / n }')
  done
  name=$(cat "$work/name")
  echo "| $name | ${per[hand]} | ${per[gen]} | $(awk -v g="${per[gen]}" -v h="${per[hand]}" 'BEGIN { printf "%.3f", g / h }') |"
done
