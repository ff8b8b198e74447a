#!/usr/bin/env bash
# Installs every Debian package that monodc's build and tests need.
# Idempotent: when all are present it installs nothing and touches no network.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache python3
  llvm-22-dev llvm-22-tools clang-22 lld-22 libclang-22-dev libclang-cpp22-dev liblld-22-dev
  libmlir-22-dev mlir-22-tools
  # compiler-rt for clang-22: libFuzzer and the ASan/UBSan/TSan runtimes
  # (scripts/sanitize.sh, tests/fuzz).
  libclang-rt-22-dev
  libfmt-dev libcli11-dev libgtest-dev
  zlib1g-dev libzstd-dev
  # ROCm 5.2's hiprtc (inside libamdhip64) and its headers: the hiprtc
  # backend's tests build gfx90a code objects with it; no GPU needed.
  libamdhip64-5 libhiprtc-builtins5
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
