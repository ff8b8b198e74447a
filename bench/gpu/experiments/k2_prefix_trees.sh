#!/usr/bin/env bash
# Here: the trees of a K2-prefix call (k2_prefix_run.sh runs them there).
#   k2_prefix_trees.sh DIR N...
# makes DIR/X, an ab_tree.sh tree of this checkout's kernels (`layer` at
# LAYER_WIDTHS, default 48) without its timed (.prof) sources, and for each
# N a copy DIR/P<N> whose fused K2 patch_k2_prefix.py cut to N stages; then
# prints the call to make there.
#   ./bench/gpu/experiments/k2_prefix_trees.sh .devrunAB 3 5 7 15
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: k2_prefix_trees.sh DIR N..." >&2; exit 2; }
HERE="$(cd "$(dirname "$0")" && pwd)"
DIR="$1"
shift
for n in "$@"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "k2_prefix_trees.sh: $n is not a stage count (1 or more)" >&2; exit 2; }
done
rm -rf "$DIR/X"
LAYER_WIDTHS="${LAYER_WIDTHS:-48}" bash "$HERE/ab_tree.sh" "$DIR" X layer
rm -f "$DIR"/X/bench/gpu/emitted/layer/*.prof.hip
trees=()
for n in "$@"; do
  rm -rf "$DIR/P$n"
  cp -r "$DIR/X" "$DIR/P$n"
  python3 "$HERE/patch_k2_prefix.py" "$DIR/P$n" "stages=$n"
  trees+=("P$n:$n")
done
du -sh "$DIR"
echo "there (carry $DIR): WIDTHS=\"${LAYER_WIDTHS:-48}\" bash bench/gpu/experiments/k2_prefix_run.sh $DIR ${trees[*]} X:0"
