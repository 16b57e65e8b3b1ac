#!/bin/bash
# The engine benchmark of two builds of the project side by side: OLD and NEW are directories
# holding each tree with its dist/ built (e.g. `git archive <commit> | tar -x -C DIR`, a symlink to
# node_modules, `npx tsc -p tsconfig.json`). Three rounds, alternating, five measured runs each;
# prints each run's commands/s. Usage: bench/layout-compare.sh OLD NEW
for i in 1 2 3; do
  for tree in "$1" "$2"; do
    echo "== $tree round $i"
    node --expose-gc -e "import('$tree/dist/bench/engine.bench.js').then(m=>m.runEngineBench()).then(()=>{})" 2>&1 | grep -E "engine run [3-7]/7"
  done
done
