#!/usr/bin/env bash
# Emits what the GPU harnesses run into bench/gpu/emitted (carried to the GPU
# machine, not committed), cleared first:
#   emit.sh [MODE...]   (no mode: front launches)
# `front` the sm_90 sources, unfused baselines and manifests of the attention
# front at every width; `launches` launches simulated on random inputs, for
# the GPU to match (emitted/sim); `moe16` (once `rings`, still accepted) the same for the moe launch of
# config moe16 (DSV41 dims, 16 experts), whose routed GEMVs take the paths
# of the full size (sm_90's tensor cores), with its scratch regions (--dump-scratch); `layer` K1 and K2 of the full config at
# TP 2 (66 CTAs a rank: two ranks share the 132 SMs; LAYER_TP="2 4" adds TP 4
# at 33 CTAs a rank) with their unfused
# baselines and copies with per-stage timers (monodc build --stage-timers), for the
# layer benchmark and the layer check (emitted/layer; LAYER_WIDTHS, default
# "6 12 24 48"); `stress` K1 and K2 of config tiny at TP 2 (grid 66) for rows
# 6 and 48, fused only, for the race stress of the whole layer
# (LayerStress.cpp) and the tiny layer check (emitted/stress); `layers` K1,
# K2 at compress ratios 2 and 1 (ratio 1's files named `.c1`) and the FFN
# launch of the full config, fused only, for the multi-layer check
# (layer_check --layers; emitted/layer, LAYER_WIDTHS and LAYER_TP as
# `layer`); `launcher`
# sm_90 cubins of config tiny's K1, attention back and moe launches (rows 6,
# TP 2) built with nvrtc here into a code-object cache, the simulator's
# dumps of the same launches and this build's BuildId.cpp, for the launcher
# check (LauncherCheck.cpp: the runtime library's C ABI and its CUDA-driver
# launcher, built there runtime-only; emitted/launcher).
# What travels is capped at 64 MiB. As this script printed them on
# 2026-12-07: `launches` alone 61 MiB, `moe16` 47 MiB, `layer` 10 MiB (its
# default 4 widths), `launcher` 18 MiB, `front` 3 MiB, `stress` 2 MiB,
# `layers` 5 MiB (widths 6 and 48, TP 2 and 4); LAUNCHES=small takes
# `launches` down to 20 MiB (see the end).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MONODC="${MONODC:-$ROOT/build/bin/monodc}"
OUT="$ROOT/bench/gpu/emitted"
MODES=("$@")
[ ${#MODES[@]} -gt 0 ] || MODES=(front launches)
for mode in "${MODES[@]}"; do
  case "$mode" in
    front | launches | moe16 | rings | layer | layers | stress | launcher) ;;
    *) echo "emit.sh: unknown mode '$mode' (modes: front, launches, moe16, layer, layers, stress, launcher)" >&2; exit 2 ;;
  esac
done
case "${PROFILE:-calls}" in
  calls | spans) ;;
  *) echo "emit.sh: PROFILE=$PROFILE is neither calls nor spans" >&2; exit 2 ;;
esac
rm -rf "$OUT" && mkdir -p "$OUT"

# emit_sm90 DIR CONFIG ROWS TP LAUNCH [OPTION...]: LAUNCH at TP ranks with
# 132 / TP CTAs a rank (the ranks share the 132 SMs of one GPU), sm_90 HIP
# source and manifest, into $OUT/DIR.
emit_sm90() {
  local dir="$1" config="$2" rows="$3" tp="$4" launch="$5"
  shift 5
  "$MONODC" build --arch sm_90 --config "$config" --rows "$rows" --tp "$tp" --grid $((132 / tp)) \
    --emit hip "$@" --launch "$launch" --out "$OUT/$dir" > /dev/null
}

# emit_k1_k2 DIR CONFIG "ROWS..." TP [OPTION...]: K1 and K2 (emit_sm90).
emit_k1_k2() {
  local dir="$1" config="$2" widths="$3" tp="$4"
  shift 4
  for rows in $widths; do
    for launch in k1 k2; do
      emit_sm90 "$dir" "$config" "$rows" "$tp" "$launch" "$@"
    done
  done
}

emit_layer() {
  local tp
  for tp in ${LAYER_TP:-2}; do
    emit_k1_k2 layer dsv41 "${LAYER_WIDTHS:-6 12 24 48}" "$tp" --unfused
    # Stage timers in the fused kernel and in the unfused baseline alike
    # (monodc build --stage-timers: .prof.hip, .unfused.prof.hip and what
    # each stage reads, .prof.reads): layer_bench sets their steps side by
    # side. PROFILE=spans: stage spans only, no timers around the calls
    # inside, which slow the unfused baseline more.
    emit_k1_k2 layer dsv41 "${LAYER_WIDTHS:-6 12 24 48}" "$tp" --unfused --stage-timers="${PROFILE:-calls}"
    # LAYER_FFN=1: the FFN launch too (fused and unfused), for layer_check
    # --ffn, which takes the layer's dims from the K1 and K2 manifests.
    if [ "${LAYER_FFN:-0}" = 1 ]; then
      for rows in ${LAYER_WIDTHS:-6 12 24 48}; do
        emit_sm90 layer dsv41 "$rows" "$tp" ffn --unfused
      done
    fi
  done
}

