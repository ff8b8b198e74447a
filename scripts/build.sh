#!/usr/bin/env bash
# Configures and builds monodc into build/ (Ninja, both cores, ccache when
# present). With target names (e.g. `build.sh monodc`) builds only those;
# with none builds everything (scripts/run-tests.sh relies on that).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${MONODC_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/monodc-ccache}"
# Paths relative to the checkout in ccache's hash, so that a fresh clone
# elsewhere (CI) hits what an earlier build of the same sources compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
LAUNCHER=()
if command -v ccache >/dev/null; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${LAUNCHER[@]}"
fi
TARGETS=()
for target in "$@"; do TARGETS+=(--target "$target"); done
cmake --build "$BUILD" -j "$(nproc)" "${TARGETS[@]}"
