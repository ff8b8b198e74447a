#!/usr/bin/env bash
# Here: makes one tree of a side-by-side H200 call (ab_run.sh runs it there).
#   ab_tree.sh DIR NAME MODE...
# copies what the GPU machine builds (bench, runtime, tests/reference) into
# DIR/NAME and emits MODE... there with $MONODC (default: this checkout's
# build/bin/monodc), so that the tree holds the sources of the compiler
# that MONODC was built from. A candidate that ab_run.sh checks needs
# `launches stress layer` (LAUNCHES=small keeps the carry under 64 MiB); a
# base that it only times needs `layer`. LAYER_WIDTHS as emit.sh.
#   MONODC=... ab_tree.sh .devrunAB A layer     # the base, built at its commit
#   LAUNCHES=small ab_tree.sh .devrunAB B launches stress layer
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: ab_tree.sh DIR NAME MODE..." >&2; exit 2; }
ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
DIR="$1" NAME="$2"
shift 2
MONODC="${MONODC:-$ROOT/build/bin/monodc}"
[ -x "$MONODC" ] || { echo "ab_tree.sh: no monodc at $MONODC (build it, or set MONODC)" >&2; exit 1; }
TREE="$DIR/$NAME"
rm -rf "$TREE" && mkdir -p "$TREE"
(cd "$ROOT" && tar -cf - --exclude=bench/gpu/emitted bench runtime tests/reference) | tar -x -C "$TREE"
(cd "$TREE" && MONODC="$(cd "$(dirname "$MONODC")" && pwd)/$(basename "$MONODC")" \
  bash bench/gpu/emit.sh "$@")
du -sh "$DIR"
