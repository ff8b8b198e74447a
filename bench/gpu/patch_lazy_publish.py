#!/usr/bin/env python3
"""An experiment on emitted sm_90 sources (an ab_tree.sh tree's `layer`):
a fused stage publishes its tasks' flags BATCH at a time, with one fence
for all of them (fence.acq_rel, then relaxed stores: the PTX release
pattern), instead of one release store a task. A CTA flushes what it holds
before any poll and when it leaves the stage, so no flag it holds can be
what it waits for.
  patch_lazy_publish.py TREE batch=K
Only the fused sources (not .prof.hip, not .unfused.hip) of K1 and K2;
they then build only for sm_90 (the helpers are CUDA's alone). Sources
whose publishing tasks end with the publish's barrier alone (the compiler's
since the twenty-fourth session) are refused: the patch would take that
barrier away."""
import re
import sys

from source_patch import REUSE_SYNC, options, patch_layer, rewrite_task_loops

HELPER = r'''
#ifdef __CUDA_ARCH__
// experiment: flags held back by a CTA, published together
template <int K>
MONO_DEV void xp_flush(mono_u64 *flags, mono_u32 tag, const mono_i64 (&pend)[K], int &n) {
  if (n == 0) return;
  mono_block_sync();
  if (mono_tid() == 0) {
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
#pragma unroll
    for (int i = 0; i < K; ++i)
      if (i < n) mono_store_relaxed_device_u64(&flags[pend[i]], ((mono_u64)tag << 32) | (mono_u32)pend[i]);
  }
  n = 0;
}
template <int K>
MONO_DEV void xp_publish_lazy(mono_u64 *flags, mono_i64 task, mono_u32 tag, mono_i64 (&pend)[K], int &n) {
#pragma unroll
  for (int i = K - 1; i > 0; --i) pend[i] = pend[i - 1];
  pend[0] = task;
  if (++n == K) xp_flush<K>(flags, tag, pend, n);
}
#endif
'''


def patch(text, batch):
    def rewrite(loop):
        body = loop[1:-1]
        flags = None
        for b in body:
            m = re.search(r'mono_publish_flag\((.*), task, mono_tag\);', b)
            if m:
                flags = m.group(1)
        if flags is None:
            return None
        if REUSE_SYNC not in body:
            # Since the publish's barrier orders the reuse, emitted tasks have
            # no other: a publish without one would race on shared memory.
            raise SystemExit('patch_lazy_publish: a publishing task with no reuse barrier of its own'
                             ' (sources emitted since the publish ends its task)')
        out = ['  mono_i64 xp_pend[%d] = {}; int xp_n = 0;' % batch, loop[0]]
        for b in body:
            if 'mono_wait_flags(' in b or 'mono_wait_peer_flags(' in b:
                out.append('    xp_flush<%d>(%s, mono_tag, xp_pend, xp_n);' % (batch, flags))
            out.append(b.replace('mono_publish_flag(%s, task, mono_tag);' % flags,
                                 'xp_publish_lazy<%d>(%s, task, mono_tag, xp_pend, xp_n);' % (batch, flags)))
        out.append(loop[-1])
        out.append('  xp_flush<%d>(%s, mono_tag, xp_pend, xp_n);' % (batch, flags))
        return out

    return rewrite_task_loops(text, rewrite)


def main():
    batch = int(options(sys.argv[2:])['batch'])
    patch_layer(sys.argv[1], 'k[12].dsv41.sm_90.r*.tp2.hip', HELPER,
                lambda path, text: patch(text, batch))


main()
