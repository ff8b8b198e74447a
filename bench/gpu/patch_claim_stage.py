#!/usr/bin/env python3
"""An experiment on emitted sm_90 sources (an ab_tree.sh tree's `layer`):
one dealt stage of K2 claims its tasks instead, as routed.ug does, so that
a CTA that leaves the stages before it early takes more of its tasks.
  patch_claim_stage.py TREE stage=back.compressed
A launch has two task counters a step and K2 uses both (routed.ug and
routed.down); the patch borrows K1's second, which no K1 of dsv41 claims
with (the patch refuses a K1 source that does). The zeroing of a step's
four counters by the launch that ends it covers that one too. Only the
fused sources (not .prof.hip, not .unfused.hip) of K2, as emitted since a
publish ends its task (the twenty-fourth session)."""
import glob
import re
import sys

from source_patch import options, patch_layer, rewrite_task_loops

COUNTER = 'mono_epoch + 68 + ((4u * mono_e + 1u) & 255u)'
DEALT = re.compile(r'^  for \(mono_i64 task = \(mono_cta\(\) \+ MONO_GRID - \d+\) % MONO_GRID; '
                   r'task < (\d+); task \+= MONO_GRID\) \{$')
PUBLISH = re.compile(r'^    mono_publish_flag\(\(mono_u64 \*\)\((mono_scratch \+ \d+)\), task, mono_tag\);$')

tree = sys.argv[1]
stage = options(sys.argv[2:])['stage']
for k1 in glob.glob(tree + '/bench/gpu/emitted/layer/k1.*.hip'):
    if '4u * mono_e + 1u' in open(k1).read():
        raise SystemExit('patch_claim_stage: %s claims with the counter the patch borrows' % k1)


def patch(path, text):
    if 'mono_epoch + 68 +' not in text:
        raise SystemExit('patch_claim_stage: %s has another counter base than 68 (grid 66)' % path)
    lines = text.split('\n')
    header = next((i for i, line in enumerate(lines) if re.match(r'^  // stage \d+: %s,' % re.escape(stage), line)),
                  None)
    if header is None:
        raise SystemExit('patch_claim_stage: no stage %s in %s' % (stage, path))
    loop_line = lines[header + 1]

    def rewrite(loop):
        if loop[0] != loop_line:
            return None
        dealt, publish = DEALT.match(loop[0]), PUBLISH.match(loop[-2])
        if not dealt or not publish:
            raise SystemExit('patch_claim_stage: %s is not a dealt stage ending with a publish' % stage)
        return (['  mono_u32 mono_ahead = 0;  // experiment: a claimed stage',
                 '  for (mono_i64 task = mono_claim_task(%s, &mono_claim, mono_ahead, 1); task < %s;) {'
                 % (COUNTER, dealt.group(1))] + loop[1:-2] +
                ['    task = mono_publish_and_claim((mono_u64 *)(%s), task, mono_tag, %s, &mono_claim, mono_ahead);'
                 % (publish.group(1), COUNTER), loop[-1]])

    return rewrite_task_loops(text, rewrite)


patch_layer(tree, 'k2.dsv41.sm_90.r*.tp2.hip', '', patch)
