#!/usr/bin/env python3
"""An experiment on emitted sm_90 sources (an ab_tree.sh tree's `layer`):
a dealt stage's task ends with the publish's barrier only, and thread 0
release-stores that task's flag one task later, once the next task's
loads are issued (before its first barrier, wait, store or shared-memory
step), or when the CTA leaves the stage.
  patch_lagged_publish.py TREE [gemv=0]
Why: the release store's fence (MEMBAR.ALL.GPU) holds warp 0 until the
task's stores are acknowledged, and the next task's first barrier holds
the block for warp 0: one store round trip a task. Issued behind the next
task's loads, the fence waits while those loads are in flight, which warp
0 would wait for anyway. The flag comes later by at most one task; a
barrier-ordered release by thread 0 stays cumulative over the block's
stores, so consumers see what they saw. gemv=0 leaves stages with a GEMV
alone (their tasks are long; the fence would wait for the weights'
prefetch). Only the fused sources (not .prof.hip, not .unfused.hip) of K1
and K2; claimed stages (mono_publish_and_claim) are left alone."""
import re
import sys

from source_patch import options, patch_layer, rewrite_task_loops

HELPER = r'''
// experiment: thread 0 release-stores the previous task's flag
MONO_DEV void xp_release_lagged(mono_u64 *flags, mono_i64 &lagged, mono_u32 tag) {
  if (lagged >= 0 && mono_tid() == 0)
    mono_store_release_device_u64(&flags[lagged], mono_flag_pair(lagged, tag));
  lagged = -1;
}
'''

DEALT = re.compile(r'^  for \(mono_i64 task = .*; task \+= MONO_GRID\) \{$')
PUBLISH = re.compile(r'^    mono_publish_flag\((\(mono_u64 \*\)\(mono_scratch \+ \d+\)), task, mono_tag\);$')
# What ends the window where thread 0's fence overlaps the task's loads: a
# barrier or a call that may hold one, a poll, a store, shared memory.
BLOCKING = re.compile(r'mono_block_|mono_wait_|mono_gemv|mono_quantize|mono_attend|'
                      r'mono_topk|mono_expert_groups|mono_store_|mono_lds|mono_publish|mono_claim')


def first_blocking_statement(body):
    """Index in body of the first top-level statement (4-space indent) that
    holds a blocking line, or len(body). A task-independent wait (`if
    (!mono_waitedN)`) does not count: it polls in the CTA's first task
    only, where no flag is held back yet."""
    start, depth = 0, 0
    for i, line in enumerate(body):
        if depth == 0:
            start = i
        if BLOCKING.search(line) and not body[start].startswith('    if (!mono_waited'):
            return start
        depth += line.count('{') - line.count('}')
    return len(body)


def patch(text, gemv):
    count = [0]

    def rewrite(loop):
        publish = PUBLISH.match(loop[-2])
        if not DEALT.match(loop[0]) or not publish:
            return None
        body = loop[1:-2]
        if not gemv and any('mono_gemv' in b for b in body):
            return None
        flags = publish.group(1)
        lagged = 'xp_lagged%d' % count[0]
        count[0] += 1
        at = first_blocking_statement(body)
        release = '    xp_release_lagged(%s, %s, mono_tag);' % (flags, lagged)
        return (['  mono_i64 %s = -1;' % lagged, loop[0]] + body[:at] + [release] + body[at:] +
                ['    mono_block_sync();  // shared memory is reused by the next task',
                 '    %s = task;' % lagged, loop[-1],
                 '  xp_release_lagged(%s, %s, mono_tag);' % (flags, lagged)])

    return rewrite_task_loops(text, rewrite)


def main():
    gemv = options(sys.argv[2:]).get('gemv', '1') != '0'
    patch_layer(sys.argv[1], 'k[12].dsv41.sm_90.r*.tp2.hip', HELPER,
                lambda path, text: patch(text, gemv))


main()