# The launches of a stretch of the layer map (layer_check --layers): K1, the
# K2 of each compress ratio the backbone layers have (2 and 1: `monodc
# layers`), the FFN launch; fused only, beside `layer`'s files when both are
# emitted.
emit_layers() {
  local tp rows
  for tp in ${LAYER_TP:-2}; do
    emit_k1_k2 layer dsv41 "${LAYER_WIDTHS:-6 12 24 48}" "$tp"
    for rows in ${LAYER_WIDTHS:-6 12 24 48}; do
      emit_sm90 layer dsv41 "$rows" "$tp" k2 --ratio 1
      emit_sm90 layer dsv41 "$rows" "$tp" ffn
    done
  done
}

emit_front() {
  for config in tiny dsv41; do
    for rows in 6 12 24 48; do
      "$MONODC" build --arch sm_90 --config "$config" --rows "$rows" --emit hip --unfused \
        --launch attention_front --out "$OUT" > /dev/null
    done
  done
}

emit_launches() {
  # config rows TP: launches. At full size only the attention back fits (the
  # routed experts alone are 2.6 GB a rank).
  for spec in "tiny 6 2: k1 attention_back moe k2 ffn allreduce" "tiny 48 2: k1 k2" \
              "dsv41 6 4: attention_back"; do
    read -r config rows tp <<< "${spec%%:*}"
    for launch in ${spec#*:}; do
      # The moe launch's scratch too (124 KiB): its routed experts are about
      # 1% of moe_out with these inputs, within the stage bounds a wrong
      # one could hide in; routed_hq and routed_down show them whole.
      scratch=()
      [ "$launch" = moe ] && scratch=(--dump-scratch)
      "$MONODC" simulate --config "$config" --rows "$rows" --tp "$tp" --launch "$launch" \
        --schedules 2 --dump "$OUT/sim" "${scratch[@]}" > /dev/null
    done
  done
}

# The launcher check's inputs. A runtime-only build finds a cache entry only
# under its own build id, so the one of this monodc travels with them.
# Launches with peer memory (TP 2: both ranks on this one GPU) are built for
# 66 CTAs, half the SMs each (K1 too, and both at rows 48, for the layer
# steps of K1 then K2 and the decode loop),
# at TP 4 for 33; the others for the arch's grid.
emit_launcher() {
  local dir="$OUT/launcher" launches="k1 attention_back moe" tp_launches="allreduce k2"
  mkdir -p "$dir"
  if ! { "$MONODC" matrix --cache "$dir/cache" --config tiny --arch sm_90 --launch "${launches// /,}" \
           --rows 6 --tp 2 --backend nvrtc &&
         "$MONODC" matrix --cache "$dir/cache" --config tiny --arch sm_90 --launch "${tp_launches// /,},k1" \
           --rows 6,48 --tp 2 --grid 66 --backend nvrtc &&
         "$MONODC" matrix --cache "$dir/cache" --config tiny --arch sm_90 --launch "${tp_launches// /,}" \
           --rows 6 --tp 4 --grid 33 --backend nvrtc; } > "$dir/matrix.log" 2>&1; then
    cat "$dir/matrix.log" >&2
    echo "emit.sh: the launcher mode builds cubins with nvrtc here (CUDA_HOME or libnvrtc on the loader path)" >&2
    exit 1
  fi
  for launch in $launches $tp_launches; do
    "$MONODC" simulate --config tiny --rows 6 --tp 2 --launch "$launch" --schedules 2 \
      --dump "$dir/sim" > /dev/null
  done
  for launch in $tp_launches; do
    "$MONODC" simulate --config tiny --rows 6 --tp 4 --launch "$launch" --schedules 2 \
      --dump "$dir/sim" > /dev/null
  done
  # The decode loop's inputs, sized for its widest step.
  for launch in k1 k2; do
    "$MONODC" simulate --config tiny --rows 48 --tp 2 --launch "$launch" --schedules 2 \
      --dump "$dir/sim" > /dev/null
  done
  cp "$(dirname "$MONODC")/../runtime/keys/BuildId.cpp" "$dir/BuildId.cpp"
}

for mode in "${MODES[@]}"; do
  case "$mode" in
    front) emit_front ;;
    launcher) emit_launcher ;;
    launches) emit_launches ;;
    moe16 | rings)
      # The moe launch at DSV41's dims with 16 experts (config moe16), TP 4:
      # routed.ug and routed.down run as at full size (the MXFP4 tensor-core
      # path; it once ran weight rings, hence the old name `rings`), and
      # the launch check compares the scratch they write (routed_hq,
      # routed_down) with the simulator's.
      "$MONODC" simulate --config moe16 --rows 6 --tp 4 --launch moe --schedules 2 \
        --dump "$OUT/sim" --dump-scratch > /dev/null ;;
    layer) emit_layer ;;
    layers) emit_layers ;;
    stress) emit_k1_k2 stress tiny "6 48" 2 ;;
  esac
done
# LAUNCHES=small leaves out the largest launch-check inputs (the dsv41
# attention back, the tiny FFN and K2 at rows 48), so that `launches`
# travels together with `layer` and `stress`.
if [ "${LAUNCHES:-all}" = small ] && [ -d "$OUT/sim" ]; then
  rm -f "$OUT"/sim/attention_back.dsv41.* "$OUT"/sim/ffn.tiny.* "$OUT"/sim/k2.tiny.r48.*
fi
mib=$(du -sm "$OUT" | cut -f1)
echo "emit.sh: $mib MiB in $OUT"
if [ "$mib" -gt 60 ]; then
  echo "emit.sh: more than the 64 MiB a device run carries with the rest of the tree;" \
       "emit fewer modes, or LAUNCHES=small with launches" >&2
fi
