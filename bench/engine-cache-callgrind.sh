#!/bin/bash
# Where the engine's instructions miss the caches, beside its floor: valgrind's callgrind with its
# cache simulation (--cache-sim=yes: an L1 instruction cache, an L1 data cache and the last level,
# sized as this host's) over the engine core and over the floor loop of
# bench/engine-ceiling.bench.ts, per command.
#
#   bench/engine-cache-callgrind.sh [NODE FLAGS …]
#
# This checkout is built, bench/engine-drive.ts writes the engine benchmark's seeded stream to a
# file, and each side runs under callgrind at N1 and N2 rows after a warm-up of CG_WARM rows on a
# separate engine (the floor: on the same slots); per command = (count(N2) − count(N1)) / (N2 − N1),
# so start-up, loading, JIT warm-up and setup cancel out, as in layout-compare-callgrind.sh. Extra
# arguments are V8 flags for both sides (for instance --max-inlined-bytecode-size=100, to see what
# V8's inlining does to the code the engine runs). Prints, per side: instructions (Ir), L1
# instruction misses (I1mr), L1 data read and write misses (D1mr, D1mw) and last-level data misses
# (DLmr, DLmw) per command, and the engine's state hash.
# The simulation is a model, not this CPU (no L2, no prefetchers): read its counts as where the
# engine's code and data stop fitting, not as cycles.
# Env: CG_N1 (10000), CG_N2 (50000), CG_WARM (50000), CG_NODE_FLAGS (as the other callgrind scripts);
#      CG_LL (size,associativity,line of the simulated last level, e.g. 1048576,8,64 for this host's
#      L2 of 1 MiB a core: then its misses are what leaves the L2; default: valgrind's, this host's L3);
#      CG_ENGINE_TREE (a directory holding another built checkout whose engine core the engine side
#      counts, through this checkout's driver, as layout-compare-callgrind.sh does; default this one).
# About three minutes: the two sizes of one side run side by side.
set -euo pipefail

N1=${CG_N1:-10000}
N2=${CG_N2:-50000}
WARM=${CG_WARM:-50000}
NODE_FLAGS="${CG_NODE_FLAGS:-"--single-threaded --predictable-gc-schedule --hash-seed=1 --random-seed=1"} $*"
LL_FLAG=${CG_LL:+--LL=$CG_LL}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d /tmp/engine-cache.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$here" && npx tsc -p tsconfig.json) >&2
driver="$here/dist/bench/engine-drive.js"
stream="$work/stream.bin"
node "$driver" write "$stream" $(( N2 > WARM ? N2 : WARM ))

# count SIDE N ARGS…: callgrind's summary line for the driver's ARGS at N rows, into $work/SIDE.N
count() {
  local side=$1 n=$2
  shift 2
  # shellcheck disable=SC2086 # NODE_FLAGS is a list of flags
  # shellcheck disable=SC2086 # LL_FLAG is empty or one flag
  valgrind --tool=callgrind --cache-sim=yes $LL_FLAG --callgrind-out-file="$work/$side.$n.cg" node $NODE_FLAGS "$driver" "$@" "$n" >"$work/$side.$n.json" 2>"$work/$side.$n.log"
  sed -n 's/^summary: //p' "$work/$side.$n.cg" >"$work/$side.$n"
}

echo "engine and floor under callgrind's cache simulation: $(git -C "$here" rev-parse --short HEAD), engine core of ${CG_ENGINE_TREE:-this checkout}; node $(node --version) $NODE_FLAGS ${LL_FLAG:-}"
echo "stream: seed 20240601, warm-up $WARM rows, N1 $N1, N2 $N2; this host's caches (callgrind simulates L1i, L1d and the last level):"
lscpu | grep -E '^(L1d|L1i|L2|L3)' | sed 's/^/  /' || true
for side in engine floor; do
  if [ "$side" = engine ]; then args=(run "${CG_ENGINE_TREE:-$here}" "$stream" "$WARM"); else args=(ceiling "$stream" "$WARM"); fi
  count "$side" "$N1" "${args[@]}" &
  count "$side" "$N2" "${args[@]}" &
  wait
  awk -v side="$side" -v n="$((N2 - N1))" 'NR == FNR { for (i = 1; i <= NF; i++) a[i] = $i; next }
    { split("Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw", ev, " ")
      line = side ", per command:"
      for (i = 1; i <= NF; i++) if (ev[i] != "Dr" && ev[i] != "Dw" && ev[i] != "ILmr") line = line sprintf(" %s %.1f", ev[i], ($i - a[i]) / n)
      print line }' "$work/$side.$N1" "$work/$side.$N2"
  echo "  $(cat "$work/$side.$N2.json")"
done
