#!/usr/bin/env bash
# The whole test suite: set up, build, then ctest (GoogleTest suites and lit),
# then the LLVM-free tests again under ASan + UBSan and TSan in their own
# build folders (scripts/sanitize.sh), then 20 s of libFuzzer on each parser
# target (tests/fuzz/fuzz.sh; docs/reliability.md). All run in CI and
# locally; MONODC_SKIP_SANITIZE=1 leaves the sanitizer builds out of a local
# run, MONODC_SKIP_FUZZ=1 the fuzzing (MONODC_FUZZ_SECONDS sets its length).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${MONODC_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/build.sh"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
if [ "${MONODC_SKIP_SANITIZE:-0}" != 1 ]; then
  "$ROOT/scripts/sanitize.sh"
fi
if [ "${MONODC_SKIP_FUZZ:-0}" != 1 ]; then
  fuzz_start=$SECONDS
  "$ROOT/tests/fuzz/fuzz.sh" "${MONODC_FUZZ_SECONDS:-20}"
  echo "fuzz.sh: took $((SECONDS - fuzz_start)) s"
fi
