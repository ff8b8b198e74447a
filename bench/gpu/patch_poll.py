#!/usr/bin/env python3
"""An experiment on emitted sm_90 sources (an ab_tree.sh tree's `layer`):
the device library's flag polls (mono_wait_flags, mono_wait_peer_flags)
with fewer polling threads and a growing pause, as a change to the library
would make them: every source of K1 and K2 (fused, unfused, profiled).
  patch_poll.py TREE [lanes=N] [cap=NS]
lanes: the block's first N threads poll (default all, MONO_BLOCK); cap: the
pause between two polls of a flag starts at 64 ns and doubles up to NS
(default 64: a fixed pause, as now). The question it answers (twenty-fifth
session): the fused K2's GEMVs run about 8% slower than their unfused
kernels while up to 96 CTAs poll a stage's few flag lines, each polling
thread about once a microsecond; do fewer polls give the streams back what
the flags' L2 slices take from them, and what does a longer pause cost the
waits on the critical path? Answered in the twenty-sixth session: no gain.
With 32 threads the layer ran 46-50 us slower at rows 48 (a wait on 1512
flags walks them 47 a thread), and with the pause growing to 1 us it ran
15 us slower at rows 6 (docs/gpu-validation.md)."""
import re
import sys

from source_patch import options, patch_layer

settings = options(sys.argv[2:])
LANES = settings.get('lanes', 'MONO_BLOCK')
CAP = int(settings.get('cap', '64'))
if CAP < 64:
    raise SystemExit('patch_poll: cap is at least the first pause, 64 ns')

WAIT = re.compile(r'MONO_DEV void (mono_wait(?:_peer)?_flags)\(const mono_u64 \*flags, mono_i64 first, '
                  r'mono_i64 count, mono_u32 tag\) \{\n'
                  r'  for \(mono_i64 i = mono_tid\(\); i < count; i \+= MONO_BLOCK\)\n'
                  r'    while \(\(mono_u32\)\((mono_load_acquire_\w+_u64)\(&flags\[first \+ i\]\) >> 32\) != tag\)\n'
                  r'      mono_poll_pause\(\);\n')


def rewrite(m):
    name, load = m.group(1), m.group(2)
    return ('MONO_DEV void %s(const mono_u64 *flags, mono_i64 first, mono_i64 count, mono_u32 tag) {\n'
            '  // experiment (patch_poll.py): the first %s threads poll, pausing 64 ns doubling to %d\n'
            '  for (mono_i64 i = mono_tid(); mono_tid() < (%s) && i < count; i += (%s)) {\n'
            '    unsigned pause = 64;\n'
            '    while ((mono_u32)(%s(&flags[first + i]) >> 32) != tag) {\n'
            '      __nanosleep(pause);\n'
            '      pause = pause < %du ? 2u * pause : %du;\n'
            '    }\n'
            '  }\n' % (name, LANES, CAP, LANES, LANES, load, CAP, CAP))


def patch(path, text):
    new, count = WAIT.subn(rewrite, text)
    if count != 2:
        raise SystemExit('patch_poll: %s has %d of the two poll loops it rewrites' % (path, count))
    return new, count


patch_layer(sys.argv[1], 'k[12].dsv41.sm_90.r*.hip', '', patch, unit='poll loops')
