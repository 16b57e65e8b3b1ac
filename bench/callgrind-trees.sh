#!/bin/bash
# Shared by the callgrind comparison scripts (layout-compare-callgrind.sh,
# history-sink-callgrind.sh): built git worktrees of the commits compared, in a temporary
# directory removed on exit. Source it with WORK_PREFIX set; it sets `here` (this checkout),
# `modules` (its node_modules) and `work`, and defines build DIR and add_tree REF NAME, which sets
# $tree to a built tree of REF ("." is this checkout itself). add_tree runs in the calling shell,
# not a subshell, so that the cleanup sees every worktree it added.

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
