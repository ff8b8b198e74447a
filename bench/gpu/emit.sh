#!/usr/bin/env bash
# Emits the sm_90 sources, unfused baselines and manifests the GPU harness
# runs, into bench/gpu/emitted (carried to the GPU machine, not committed).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MONODC="${MONODC:-$ROOT/build/bin/monodc}"
OUT="$ROOT/bench/gpu/emitted"
rm -rf "$OUT" && mkdir -p "$OUT"
for config in tiny dsv41; do
  for rows in 6 12 24 48; do
    "$MONODC" build --arch sm_90 --config "$config" --rows "$rows" --emit hip --unfused --out "$OUT" > /dev/null
  done
done
# Every launch, simulated with random inputs, for the GPU to match.
for spec in "tiny 6 2" "tiny 48 4" "dsv41 6 2"; do
  set -- $spec
  for launch in attention_front attention_seam k1 moe_router_shared allreduce; do
    # At full size k1 only repeats attention_seam and attention_front
    # (and would push what travels to the GPU machine past its 64 MiB).
    [ "$1" = dsv41 ] && [ "$launch" = k1 ] && continue
    "$MONODC" simulate --config "$1" --rows "$2" --tp "$3" --launch "$launch" --schedules 2 \
      --dump "$OUT/sim" > /dev/null
  done
done
# TP4 ranks on one GPU as well (33 CTAs each).
"$MONODC" simulate --config dsv41 --rows 48 --tp 4 --launch allreduce --schedules 2 \
  --dump "$OUT/sim" > /dev/null
ls "$OUT" | wc -l; du -sh "$OUT"
