#!/usr/bin/env bash
# Emits what the GPU harnesses run into bench/gpu/emitted (carried to the GPU
# machine, not committed): `front` the sm_90 sources, unfused baselines and
# manifests of the attention front at every width; `launches` launches
# simulated on random inputs, for the GPU to match; `layer` K1 and K2 of the
# full config at TP 2 (66 CTAs a rank: two ranks share the 132 SMs) with
# their unfused baselines and a copy with per-stage timers
# (instrument_stages.py), for the layer benchmark; no argument: front and
# launches. What travels is capped at 64 MiB, so the launch list is chosen
# to fit.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MONODC="${MONODC:-$ROOT/build/bin/monodc}"
OUT="$ROOT/bench/gpu/emitted"
WHAT="${1:-all}"
rm -rf "$OUT" && mkdir -p "$OUT"
if [ "$WHAT" = layer ]; then
  for rows in 6 12 24 48; do
    for launch in k1 k2; do
      "$MONODC" build --arch sm_90 --config dsv41 --rows "$rows" --tp 2 --grid 66 --emit hip \
        --unfused --launch "$launch" --out "$OUT/layer" > /dev/null
      stem="$OUT/layer/$launch.dsv41.sm_90.r$rows.tp2"
      python3 "$ROOT/bench/gpu/instrument_stages.py" "$stem.hip" "$stem.prof.hip"
    done
  done
  ls "$OUT/layer" | wc -l; du -sh "$OUT"
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
