#!/usr/bin/env bash
# Here (no GPU): the SASS of emitted sm_90 sources, without device time.
#   sass_here.sh SOURCE.hip...
# Each source is built as run_h200.sh's SASS phase builds it (nvcc -cubin
# -arch=sm_90 -std=c++17 --fmad=false), disassembled into
# $SASS_OUT/<name>.sass (default /tmp/monodc-sass), its tensor-core loops
# summarised by sass_loops.py, kernel by kernel (the fused kernel's loops
# by stage; an .unfused.hip's by kernel, mono_<launch>_s<N>), and each
# stage's code by sass_stages.py (its size and counts).
#
# CUDA 13 ($CUDA_HOME, default /usr/local/cuda) has nvcc here but no
# cuobjdump. The cuobjdump used is, in order: $CUOBJDUMP; $CUDA_HOME's;
# CUDA 11.8's from Debian's non-free nvidia-cuda-toolkit package, fetched
# once (with its nvdisasm) into $MONODC_TOOLS (default
# ~/.cache/monodc/cuda-11.8) by
# `apt-get download` (84 MB, nothing installed). That one reads CUDA 13's
# cubins once cubin_abi7.py has rewritten their ELF header to the old
# layout (a disassembly made so is for reading only). It cannot name the
# sm_90 instructions newer than it (about 2.5% of K2's, mostly integer adds
# with an encoding that ends in 836), which it prints as their encoding
# alone: sass_loops.py counts each as `?`.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
[ $# -ge 1 ] || { echo "usage: sass_here.sh SOURCE.hip..." >&2; exit 2; }
CUDA="${CUDA_HOME:-/usr/local/cuda}"
OUTDIR="${SASS_OUT:-/tmp/monodc-sass}"
TOOLS="${MONODC_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/monodc/cuda-11.8}"
[ -x "$CUDA/bin/nvcc" ] || { echo "sass_here.sh: no nvcc at $CUDA/bin/nvcc (set CUDA_HOME)" >&2; exit 1; }
for source in "$@"; do
  [ -f "$source" ] || { echo "sass_here.sh: no source $source" >&2; exit 1; }
done

# Debian's cuobjdump, fetched and unpacked once.
fetch_cuobjdump() {
  local work list
  work="$(mktemp -d)"
  list="$work/sources.list"
  echo "sass_here.sh: fetching Debian's nvidia-cuda-toolkit (CUDA 11.8, non-free, 84 MB) for its cuobjdump and nvdisasm" >&2
  echo "deb ${DEBIAN_MIRROR:-http://deb.debian.org/debian} bookworm non-free" > "$list"
  local apt=(-o Dir::Etc::SourceList="$list" -o Dir::Etc::SourceParts=/dev/null
             -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache"
             -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
  if ! (apt-get "${apt[@]}" -qq update && cd "$work" && apt-get "${apt[@]}" -qq download nvidia-cuda-toolkit) >&2; then
    echo "sass_here.sh: could not fetch nvidia-cuda-toolkit from Debian non-free (set CUOBJDUMP to a cuobjdump)" >&2
    rm -rf "$work"; return 1
  fi
  # cuobjdump runs nvdisasm, which it looks for beside itself on PATH.
  dpkg-deb -x "$work"/nvidia-cuda-toolkit_*.deb "$work/x" && mkdir -p "$TOOLS" \
    && cp "$work/x/usr/bin/nvdisasm" "$work/x/usr/bin/cuobjdump" "$work" \
    && mv "$work/nvdisasm" "$TOOLS/nvdisasm" && mv "$work/cuobjdump" "$TOOLS/cuobjdump"
  local status=$?
  rm -rf "$work"
  return $status
}

if [ -n "${CUOBJDUMP:-}" ]; then
  cuobjdump="$CUOBJDUMP"
elif [ -x "$CUDA/bin/cuobjdump" ]; then
  cuobjdump="$CUDA/bin/cuobjdump"
else
  [ -x "$TOOLS/cuobjdump" ] && [ -x "$TOOLS/nvdisasm" ] || fetch_cuobjdump || exit 1
  cuobjdump="$TOOLS/cuobjdump"
  export PATH="$TOOLS:$PATH"
fi

mkdir -p "$OUTDIR"
status=0
for source in "$@"; do
  name="$(basename "$source" .hip)"
  cubin="$OUTDIR/$name.cubin" sass="$OUTDIR/$name.sass"
  echo "== $name"
  if ! "$CUDA/bin/nvcc" -cubin -arch=sm_90 -std=c++17 --fmad=false -x cu "$source" -o "$cubin" \
       > "$OUTDIR/$name.nvcc.log" 2>&1; then
    cat "$OUTDIR/$name.nvcc.log" >&2
    echo "sass_here.sh: nvcc failed on $source" >&2; status=1; continue
  fi
  # A cuobjdump older than the cubin's ELF layout reads its rewritten copy
  # (whose name must end in .cubin: cuobjdump goes by the extension).
  if ! "$cuobjdump" -sass "$cubin" > "$sass" 2> "$sass.err"; then
    python3 "$HERE/cubin_abi7.py" "$cubin" "$OUTDIR/$name.abi7.cubin" \
      && "$cuobjdump" -sass "$OUTDIR/$name.abi7.cubin" > "$sass" 2> "$sass.err" \
      || { echo "sass_here.sh: $cuobjdump cannot read $cubin: $(cat "$sass.err")" >&2; status=1; continue; }
  fi
  rm -f "$sass.err"
  python3 "$HERE/sass_loops.py" "$sass" || status=1
  # Each stage's code, named by the launch's manifest where it is beside
  # the source (unfused and profiled sources share their fused twin's).
  stem="${name%.prof}"
  manifest="$(dirname "$source")/${stem%.unfused}.manifest"
  if [ -f "$manifest" ]; then
    python3 "$HERE/sass_stages.py" --manifest "$manifest" "$sass" || status=1
  else
    python3 "$HERE/sass_stages.py" "$sass" || status=1
  fi
done
echo "(SASS in $OUTDIR)"
exit $status
