#!/usr/bin/env bash
# There (the GPU machine): where the fused K2 gains or loses against the
# unfused one, without timers. Each tree NAME:N of DIR is an ab_tree.sh tree
# (`layer`, no .prof sources) whose fused K2 patch_k2_prefix.py cut to its
# first N stages (N=0: the whole K2), as k2_prefix_trees.sh makes them here.
# layer_bench runs it with K2_PREFIX=N, so that "K2 alone" compares the
# first N stages fused and unfused, cold weights. The first tree builds the
# harness (its bench/ must know K2_PREFIX), the others reuse it. WIDTHS as
# run_h200.sh (default 48).
#   run: bash bench/gpu/experiments/k2_prefix_run.sh .devrunAB P3:3 P5:5 P7:7 P15:15 X:0   (carry .devrunAB)
set -uo pipefail
. "$(dirname "$0")/out_archive.sh"
[ $# -ge 2 ] || { echo "usage: k2_prefix_run.sh DIR NAME:N..." >&2; exit 2; }
DIR="$(cd "$1" && pwd)"
shift
OUT="${OUT:?k2_prefix_run.sh writes its logs under \$OUT}"
build=1
for tree in "$@"; do
  name="${tree%%:*}" stages="${tree##*:}"
  prefix=()
  [ "$stages" != 0 ] && prefix=(K2_PREFIX="$stages")
  (cd "$DIR/$name" && env OUT="$OUT/$name" CONFIGS=" " WIDTHS="${WIDTHS:-48}" LAYER_CHECK=0 \
    ONLY=bench BUILD=$build "${prefix[@]}" bash bench/gpu/run_h200.sh > "$OUT/$name.log" 2>&1)
  echo "== $name (K2 stages: ${stages/#0/all}): rc $?"
  grep -E "^ *[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x|K2_PREFIX|rror" "$OUT/$name.log" | head -5
  archive_into_out "$name"
  build=0
done
