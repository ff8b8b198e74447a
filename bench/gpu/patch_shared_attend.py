#!/usr/bin/env python3
"""An experiment on emitted sm_90 sources (an ab_tree.sh tree's `layer`):
stages of a fused launch that call the same instantiation of the
attention chunk (mono_attend_chunk_mma: back.window and back.compressed of
K2, the same template arguments) call one copy of it, a function that is
not inlined, instead of each inlining its own.
  patch_shared_attend.py TREE
Why: the fused K2 waits for instruction fetch where its CTAs run several
stages' code at once (docs/gpu-validation.md, twenty-ninth and thirtieth
sessions). Window and compressed start together and each holds a 40 KB
copy of the same chunk; one copy halves what the GPC's cache must keep
then, at the cost of a call a task (its outputs, 19 floats, pass through
local memory). The chunk's values loop is unrolled by a pragma, as the
inlined copies are unrolled without one. Only the fused sources (not
.unfused.hip, not .prof.hip): an unfused kernel holds one stage, so there
is nothing to share. The results are the same bit for bit (same
function, same arguments)."""
import re
import sys

from source_patch import patch_layer

HELPER = r'''
// experiment: patch_shared_attend.py. One copy of the attention chunk for
// the stages that call the same instantiation, called, not inlined. It
// names the launch's shared memory itself (a pointer argument would be a
// generic one, and its loads no longer LDS).
template <int H, int D, int NOPE, int N, int PT, int DATA, int SS, int SH, int SP>
static __device__ __noinline__ void xp_attend_chunk_shared(
    const mono_u16 *q, const mono_u8 *cache, mono_i64 pageBytes, float scale,
    const float (&slots)[SS], float (&m)[SH], float (&l)[SH], float (&p)[SP]) {
  mono_attend_chunk_mma<H, D, NOPE, N, PT, DATA, SS, SH, SP>(q, cache, pageBytes, scale, slots, m, l,
                                                             p, mono_lds);
}
'''

# A stage's call, its last argument the launch's shared memory.
# The chunk's values loop (attend_mma.h), which the inlined copies unroll
# and a copy of its own did not (13 HMMA in its code against 37): unrolled
# by name, so that the copy is the inlined code's equal.
VALUES_LOOP = '  for (int step = 0; step < KEY_TILES; ++step) {\n'
CALL = re.compile(r'^(    )mono_attend_chunk_mma<([0-9, ]+)>\((.*), mono_lds\);$', re.M)


def patch(path, text):
    if 'experiment: patch_shared_attend.py' in text:
        sys.exit('patch_shared_attend.py: %s is patched already' % path)
    calls = [m.group(2) for m in CALL.finditer(text)]
    shared = {args for args in calls if calls.count(args) > 1}
    if shared:
        if text.count(VALUES_LOOP) != 1:
            sys.exit("patch_shared_attend.py: %s holds attend_mma.h's values loop %d times, not once"
                     % (path, text.count(VALUES_LOOP)))
        text = text.replace(VALUES_LOOP, '#pragma unroll  // experiment: patch_shared_attend.py\n'
                            + VALUES_LOOP)

    def redirect(m):
        if m.group(2) not in shared:
            return m.group(0)
        return '%sxp_attend_chunk_shared<%s>(%s);' % m.groups()

    return CALL.sub(redirect, text), sum(calls.count(args) for args in shared)


if len(sys.argv) != 2:
    sys.exit('usage: patch_shared_attend.py TREE')
patch_layer(sys.argv[1], 'k[12].*.sm_90.r*.tp2.hip', HELPER, patch, unit='calls')
