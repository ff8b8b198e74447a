#!/usr/bin/env bash
# There (the GPU machine): one side-by-side call over trees that ab_tree.sh
# made, their logs in $OUT and the rows of each benchmark printed.
#   ab_run.sh DIR CANDIDATE [BASE...]
# CANDIDATE runs every check its tree has sources for (launch checks, layer
# check, tiny check, race stress of STRESS_REPLAYS, default 100000) and the
# benchmark; each BASE then the benchmark alone with the candidate's
# harnesses (BUILD=0); the candidate's benchmark again last, so that each
# base sits between two of its runs. WIDTHS as run_h200.sh (default "6
# 48"). No attention-front harness (CONFIGS=" "). CHECKS=0: the candidate
# runs its benchmark only too (a first look at an experiment, about 90 s a
# run at widths 6 and 48; its trees need only `layer`).
#   run: bash bench/gpu/experiments/ab_run.sh .devrunAB B A     (carry .devrunAB)
set -uo pipefail
. "$(dirname "$0")/out_archive.sh"
[ $# -ge 2 ] || { echo "usage: ab_run.sh DIR CANDIDATE [BASE...]" >&2; exit 2; }
DIR="$(cd "$1" && pwd)" CANDIDATE="$2"
shift 2
OUT="${OUT:?ab_run.sh writes its logs under \$OUT}"
export CONFIGS=" " WIDTHS="${WIDTHS:-6 48}"
rows() { grep -E "^ *[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x" "$1" || echo "  (no benchmark rows: see $1)"; }
run() {  # run NAME LOG [VAR=VALUE...]
  local name="$1" log="$2"
  shift 2
  (cd "$DIR/$name" && env OUT="$OUT/$log" "$@" bash bench/gpu/run_h200.sh > "$OUT/$log.log" 2>&1)
  echo "== $log ($name): rc $?"
  archive_into_out "$log"
}
if [ "${CHECKS:-1}" = 0 ]; then
  run "$CANDIDATE" "$CANDIDATE" LAYER_CHECK=0 ONLY=bench
else
  run "$CANDIDATE" "$CANDIDATE" STRESS_REPLAYS="${STRESS_REPLAYS:-100000}"
fi
grep -E "PASS: 0 mism|mismatching|FAIL|ALL LAUNCH|x_out" "$OUT/$CANDIDATE.log" | head -20
rows "$OUT/$CANDIDATE.log"
for base in "$@"; do
  run "$base" "$base" BUILD=0 LAYER_CHECK=0 ONLY=bench
  rows "$OUT/$base.log"
done
if [ $# -gt 0 ]; then
  run "$CANDIDATE" "$CANDIDATE.again" BUILD=0 LAYER_CHECK=0 ONLY=bench
  rows "$OUT/$CANDIDATE.again.log"
fi
