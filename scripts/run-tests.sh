#!/usr/bin/env bash
# The whole test suite: set up, build, then ctest (GoogleTest suites and lit).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${MONODC_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/build.sh"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
