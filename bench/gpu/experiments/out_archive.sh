# Sourced by the scripts that run several trees there (ab_run.sh,
# k2_prefix_run.sh): the device tool brings back only a few files from
# $OUT, so each run's folder goes into one archive, $OUT/logs.tar, as soon
# as the run ends. A call cut short by the time limit then still brings
# back every finished run's logs (an archive made last would be lost with
# the rest, and loose files run into the device tool's file count).
#   archive_into_out NAME...   appends $OUT/NAME... to $OUT/logs.tar, removes them
archive_into_out() {
  local name
  for name in "$@"; do
    [ -e "$OUT/$name" ] || continue
    tar -rf "$OUT/logs.tar" -C "$OUT" "$name" && rm -rf "${OUT:?}/$name"
  done
  [ -f "$OUT/logs.tar" ] && chmod 644 "$OUT/logs.tar"
  return 0
}
