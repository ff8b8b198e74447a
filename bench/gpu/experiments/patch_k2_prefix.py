#!/usr/bin/env python3
"""A diagnostic on emitted sm_90 sources (an ab_tree.sh tree's `layer`; not
product, not in CI): the fused K2 keeps only its first N stages, so that layer_bench
run with K2_PREFIX=N (which launches only the unfused K2's first N stage
kernels, then its _end) times fused against unfused K2 up to that stage,
cold weights and no timers. Differences between prefixes say where the
fused K2 gains or loses against the unfused one, without the profile's
timers (which slow the unfused kernels more than the fused one).
  patch_k2_prefix.py TREE stages=N
A later stage only waits on earlier ones, so the truncated kernel still
ends its step. The profiled sources (.prof.hip) are removed: their stage
table would not match the manifest."""
import glob
import os
import re
import sys

USAGE = 'usage: patch_k2_prefix.py TREE stages=N (N >= 1: the stages the fused K2 keeps)'
if len(sys.argv) != 3 or not re.fullmatch(r'stages=[1-9]\d*', sys.argv[2]):
    sys.exit(USAGE)
tree = sys.argv[1]
keep = int(sys.argv[2].split('=')[1])
if not glob.glob(tree + '/bench/gpu/emitted/layer/k2.*.hip'):
    sys.exit('patch_k2_prefix.py: no K2 sources in %s/bench/gpu/emitted/layer (an ab_tree.sh tree?)' % tree)
CALL = re.compile(r'^  mono_k2_stage(\d+)\(')


def patch(text):
    out, dropped = [], 0
    for line in text.split('\n'):
        call = CALL.match(line)
        if call and int(call.group(1)) >= keep:
            dropped += 1
            continue
        out.append(line)
    return '\n'.join(out), dropped


for path in glob.glob(tree + '/bench/gpu/emitted/layer/*.prof.hip'):
    os.remove(path)
# The fused K2 sources, k2.CONFIG.sm_90.r<W>.tp<TP>.grid<N>.hip as emit.sh
# names them; not the .unfused.hip baselines.
FUSED = re.compile(r'k2\.\w+\.sm_90\.r\d+\.tp\d+(\.grid\d+)?\.hip')
for path in sorted(glob.glob(tree + '/bench/gpu/emitted/layer/k2.*.hip')):
    if not FUSED.fullmatch(os.path.basename(path)):
        continue
    text, dropped = patch(open(path).read())
    if dropped:
        open(path, 'w').write(text)
    print(os.path.basename(path), 'patched %d stage calls' % dropped)
