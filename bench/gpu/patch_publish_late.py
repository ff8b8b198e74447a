#!/usr/bin/env python3
"""An experiment on emitted sm_90 sources (an ab_tree.sh tree's `layer`):
a fused task's publish no longer holds the whole block while thread 0's
release store waits for the task's stores.
  patch_publish_late.py TREE
Today a task ends with publish (barrier, thread 0's release store) and a
second barrier for the reuse of shared memory, which every warp reaches
only once thread 0's release has gone through. The publish's barrier
already orders the reuse, so:
- a stage whose tasks are dealt out loses the second barrier;
- a stage whose tasks are claimed hands the next task over first (barrier,
  thread 0 writes the task it holds and claims the next, barrier) and
  stores the flag after that, so the loop header no longer claims.
Only the fused sources (not .prof.hip, not .unfused.hip) of K1 and K2."""
import re
import sys

from source_patch import patch_layer

HELPER = r'''
// experiment: the next task handed over before thread 0 publishes this one
MONO_DEV mono_i64 xp_publish_claim(mono_u64 *flags, mono_i64 task, mono_u32 tag, mono_u32 *counter,
                                   mono_u32 *shared, mono_u32 &ahead) {
  mono_block_sync();  // the task's stores and shared-memory reads are done
  if (mono_tid() == 0) {
    *shared = ahead;
    ahead = mono_atomic_add_relaxed_device(counter, 1u);
  }
  mono_block_sync();
  if (mono_tid() == 0)
    mono_store_release_device_u64(&flags[task], ((mono_u64)tag << 32) | (mono_u32)task);
  return (mono_i64)*shared;
}
'''

SYNC = '    mono_block_sync();  // shared memory is reused by the next task'
CLAIM = re.compile(r'^  for \(mono_i64 task = (mono_claim_task\((.*), &mono_claim, mono_ahead, 1\)); '
                   r'task < (\d+); task = mono_claim_task\(.*, 0\)\) \{$')
PUBLISH = re.compile(r'^    mono_publish_flag\((.*), task, mono_tag\);$')


def patch(text):
    lines = text.split('\n')
    out, i, patched = [], 0, 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith('  for (mono_i64 task'):
            out.append(line)
            i += 1
            continue
        end = i + 1
        while lines[end] != '  }':
            end += 1
        body = lines[i + 1:end]
        claim = CLAIM.match(line)
        if len(body) < 2 or body[-1] != SYNC or not PUBLISH.match(body[-2]):
            out.extend(lines[i:end + 1])
            i = end + 1
            continue
        flags = PUBLISH.match(body[-2]).group(1)
        if claim is None:
            out.append(line)
            out.extend(body[:-1])
        else:
            assert not any('continue' in b for b in body), 'a claimed task that continues'
            first, counter, tasks = claim.groups()
            out.append('  for (mono_i64 task = %s; task < %s;) {' % (first, tasks))
            out.extend(body[:-2])
            out.append('    task = xp_publish_claim(%s, task, mono_tag, %s, &mono_claim, mono_ahead);'
                       % (flags, counter))
        out.append(lines[end])
        i = end + 1
        patched += 1
    return '\n'.join(out), patched


patch_layer(sys.argv[1], 'k[12].dsv41.sm_90.r*.tp2.hip', HELPER, lambda path, text: patch(text))
