#!/bin/bash
# Shared by the callgrind comparison scripts (layout-compare-callgrind.sh, replay-callgrind.sh,
# history-sink-callgrind.sh, journal-writer-callgrind.sh): built git worktrees of the commits
# compared, in a temporary directory removed on exit. Source it with WORK_PREFIX set; it sets
# `here` (this checkout), `modules` (its node_modules) and `work`, and defines build DIR, add_tree
# REF NAME, which sets $tree to a built tree of REF ("." is this checkout itself), and
# add_tree_with REF NAME FILE (the same, with a driver of this checkout copied in), and trees_with
# FILE (both commits' trees, with FILE, as $old and $new). add_tree runs
# in the calling shell, not a subshell, so that the cleanup sees every worktree it added. It checks
# that the script was given its two commits and sets NODE_FLAGS (CG_NODE_FLAGS, or the flags that
# keep a count repeatable: compilation and GC on one thread, GC sizing without wall-clock time,
# fixed seeds).

if [ $# -ne 2 ]; then
  echo "usage: $0 OLD NEW   (commits, or . for this working tree)" >&2
  exit 2
fi
NODE_FLAGS=${CG_NODE_FLAGS:-"--single-threaded --predictable-gc-schedule --hash-seed=1 --random-seed=1"}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
modules=$(readlink -f "$here/node_modules")
work=$(mktemp -d "/tmp/${WORK_PREFIX}.XXXXXX")
worktrees=()
cleanup() {
  for w in "${worktrees[@]}"; do git -C "$here" worktree remove --force "$w" >/dev/null 2>&1 || true; done
  rm -rf "$work"
  git -C "$here" worktree prune
}
trap cleanup EXIT

build() { (cd "$1" && npx tsc -p tsconfig.json) >&2; }

add_tree() {
  if [ "$1" = "." ]; then tree=$here; return; fi
  tree="$work/$2"
  git -C "$here" worktree add --detach "$tree" "$1" >&2
  worktrees+=("$tree")
  ln -s "$modules" "$tree/node_modules"
  build "$tree"
}

# add_tree_with REF NAME FILE: add_tree, with this checkout's built FILE (a path such as
# dist/bench/x.bench.js) copied into the tree, so that both trees run the same driver over their
# own code.
add_tree_with() {
  add_tree "$1" "$2"
  if [ "$tree" != "$here" ]; then cp "$here/$3" "$tree/$3"; fi
}

# trees_with FILE: builds this checkout, then sets $old and $new to built trees of the script's two
# commits ($1 and $2 of the sourcing script, kept in OLD_REF and NEW_REF), each with this
# checkout's built FILE copied in (add_tree_with).
OLD_REF=$1
NEW_REF=$2
trees_with() {
  build "$here"
  add_tree_with "$OLD_REF" old "$1"
  old=$tree
  add_tree_with "$NEW_REF" new "$1"
  new=$tree
}
