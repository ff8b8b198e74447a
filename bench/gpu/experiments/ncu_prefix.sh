#!/usr/bin/env bash
# There (the GPU machine): Nsight Compute on a K2 cut after N stages, fused
# against its stage kernels, rank 0 alone, with the SM's and the GPC's
# instruction caches' counters (the fused K2 waits for instructions where
# its stage kernels do not: docs/results.md).
#   ncu_prefix.sh TREE N WIDTH     (K1=1 adds K1, fused and its stage kernels)
# TREE is an ab_tree.sh tree whose fused K2 patch_k2_prefix.py cut to N
# stages (k2_prefix_trees.sh makes them), with WIDTH among its rows
# (CONFIG, default dsv41, names its sources). PLAN=1 only prints what
# would be profiled. Prints
# the durations, the cache counters and the stall tables (ncu_stalls.py);
# keeps ncu_stalls.txt, ncu.log.gz and ncu_sass.csv.gz in $OUT, few files,
# so that the device tool brings them all back.
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: ncu_prefix.sh TREE N WIDTH" >&2; exit 2; }
TREE="$(cd "$1" && pwd)" N="$2" WIDTH="$3"
OUT="${OUT:?ncu_prefix.sh writes its files under \$OUT}"
[[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "ncu_prefix.sh: $N is not a stage count (1 or more)" >&2; exit 2; }
layer="$TREE/bench/gpu/emitted/layer"
stem="${CONFIG:-dsv41}.sm_90.r$WIDTH.tp2.grid66"  # TP 2: 66 CTAs a rank (emit.sh layer)
k2="$layer/k2.$stem.manifest"
[ -f "$k2" ] || { echo "ncu_prefix.sh: no $k2 (emit the tree with LAYER_WIDTHS including $WIDTH)" >&2; exit 2; }
stages="mono_k2 $(awk -v n="$N" '$1 == "stage" && $2 < n {print $3}' "$k2" | paste -sd' ' -)"
if [ "${K1:-0}" = 1 ]; then
  k1="$layer/k1.$stem.manifest"
  [ -f "$k1" ] || { echo "ncu_prefix.sh: K1=1 but no $k1" >&2; exit 2; }
  stages="mono_k1 $(awk '$1 == "stage" {print $3}' "$k1" | paste -sd' ' -) $stages"
fi
echo "ncu_prefix.sh: profiling $stages"
[ "${PLAN:-0}" = 1 ] && exit 0
. "$(dirname "$0")/../find_ncu.sh"
NCU="$(find_ncu)"
[ -n "$NCU" ] || { echo "ncu_prefix.sh: no ncu on this machine" >&2; exit 1; }
# The counters this ncu knows of those wanted (an unknown name fails the whole run).
metrics="$("$NCU" --query-metrics 2>/dev/null | awk '{print $1}' |
  grep -xE 'sm__icc_requests|sm__icc_requests_lookup_miss|gcc__cache_requests_type_instruction|gcc__cache_requests_type_instruction_lookup_miss' |
  sed 's/$/.sum/' | paste -sd, -)"
work="$(mktemp -d)"
(cd "$TREE" && env OUT="$work" NCU_METRICS="$metrics" CONFIGS=" " WIDTHS="$WIDTH" LAYER_CHECK=0 \
  LAYER_BENCH=0 K2_PREFIX="$N" NCU_STAGES="$stages" NCU_WIDTHS="$WIDTH" NCU_TIMEOUT="${NCU_TIMEOUT:-300}" \
  bash bench/gpu/run_h200.sh > "$work/run.log" 2>&1)
status=$?
echo "== ncu_prefix.sh $(basename "$TREE") K2 stages $N rows $WIDTH: rc $status; counters: ${metrics:-none}"
grep -E "^ncu: |Duration|icc_requests|gcc__cache" "$work/run.log"
[ -f "$work/ncu_stalls.txt" ] && cat "$work/ncu_stalls.txt" && cp "$work/ncu_stalls.txt" "$OUT/"
[ -f "$work/ncu.log" ] && gzip -c "$work/ncu.log" > "$OUT/ncu.log.gz"
[ -f "$work/ncu_sass.csv" ] && gzip -c "$work/ncu_sass.csv" > "$OUT/ncu_sass.csv.gz"
[ "$status" = 0 ] || tail -n 30 "$work/run.log"
exit "$status"
