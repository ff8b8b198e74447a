#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-22, -fsanitize=fuzzer,address,undefined,
# the runtime libraries instrumented too) in their own folder and fuzzes each
# for a bounded time, starting from its seed corpus.
#   tests/fuzz/fuzz.sh [SECONDS] [TARGET...]     (default 60 s, every target)
# Targets: build_key msgpack code_object cache_entry launch_interface (the
# default), and mlir (the .mlir input of monodc-opt; only when named).
# mlir needs the compiler: it is built in its own full (not runtime-only)
# folder, $ROOT/build-fuzz-mlir (MONODC_FUZZ_MLIR_BUILD_DIR), with our code
# instrumented (harness, mono dialect, analysis, passes: -O1, asserts on) and
# the Debian LLVM/MLIR libraries as they are, uninstrumented.
# New inputs go to $BUILD/corpus/<target> (not the repository); a crash is
# written to $BUILD/artifacts/<target>/ and the script fails: fix the parser,
# then keep the input in tests/fuzz/regressions/<target>/, which ctest replays
# (fuzz_<target>_corpus). MONODC_FUZZ_BUILD_DIR overrides $ROOT/build-fuzz.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${MONODC_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
SECONDS_EACH="${1:-60}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(build_key msgpack code_object cache_entry launch_interface)
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/monodc-ccache}"
LAUNCHER=()
if command -v ccache >/dev/null; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
RUNTIME_TARGETS=()
MLIR=0
for t in "${TARGETS[@]}"; do
  if [ "$t" = mlir ]; then MLIR=1; else RUNTIME_TARGETS+=("$t"); fi
done
if [ ${#RUNTIME_TARGETS[@]} -gt 0 ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMONODC_RUNTIME_ONLY=ON \
      -DMONODC_FUZZ=ON -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DCMAKE_C_FLAGS="$FLAGS" -DCMAKE_CXX_FLAGS="$FLAGS" "${LAUNCHER[@]}" >/dev/null
  fi
  cmake --build "$BUILD" -j "$(nproc)" --target "${RUNTIME_TARGETS[@]/#/fuzz_}"
fi
MLIR_BUILD="${MONODC_FUZZ_MLIR_BUILD_DIR:-$ROOT/build-fuzz-mlir}"
if [ $MLIR = 1 ]; then
  # No CMAKE_BUILD_TYPE: -O1 without -DNDEBUG, so asserts (ours and MLIR's
  # inline ones, cast<> among them) stay on in the instrumented code.
  if [ ! -f "$MLIR_BUILD/build.ninja" ]; then
    cmake -S "$ROOT" -B "$MLIR_BUILD" -G Ninja -DCMAKE_BUILD_TYPE= -DMONODC_FUZZ=ON \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DCMAKE_C_FLAGS="$FLAGS -O1" -DCMAKE_CXX_FLAGS="$FLAGS -O1" "${LAUNCHER[@]}" >/dev/null
  fi
  cmake --build "$MLIR_BUILD" -j "$(nproc)" --target fuzz_mlir
fi
status=0
for t in "${TARGETS[@]}"; do
  dir="$BUILD"
  extra=()
  if [ "$t" = mlir ]; then dir="$MLIR_BUILD"; extra=(-dict="$ROOT/tests/fuzz/mlir.dict" -timeout=30); fi
  mkdir -p "$dir/corpus/$t" "$dir/artifacts/$t"
  echo "== fuzz_$t: ${SECONDS_EACH} s"
  seeds=("$ROOT/tests/fuzz/corpus/$t")
  [ -d "$ROOT/tests/fuzz/regressions/$t" ] && seeds+=("$ROOT/tests/fuzz/regressions/$t")
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      "$dir/bin/fuzz_$t" "$dir/corpus/$t" "${seeds[@]}" -max_total_time="$SECONDS_EACH" \
      -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t/" "${extra[@]}" \
      >"$dir/artifacts/$t.log" 2>&1; then
    status=1
    echo "fuzz_$t FAILED: see $dir/artifacts/$t.log and $dir/artifacts/$t/"
    grep -E "ERROR|runtime error|invariant|SUMMARY|Assertion" "$dir/artifacts/$t.log" | head -5 || true
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss|^Done" "$dir/artifacts/$t.log" || true
  grep -E "cov: [0-9]+" "$dir/artifacts/$t.log" | tail -1 || true
done
exit $status
