# Sourced by the scripts that run Nsight Compute there (run_h200.sh,
# experiments/ncu_prefix.sh): where its ncu is, on PATH or in its default install
# folder. Prints nothing when there is none.
find_ncu() {
  command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1 || true
}
