#!/usr/bin/env bash
# The main job: set up, build the monodc CLI only (not the tests and
# benchmarks), then compile the default DSV41 kernels for gfx950 with a report.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${MONODC_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/build.sh" monodc
OUT="${MONODC_OUT:-$ROOT/out}"
# Launches build side by side on every core; a -j in "$@" overrides it.
"$BUILD/bin/monodc" build --arch gfx950 --out "$OUT" --emit obj -j "$(nproc)" "$@"
