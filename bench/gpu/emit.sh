#!/usr/bin/env bash
# Emits what the GPU harnesses run into bench/gpu/emitted (carried to the GPU
# machine, not committed): `front` the sm_90 sources, unfused baselines and
# manifests of the attention front at every width; `launches` launches
# simulated on random inputs, for the GPU to match; `layer` K1 and K2 of the
# full config at TP 2 (66 CTAs a rank: two ranks share the 132 SMs) with
# their unfused baselines and a copy with per-stage timers
# (instrument_stages.py), for the layer benchmark; `stress` K1 and K2 of
# config tiny at TP 2 (grid 66) for rows 6 and 48, fused only, for the race
# stress of the whole layer (LayerStress.cpp); no argument: front and
# launches. What travels is capped at 64 MiB, so the launch list is chosen
# to fit.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MONODC="${MONODC:-$ROOT/build/bin/monodc}"
OUT="$ROOT/bench/gpu/emitted"
WHAT="${1:-all}"
rm -rf "$OUT" && mkdir -p "$OUT"
# emit_k1_k2 DIR CONFIG "ROWS..." [OPTION...]: K1 and K2 at TP 2 with 66 CTAs
# a rank (two ranks share the 132 SMs), sm_90 HIP source, into $OUT/DIR.
emit_k1_k2() {
  local dir="$1" config="$2" widths="$3"
  shift 3
  for rows in $widths; do
    for launch in k1 k2; do
      "$MONODC" build --arch sm_90 --config "$config" --rows "$rows" --tp 2 --grid 66 --emit hip \
        "$@" --launch "$launch" --out "$OUT/$dir" > /dev/null
    done
  done
}
if [ "$WHAT" = layer ]; then
  emit_k1_k2 layer dsv41 "6 12 24 48" --unfused
  for source in "$OUT"/layer/k[12].*.hip; do
    case "$source" in *.unfused.hip) continue ;; esac
    python3 "$ROOT/bench/gpu/instrument_stages.py" "$source" "${source%.hip}.prof.hip"
  done
  ls "$OUT/layer" | wc -l; du -sh "$OUT"
  exit 0
fi
if [ "$WHAT" = stress ]; then
  emit_k1_k2 stress tiny "6 48"
  ls "$OUT/stress" | wc -l; du -sh "$OUT"
  exit 0
fi
if [ "$WHAT" != launches ]; then
  for config in tiny dsv41; do
    for rows in 6 12 24 48; do
      "$MONODC" build --arch sm_90 --config "$config" --rows "$rows" --emit hip --unfused \
        --launch attention_front --out "$OUT" > /dev/null
    done
  done
fi
if [ "$WHAT" != front ]; then
  # config rows TP: launches. At full size only the attention back fits (the
  # routed experts alone are 2.6 GB a rank).
  for spec in "tiny 6 2: k1 attention_back moe k2 ffn allreduce" "tiny 48 2: k1 k2" \
              "dsv41 6 4: attention_back"; do
    read -r config rows tp <<< "${spec%%:*}"
    for launch in ${spec#*:}; do
      "$MONODC" simulate --config "$config" --rows "$rows" --tp "$tp" --launch "$launch" \
        --schedules 2 --dump "$OUT/sim" > /dev/null
    done
  done
fi
ls "$OUT" | wc -l; du -sh "$OUT"
