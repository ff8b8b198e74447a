#!/usr/bin/env bash
# The LLVM-free tests under sanitizers, each in its own build folder
# (-DMONODC_RUNTIME_ONLY=ON: the runtime library, the CPU reference, the
# device library's host tests, the fuzz targets' corpus replays; no LLVM):
#   build-asan  clang-22 -fsanitize=address,undefined -fno-sanitize-recover=undefined:
#               ctest of everything there, less the few slowest device suites
#               (ASAN_SKIP below; they run in the main build);
#   build-tsan  clang-22 -fsanitize=thread: the cache's multi-process and
#               multi-threaded tests, the session, and the device library's
#               multi-threaded host blocks (mailbox, block reduce, topk);
#   tsan-sim    (not in the default kinds: by hand) a full build (LLVM/MLIR,
#               clang-22 -fsanitize=thread, the Debian libraries uninstrumented)
#               of simulator_sweep_test, the simulator's threaded schedule
#               sweeps with all of our compiler code instrumented; its cold
#               build is too slow for CI. The main build's ctest (CI) runs the
#               same binary with the simulator alone instrumented
#               (docs/reliability.md, "Threads under TSan").
# Usage: scripts/sanitize.sh [asan|tsan]... (default: both). ccache is used
# when present (CCACHE_DIR defaults to $HOME/.cache/monodc-ccache, as in
# scripts/build.sh). docs/reliability.md says what each covers and how long
# it takes. MONODC_SANITIZE_JOBS sets the parallelism (default: nproc).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
JOBS="${MONODC_SANITIZE_JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/monodc-ccache}"
# Paths relative to the checkout in ccache's hash (-g would otherwise hash the
# folder), so a fresh clone elsewhere (CI) hits what an earlier run compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
LAUNCHER=()
if command -v ccache >/dev/null; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
KINDS=("$@")
[ ${#KINDS[@]} -gt 0 ] || KINDS=(asan tsan)

# The slowest LLVM-free tests (seconds each even in Release); the main build runs them.
ASAN_SKIP='^(DeviceGemvMma\.MatchesTheExactSumsOfTheLaunchShapes|DeviceGemvMma\.AWrongScaleOrLayoutIsCaught|DeviceGemvMfma\.Rows(64|256)K5120)$'
OWN_SEGV='^IsolatedRun\.'
# Loads the instrumented runtime library into python, which ASan did not
# start: the main build runs it.
FOREIGN_HOST='^python_package$'
# The multi-threaded and multi-process tests that TSan is for.
TSAN_TARGETS=(runtime_test DeviceMailboxTest DeviceBlockReduceTest DeviceTopkTest)
TSAN_TESTS='^(CacheRace\.|CodeObjectCache\.|CacheDirectory\.|RuntimeOnlySession\.|DeviceMailbox\.|DeviceBlockReduce\.|DeviceTopk\.)'

configure() { # folder, sanitizer flags[, runtime-only: ON (default) or OFF]
  local build="$1" flags="$2 -fno-omit-frame-pointer -g -O1"
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S "$ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= -DMONODC_RUNTIME_ONLY="${3:-ON}" \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="$2" -DCMAKE_SHARED_LINKER_FLAGS="$2" "${LAUNCHER[@]}" >/dev/null
  fi
}

status=0
for kind in "${KINDS[@]}"; do
  start=$(date +%s)
  case "$kind" in
    asan)
      build="${MONODC_ASAN_BUILD_DIR:-$ROOT/build-asan}"
      configure "$build" "-fsanitize=address,undefined -fno-sanitize-recover=undefined"
      cmake --build "$build" -j "$JOBS"
      # A report fails the test: ASan aborts, UBSan halts (no recovery), leaks count.
      asan="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
      export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
      ASAN_OPTIONS="$asan" \
        ctest --test-dir "$build" --output-on-failure -j "$JOBS" -E "$ASAN_SKIP|$OWN_SEGV|$FOREIGN_HOST" || status=1
      # Tests that crash a child with SIGSEGV on purpose and check the signal:
      # ASan's own handler would turn it into an abort.
      ASAN_OPTIONS="$asan:handle_segv=0" \
        ctest --test-dir "$build" --output-on-failure -j "$JOBS" -R "$OWN_SEGV" || status=1
      ;;
    tsan)
      build="${MONODC_TSAN_BUILD_DIR:-$ROOT/build-tsan}"
      configure "$build" "-fsanitize=thread"
      cmake --build "$build" -j "$JOBS" --target "${TSAN_TARGETS[@]}"
      TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
        ctest --test-dir "$build" --output-on-failure -j "$JOBS" -R "$TSAN_TESTS" || status=1
      ;;
    tsan-sim)
      build="${MONODC_TSAN_SIM_BUILD_DIR:-$ROOT/build-tsan-sim}"
      configure "$build" "-fsanitize=thread" OFF
      cmake --build "$build" -j "$JOBS" --target simulator_sweep_test
      TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
        "$build/bin/simulator_sweep_test" || status=1
      ;;
    *) echo "sanitize.sh: unknown kind '$kind' (asan, tsan, tsan-sim)" >&2; exit 2 ;;
  esac
  echo "sanitize.sh: $kind took $(( $(date +%s) - start )) s"
done
exit $status
