#!/usr/bin/env python3
"""An experiment on emitted sm_90 sources (an ab_tree.sh tree's `layer`):
a stage whose flags every consumer polls once for the whole run (the
emitter's task-independent waits, `if (!mono_waitedN)`) publishes a CTA's
tasks together when the CTA leaves the stage: one release fence by thread
0, then relaxed stores of its flags. Its tasks end with the reuse barrier
instead of a publish each.
  patch_stage_end_publish.py TREE [stages=NAME,...]
stages: only these stages, and whether or not a consumer polls their
  flags task by task (back.combine, whose flags wo_a's tasks wait for:
  1512 of its 1536 each at rows 48). Such a wait may end later, but it
  ends: the producer's CTA waits on none of its consumers.
Such a consumer waits for the stage's last flag, which a CTA publishes once
its last task is done either way, so the wait ends no later; the producer
saves a fence a task. Stages whose tasks are dealt (task += MONO_GRID) only:
a claiming CTA does not know its tasks. Only the fused sources (not
.prof.hip, not .unfused.hip) of K1 and K2, as emitted since a publish ends
its task (the twenty-fourth session)."""
import re
import sys

from source_patch import REUSE_SYNC, options, patch_layer, rewrite_task_loops

HELPER = r'''
// experiment: a CTA's flags of a stage, published when it leaves the stage
// (after its last task's barrier, which thread 0's fence is cumulative over)
MONO_DEV void xp_publish_own(mono_u64 *flags, mono_i64 first, mono_i64 end, mono_u32 tag) {
  if (mono_tid() != 0 || first >= end) return;
  mono_fence_release_device();
  for (mono_i64 task = first; task < end; task += MONO_GRID)
    mono_store_relaxed_device_u64(&flags[task], ((mono_u64)tag << 32) | (mono_u32)task);
}
'''

DEALT = re.compile(r'^  for \(mono_i64 task = (\(mono_cta\(\) \+ MONO_GRID - \d+\) % MONO_GRID); '
                   r'task < (\d+); task \+= MONO_GRID\) \{$')
PUBLISH = re.compile(r'^    mono_publish_flag\(\(mono_u64 \*\)\((mono_scratch \+ \d+)\), task, mono_tag\);$')
WAIT = re.compile(r'^\s+mono_wait_flags\(\(const mono_u64 \*\)\((mono_scratch \+ \d+)\), ')
STAGE = re.compile(r'^  // stage \d+: ([\w.]+),')


def polled_once_only(lines):
    """The flag arrays that every wait of the source polls once."""
    once, every = set(), set()
    for i, line in enumerate(lines):
        m = WAIT.match(line)
        if m:
            (once if lines[i - 1].strip().startswith('if (!mono_waited') else every).add(m.group(1))
    return once - every


def published_by(lines, names):
    """The flag arrays that the named stages publish."""
    arrays, stage = set(), None
    for line in lines:
        named = STAGE.match(line)
        stage = named.group(1) if named else stage
        publish = PUBLISH.match(line)
        if publish and stage in names:
            arrays.add(publish.group(1))
    return arrays


def patch(text, forced):
    lines = text.split('\n')
    if any(line == REUSE_SYNC and PUBLISH.match(prev) for prev, line in zip(lines, lines[1:])):
        raise SystemExit('patch_stage_end_publish: a publish followed by a reuse barrier'
                         ' (sources emitted before a publish ended its task)')
    once = published_by(lines, forced) if forced else polled_once_only(lines)

    def rewrite(loop):
        dealt = DEALT.match(loop[0])
        publish = PUBLISH.match(loop[-2])
        if not dealt or not publish or publish.group(1) not in once:
            return None
        first, tasks = dealt.groups()
        return loop[:-2] + [REUSE_SYNC, loop[-1], '  xp_publish_own((mono_u64 *)(%s), %s, %s, mono_tag);'
                                            % (publish.group(1), first, tasks)]

    return rewrite_task_loops(text, rewrite)


forced = set(options(sys.argv[2:]).get('stages', '').split(',')) - {''}
patch_layer(sys.argv[1], 'k[12].dsv41.sm_90.r*.tp2.hip', HELPER, lambda path, text: patch(text, forced))
