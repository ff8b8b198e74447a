#!/usr/bin/env bash
# The whole test suite: set up, build, then ctest (GoogleTest suites and lit),
# then the LLVM-free tests again under ASan + UBSan and TSan in their own
# build folders (scripts/sanitize.sh; docs/reliability.md). Both run in CI and
# locally; MONODC_SKIP_SANITIZE=1 leaves the sanitizer builds out of a local run.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${MONODC_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/build.sh"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
if [ "${MONODC_SKIP_SANITIZE:-0}" != 1 ]; then
  "$ROOT/scripts/sanitize.sh"
fi
