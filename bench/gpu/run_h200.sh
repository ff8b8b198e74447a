#!/usr/bin/env bash
# On the GPU machine (CUDA 13, g++, no LLVM): builds the harness against the
# LLVM-free number formats and CPU reference, runs it on the emitted sources
# for each config, keeps full logs in $OUT (the programs in $BIN, so that $OUT
# holds only the few files the device tool brings back) and prints the
# tables last. LAYER_CHECK=0 and LAYER_BENCH=0 skip the layer check and benchmark; NCU_STAGES="stage ..."
# profiles those stages' own kernels under Nsight Compute (NCU_SET, default
# full; NCU_METRICS="a,b" adds metrics to it); SASS="stem ..."
# summarises the tensor-core loops of those layer sources' SASS (nvcc,
# experiments/sass_loops.py). ONLY="bench ..." runs only the named phases of those whose
# sources are there (launcher, check, pad, ffn, layers, tiny, bench, stress, sass, launches),
# e.g. a benchmark-only run of a tree that was emitted for every check.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${OUT:-/tmp/monodc-gpu}"
BIN="${BIN:-/tmp/monodc-gpu-bin}"
CUDA="${CUDA_HOME:-/usr/local/cuda}"
mkdir -p "$OUT" "$BIN"
wanted() {  # wanted PHASE: not left out by ONLY
  [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]
}
# Seconds each phase took, printed last (device time is budgeted: this says
# what a run of which modes costs).
: > "$OUT/times.log"
phase_start=$SECONDS
took() {
  echo "$1 $((SECONDS - phase_start))" >> "$OUT/times.log"
  phase_start=$SECONDS
}
# BUILD=0 reuses the programs already in $BIN (a second tree of sources, same harness).
if [ "${BUILD:-1}" = 1 ]; then
  # The harnesses build side by side (one g++ each; the machine has cores to
  # spare), each into its own log, gathered into build.log.
  link=(-L "$CUDA/lib64" -L "$CUDA/lib64/stubs" -lcuda -lnvrtc -Wl,-rpath,"$CUDA/lib64")
  reference=(-I "$ROOT/runtime/formats/include" -I "$ROOT/tests/reference/include")
  launch=(-I "$ROOT/runtime/launch/include" -I "$ROOT/runtime/keys/include" -I "$ROOT/runtime/device/include"
          -I "$CUDA/include")
  pids=()
  build() {  # build PROGRAM G++-ARGUMENTS...
    local program="$1"
    shift
    g++ -O2 -std=c++20 "$@" "${link[@]}" -o "$BIN/$program" > "$BIN/$program.build.log" 2>&1 &
    pids+=($!)
  }
  for harness in FrontHarness:front_harness LaunchCheck:launch_check; do
    build "${harness##*:}" "${reference[@]}" "${launch[@]}" "$ROOT/bench/gpu/${harness%%:*}.cpp" \
      "$ROOT/runtime/formats/NumberFormats.cpp" "$ROOT/tests/reference/Reference.cpp" \
      "$ROOT/runtime/launch/LaunchInterface.cpp"
  done
  # The layer harnesses need the manifest parser and the number formats
  # (index inputs encoded as i32/i64): SOURCE:PROGRAM.
  for harness in LayerBench:layer_bench LayerStress:layer_stress; do
    build "${harness##*:}" "${reference[@]}" "${launch[@]}" "$ROOT/bench/gpu/${harness%%:*}.cpp" \
      "$ROOT/runtime/formats/NumberFormats.cpp" "$ROOT/runtime/launch/LaunchInterface.cpp"
  done
  # The layer check builds the whole CPU reference layer (threads, no FMA
  # contraction, as the reference's own build).
  # --layers walks the model's layer map (runtime/model).
  build layer_check -ffp-contract=off -pthread "${reference[@]}" "${launch[@]}" -I "$ROOT/runtime/model/include" \
    "$ROOT/bench/gpu/LayerCheck.cpp" "$ROOT/bench/gpu/LayerCase.cpp" "$ROOT/bench/gpu/LayerDevice.cpp" \
    "$ROOT"/runtime/formats/*.cpp "$ROOT"/tests/reference/*.cpp "$ROOT/runtime/launch/LaunchInterface.cpp" \
    "$ROOT/runtime/model/LayerMap.cpp"
  failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  cat "$BIN"/*.build.log > "$OUT/build.log"
  [ "$failed" = 0 ] || { cat "$OUT/build.log"; exit 1; }
  took "build"
fi
status=0
# The launcher check (`emit.sh launcher`): the runtime library built from its
# sources on this machine (runtime-only: no LLVM), with the build id of the
# monodc that filled the cache (a runtime-only session finds only its own).
LAUNCHER="$ROOT/bench/gpu/emitted/launcher"
if [ -d "$LAUNCHER" ] && { wanted launcher || wanted decode; }; then
  includes=()
  for d in runtime/formats/include tests/reference/include runtime/launch/include runtime/keys/include runtime/device/include \
           runtime/target/include runtime/model/include \
           runtime/cache/include runtime/codeobject/include runtime/api/include \
           runtime/backends/nvrtc/include runtime/backends/hiprtc/include; do
    includes+=(-I "$ROOT/$d")
  done
  runtime_library=("$ROOT/runtime/formats/NumberFormats.cpp" "$ROOT/tests/reference/Reference.cpp"
    "$ROOT"/runtime/api/*.cpp "$ROOT"/runtime/keys/*.cpp "$LAUNCHER/BuildId.cpp" "$ROOT"/runtime/cache/*.cpp
    "$ROOT"/runtime/codeobject/*.cpp "$ROOT"/runtime/launch/*.cpp "$ROOT"/runtime/backends/nvrtc/*.cpp
    "$ROOT"/runtime/target/*.cpp "$ROOT"/runtime/model/*.cpp "$ROOT"/runtime/backends/hiprtc/*.cpp)
  # The launcher check and the decode loop (DecodeLoop.cpp), side by side;
  # a program that does not build is removed, so that none runs stale.
  for program in LauncherCheck:launcher_check DecodeLoop:decode_loop; do
    { g++ -O2 -std=c++20 "${includes[@]}" -I "$CUDA/include" "$ROOT/bench/gpu/${program%%:*}.cpp" \
        "${runtime_library[@]}" -L "$CUDA/lib64" -L "$CUDA/lib64/stubs" -lcuda -lnvrtc \
        -Wl,-rpath,"$CUDA/lib64" -ldl -pthread \
        -o "$BIN/${program##*:}" > "$OUT/${program##*:}_build.log" 2>&1 || rm -f "$BIN/${program##*:}"; } &
  done
  wait
  cp "$OUT/launcher_check_build.log" "$OUT/launcher_build.log"
  if wanted launcher; then
    if [ -x "$BIN/launcher_check" ]; then
      stems=()
      # ratio=2: the compress ratio `monodc simulate` dumps k2 and
      # attention_back at (the others are one key at every ratio).
      for launch in k1 attention_back moe; do
        stems+=("$launch.tiny.r6.tp2=model=tiny launch=$launch arch=sm_90 tp=2 rows=6 ratio=2 grid=132 backend=nvrtc")
      done
      # Every rank of a TP launch on this GPU: 66 CTAs each at TP 2, 33 at TP 4.
      for tp in 2 4; do
        for launch in allreduce k2; do
          stems+=("$launch.tiny.r6.tp$tp=model=tiny launch=$launch arch=sm_90 tp=$tp rows=6 ratio=2 grid=$((132 / tp)) backend=nvrtc")
        done
      done
      # K1 then K2 as one layer step of the library (both ranks, grid 66).
      stems+=(--layer-step "k1.tiny.r6.tp2=model=tiny launch=k1 arch=sm_90 tp=2 rows=6 grid=66 backend=nvrtc"
              "k2.tiny.r6.tp2=model=tiny launch=k2 arch=sm_90 tp=2 rows=6 ratio=2 grid=66 backend=nvrtc")
      "$BIN/launcher_check" "$LAUNCHER/cache" "$LAUNCHER/sim" "${stems[@]}" > "$OUT/launcher.log" 2>&1 || status=1
    else
      status=1
      cp "$OUT/launcher_build.log" "$OUT/launcher.log"
    fi
    echo "== launches through the runtime library's C ABI and CUDA-driver launcher =="
    tail -n 40 "$OUT/launcher.log"
    took "launcher (build and check)"
  fi
  # Phase `decode`: DECODE_LAYERS layer steps a rank (default 4), DECODE_STEPS
  # steps alternating rows 6 and 48 (default 10000) in one graph (decode.log).
  if wanted decode; then
    if [ -x "$BIN/decode_loop" ]; then
      "$BIN/decode_loop" "$LAUNCHER/cache" "$LAUNCHER/sim" "${DECODE_LAYERS:-4}" "${DECODE_STEPS:-10000}" \
        > "$OUT/decode.log" 2>&1 || status=1
    else
      status=1
      cp "$OUT/decode_loop_build.log" "$OUT/decode.log"
    fi
    echo "== a decode loop of layer steps through the C ABI =="
    cat "$OUT/decode.log"
    took "decode loop"
  fi
fi
# The launch checks run when `emit.sh launches` wrote their inputs; they and
# the layer checks come before the benchmark, so that a run cut short by its
# time limit still has the checks that decide whether a change lands.
if [ -d "$ROOT/bench/gpu/emitted/sim" ] && wanted launches; then
  stems=$(cd "$ROOT/bench/gpu/emitted/sim" && ls *.manifest | sed 's/\.manifest$//')
  "$BIN/launch_check" "$ROOT/bench/gpu/emitted/sim" $stems > "$OUT/launches.log" 2>&1 || status=1
else
  echo "no launch checks (run emit.sh launches for them; ONLY, where given, names launches)" > "$OUT/launches.log"
fi
took "launch checks"
# The whole layer against the CPU reference: full size on the `emit.sh layer`
# sources, tiny on the `emit.sh stress` ones.
# CHECK_WIDTHS: default the rows of 6 and 48 that the tree has sources for,
# else every width it has (a tree of rows 24 and 48 alone checks rows 48).
# LAYER_TP: the TP degrees of the layer check and benchmark (default: those
# the tree has K1 sources for, TP 2 where it has none); TP 2's logs are
# layer_check.log and layer.log, another's layer_check.tp<TP>.log and
# layer.tp<TP>.log.
# emit.sh names them <launch>.dsv41.sm_90.r<W>.tp<TP>.grid<132/TP>.* (monodc
# build: the ranks share the 132 SMs).
layer_widths() {  # layer_widths TP [LAUNCH [TAG]]: widths with a manifest of LAUNCH (default k1), TAG (.c1) before the grid
  local tp="$1" launch="${2:-k1}" tag="${3:-}" grid=$((132 / $1))
  { (cd "$ROOT/bench/gpu/emitted/layer" && ls $launch.dsv41.sm_90.r*.tp$tp$tag.grid$grid.manifest) 2>/dev/null || true; } |
    sed "s/^$launch\.dsv41\.sm_90\.r\([0-9]*\)\.tp$tp${tag//./\\.}\.grid$grid\.manifest\$/\1/" | sort -n
}
checked_widths() {  # checked_widths TP [LAUNCH [TAG]]: CHECK_WIDTHS, else 6 and 48 of layer_widths, else all it has
  local all picked
  all="$(layer_widths "$@" | tr '\n' ' ')"
  picked="${CHECK_WIDTHS:-$(echo $all | tr ' ' '\n' | { grep -x -E '6|48' || true; } | tr '\n' ' ')}"
  echo ${picked:-$all}
}
layer_tps="${LAYER_TP:-$( { (cd "$ROOT/bench/gpu/emitted/layer" && ls k1.dsv41.sm_90.r*.tp*.grid*.manifest) 2>/dev/null || true; } |
  sed 's/^.*\.tp\([0-9]*\)\.grid[0-9]*\.manifest$/\1/' | sort -un | tr '\n' ' ')}"
layer_tps="$(echo ${layer_tps:-2})"
tp_log() {  # tp_log NAME TP: NAME.log for TP 2, else NAME.tp<TP>.log
  [ "$2" = 2 ] && echo "$OUT/$1.log" || echo "$OUT/$1.tp$2.log"
}
if [ -d "$ROOT/bench/gpu/emitted/layer" ] && [ "${LAYER_CHECK:-1}" = 1 ] && wanted check; then
  for tp in $layer_tps; do
    log="$(tp_log layer_check "$tp")"
    check_widths="$(checked_widths "$tp")"
    if [ -z "$check_widths" ]; then
      echo "layer check: no K1 + K2 sources of TP $tp in emitted/layer (emit.sh layer)" > "$log"
      status=1
    else
      "$BIN/layer_check" "$ROOT/bench/gpu/emitted/layer" dsv41 "$tp" $check_widths > "$log" 2>&1 || status=1
    fi
    echo "== a whole layer against the CPU reference (K1 + K2, TP $tp on one GPU), dsv41, rows ${check_widths:-none} =="
    cat "$log"
    took "layer check, dsv41, TP $tp"
  done
fi
# Padded steps (phase `pad`): CHECK_PAD="W:P ..." checks width W with its
# last P rows pad rows, the real rows against the reference of the real rows
# alone (layer_pad_check.log, layer_pad_check.tp<TP>.log); default 8:2 and
# 48:6 where the tree has those widths.
if [ -d "$ROOT/bench/gpu/emitted/layer" ] && [ "${LAYER_CHECK:-1}" = 1 ] && wanted pad; then
  for tp in $layer_tps; do
    log="$(tp_log layer_pad_check "$tp")"
    : > "$log"
    for spec in ${CHECK_PAD:-8:2 48:6}; do
      width="${spec%%:*}" pads="${spec#*:}"
      layer_widths "$tp" | grep -qx "$width" || continue
      "$BIN/layer_check" "$ROOT/bench/gpu/emitted/layer" dsv41 "$tp" --pad "$pads" "$width" >> "$log" 2>&1 || status=1
    done
    echo "== padded steps against the CPU reference of their real rows (K1 + K2, TP $tp), dsv41, ${CHECK_PAD:-8:2 48:6} =="
    cat "$log"
    took "padded layer check, dsv41, TP $tp"
  done
fi
# The FFN launch (emit.sh layer with LAYER_FFN=1) against the reference FFN
# half at full size, then timed fused against its stage kernels, every TP the
# tree has it for (ffn_check.log, ffn_check.tp<TP>.log).
if [ -d "$ROOT/bench/gpu/emitted/layer" ] && [ "${LAYER_CHECK:-1}" = 1 ] && wanted ffn; then
  for tp in $layer_tps; do
    ffn_widths="$(echo $(layer_widths "$tp" ffn))"
    [ -n "$ffn_widths" ] || continue
    log="$(tp_log ffn_check "$tp")"
    "$BIN/layer_check" "$ROOT/bench/gpu/emitted/layer" dsv41 "$tp" --ffn $ffn_widths > "$log" 2>&1 || status=1
    echo "== the FFN launch against the reference FFN half (TP $tp on one GPU), dsv41, rows $ffn_widths =="
    cat "$log"
    took "FFN launch check and timing, dsv41, TP $tp"
  done
fi
# Layers STRETCH (default 18-22: K1 + K2 at compress ratio 2 twice, the FFN
# launch, K1 + K2 at ratio 1 twice) in a row (phase `layers`, emit.sh
# layers): one step, the GPU's outputs of each layer the next layer's
# inputs, each layer against the CPU reference on those inputs; at the
# layer check's widths (CHECK_WIDTHS) that have a K2 of ratio 1
# (layers_check.log, layers_check.tp<TP>.log).
if [ -d "$ROOT/bench/gpu/emitted/layer" ] && [ "${LAYER_CHECK:-1}" = 1 ] && wanted layers; then
  for tp in $layer_tps; do
    [ -n "$(layer_widths "$tp" k2 .c1)" ] || continue
    log="$(tp_log layers_check "$tp")"
    stretch_widths="$(checked_widths "$tp" k2 .c1)"
    "$BIN/layer_check" "$ROOT/bench/gpu/emitted/layer" dsv41 "$tp" --layers "${STRETCH:-18-22}" $stretch_widths \
      > "$log" 2>&1 || status=1
    echo "== layers ${STRETCH:-18-22} in a row, each against the CPU reference on the GPU's inputs (TP $tp on one GPU), dsv41, rows $stretch_widths =="
    cat "$log"
    took "multi-layer check ${STRETCH:-18-22}, dsv41, TP $tp"
  done
fi
if [ -d "$ROOT/bench/gpu/emitted/stress" ] && wanted tiny; then
  "$BIN/layer_check" "$ROOT/bench/gpu/emitted/stress" tiny 2 6 48 > "$OUT/layer_check.tiny.log" 2>&1 || status=1
  echo "== a whole layer against the CPU reference (K1 + K2, TP 2 on one GPU), tiny =="
  cat "$OUT/layer_check.tiny.log"
  took "layer check, tiny"
fi
# The race stress runs when `emit.sh stress` wrote its sources.
if [ -d "$ROOT/bench/gpu/emitted/stress" ] && wanted stress; then
  "$BIN/layer_stress" "$ROOT/bench/gpu/emitted/stress" tiny 2 "${STRESS_REPLAYS:-100000}" 6 48 \
    > "$OUT/stress.log" 2>&1 || status=1
  echo "== race stress, K1 + K2 (tiny, TP 2) =="
  cat "$OUT/stress.log"
  took "race stress (${STRESS_REPLAYS:-100000} replays)"
fi
# The layer benchmark runs when `emit.sh layer` wrote its sources.
if [ -d "$ROOT/bench/gpu/emitted/layer" ] && [ "${LAYER_BENCH:-1}" = 1 ] && wanted bench; then
  # Where the sources have stage timers, each width's profiled steps also
  # go to a Chrome/Perfetto trace, gzipped (trace.tp<TP>.r<W>.json.gz:
  # Perfetto and chrome://tracing open it as it is); BENCH_TRACE= writes none.
  for tp in $layer_tps; do
    log="$(tp_log layer "$tp")"
    BENCH_TRACE="${BENCH_TRACE-$OUT}" env -u NCU_STAGES "$BIN/layer_bench" "$ROOT/bench/gpu/emitted/layer" dsv41 "$tp" "${LAYERS:-4}" ${WIDTHS:-6 12 24 48} \
      > "$log" 2>&1 || status=1
    for trace in "$OUT"/trace.*.json; do
      [ -f "$trace" ] && { gzip -f "$trace" || true; }
    done
    echo "== a whole layer (K1 + K2, TP $tp on one GPU), dsv41 =="
    cat "$log"
    took "layer benchmark, TP $tp (widths ${WIDTHS:-6 12 24 48})"
  done
fi
# Nsight Compute on the named stages' own kernels (rank 0, one layer's
# weights), when NCU_STAGES names them: details in ncu.log.
if [ -d "$ROOT/bench/gpu/emitted/layer" ] && [ -n "${NCU_STAGES:-}" ]; then
  . "$ROOT/bench/gpu/find_ncu.sh"
  NCU="$(find_ncu)"
  if [ -z "$NCU" ]; then
    echo "no ncu on this machine" > "$OUT/ncu.log"
  else
    # The report is kept so that its SASS page (each instruction's samples
    # by stall reason: where the warps wait) can be printed from it too.
    NCU_STAGES="$NCU_STAGES" timeout "${NCU_TIMEOUT:-200}" "$NCU" --profile-from-start off \
      --clock-control none --set "${NCU_SET:-full}" ${NCU_METRICS:+--metrics "$NCU_METRICS"} --import-source no -f -o "$BIN/ncu" "$BIN/layer_bench" \
      "$ROOT/bench/gpu/emitted/layer" dsv41 2 1 ${NCU_WIDTHS:-6 48} > "$OUT/ncu.log" 2>&1 || status=1
    if [ -f "$BIN/ncu.ncu-rep" ]; then
      "$NCU" --import "$BIN/ncu.ncu-rep" --page details >> "$OUT/ncu.log" 2>&1 || status=1
      "$NCU" --import "$BIN/ncu.ncu-rep" --page source --csv --print-source sass \
        > "$OUT/ncu_sass.csv" 2>&1 || true
      # Stall samples by stage function of the fused kernels named, and of
      # each unfused stage kernel profiled (its first width: the page names
      # no functions, ncu_stalls.py finds them by the body's calls).
      widths=(${NCU_WIDTHS:-6 48})
      layer="$ROOT/bench/gpu/emitted/layer"
      : > "$OUT/ncu_stalls.txt"
      for launch in k1 k2; do
        stem="$layer/$launch.dsv41.sm_90.r${widths[0]}.tp2.grid66"
        if [[ " $NCU_STAGES " == *" mono_$launch "* ]]; then
          python3 "$ROOT/bench/gpu/experiments/ncu_stalls.py" "$OUT/ncu_sass.csv" "mono_$launch" "$stem.hip" \
            >> "$OUT/ncu_stalls.txt" 2>&1 || status=1
        fi
        for kernel in $(grep -oE "\(mono_${launch}_s[0-9]+\)" "$OUT/ncu.log" | tr -d '()' | sort -u); do
          python3 "$ROOT/bench/gpu/experiments/ncu_stalls.py" "$OUT/ncu_sass.csv" "$kernel" "$stem.unfused.hip" \
            >> "$OUT/ncu_stalls.txt" 2>&1 || status=1
        done
      done
    fi
  fi
  echo "== Nsight Compute: $NCU_STAGES (ncu.log) =="
  grep -E "^ncu: |^==PROF==|Duration|DRAM Throughput|Memory Throughput${NCU_METRICS:+|${NCU_METRICS//,/|}}" "$OUT/ncu.log" | head -n 80
  [ ! -f "$OUT/ncu_stalls.txt" ] || cat "$OUT/ncu_stalls.txt"
  took "Nsight Compute"
fi
# What the tensor-core loops issue (SASS="k2.dsv41.sm_90.r48.tp2.grid66 ..." names
# `emit.sh layer` sources): nvcc builds each with the harness's nvrtc
# options, and sass_loops.py summarises its SASS, loop by loop (sass.log).
if [ -n "${SASS:-}" ] && wanted sass; then
  : > "$OUT/sass.log"
  for stem in $SASS; do
    source="$ROOT/bench/gpu/emitted/layer/$stem.hip"
    echo "== $stem" >> "$OUT/sass.log"
    if "$CUDA/bin/nvcc" -cubin -arch=sm_90 -std=c++17 --fmad=false -x cu "$source" -o "$BIN/$stem.cubin" \
         >> "$OUT/sass.log" 2>&1; then
      "$CUDA/bin/cuobjdump" -sass "$BIN/$stem.cubin" | python3 "$ROOT/bench/gpu/experiments/sass_loops.py" - \
        >> "$OUT/sass.log" 2>&1 || status=1
    else
      status=1
    fi
  done
  echo "== tensor-core loops (sass.log) =="
  cat "$OUT/sass.log"
  took "SASS loops ($SASS)"
fi
for config in ${CONFIGS:-tiny dsv41}; do
  "$BIN/front_harness" "$ROOT/bench/gpu/emitted" "$config" > "$OUT/front.$config.log" 2>&1 || status=1
done
took "attention-front harness (configs ${CONFIGS:-tiny dsv41})"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1 || true
echo "== every launch against the simulator =="
cat "$OUT/launches.log"
for config in ${CONFIGS:-tiny dsv41}; do
  echo "== attention front, config $config =="
  sed -n '/^device/p;/^device-to-device/p;/^check /,$p' "$OUT/front.$config.log"
  grep -q "front_harness: error" "$OUT/front.$config.log" && grep "front_harness: error" "$OUT/front.$config.log"
done
echo "== seconds a phase (of ${SECONDS} s in all) =="
awk '{ t = $NF; $NF = ""; printf "%6d  %s\n", t, $0 }' "$OUT/times.log"
exit $status
