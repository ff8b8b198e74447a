#!/usr/bin/env python3
"""An experiment on emitted sm_90 sources (an ab_tree.sh tree's `layer`):
each routed.ug / routed.down task, once its own GEMV has read its weights,
asks L2 for the head of the next task's weights (that CTA's next task: the
one thread 0 has claimed ahead where tasks are claimed, task + grid in the
unfused kernels), so that the weight stream does not stop while the task
finishes, publishes and claims the next.
  patch_next_prefetch.py TREE head=BYTES
head: bytes from the start of each 16-row group of the next task's MXFP4
  weights (each warp streams its groups from their start); the task's
  scales are asked for whole.
The patched sources build only for sm_90 (the gfx950 branch gets an empty
helper)."""
import re
import sys

from source_patch import options, patch_layer

HELPER = r'''
#ifdef __CUDA_ARCH__
// experiment: bytes [p, p + n) towards L2 (one thread)
MONO_DEV void xp_l2_one(const void *p, unsigned n) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" :: "l"(p), "r"(n) : "memory");
}
#else
MONO_DEV void xp_l2_one(const void *, unsigned) {}
#endif
'''


def patch(text, head, unfused):
    lines = text.split('\n')
    out, i, patched = [], 0, 0
    while i < len(lines):
        m = re.match(r'\s*// stage \d+: routed\.(ug|down), (\d+) tasks', lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        tasks = int(m.group(2))
        while not lines[i].lstrip().startswith('for (mono_i64 task'):
            out.append(lines[i])
            i += 1
        out.append(lines[i])
        i += 1
        chain = []  # the task's lines up to its skip: the weights' row
        while not re.search(r'if \(v\d+ <= 0\) \{', lines[i]):
            chain.append(lines[i])
            out.append(lines[i])
            i += 1
        cond = re.search(r'if \((v\d+) <= 0\)', lines[i]).group(1)
        # the weights' shape and row: the split form (weights, then run) or
        # the whole GEMV in one call (no wait in between)
        while not re.search(r'mono_gemv_mma(_run)?<', lines[i]):
            pm = re.search(r'mono_gemv_mma_weights<(\d+), (\d+), 3> \w+;', lines[i])
            if pm:
                N, K = int(pm.group(1)), int(pm.group(2))
            wm = re.search(r'\.prefetch\(\(const mono_u8 \*\)(r_\w+), \(const mono_u8 \*\)(r_\w+), (\d+), (v\d+)\);', lines[i])
            if wm:
                w, ws, cols, n0 = wm.group(1), wm.group(2), int(wm.group(3)), wm.group(4)
            out.append(lines[i])
            i += 1
        whole = re.search(r'mono_gemv_mma<\d+, (\d+), (\d+), \d+, \d+, 3>\(\(const mono_u8 \*\)(r_\w+), \(const mono_u8 \*\)(r_\w+), (\d+), (v\d+),', lines[i])
        if whole:
            N, K, w, ws, cols, n0 = int(whole.group(1)), int(whole.group(2)), whole.group(3), whole.group(4), int(whole.group(5)), whole.group(6)
        out.append(lines[i])  # the GEMV: this task's weights are read
        i += 1
        copy, j = [], 0
        while j < len(chain):
            if 'if (!mono_waited' in chain[j]:
                j += 4
                continue
            if 'mono_prof' not in chain[j] and 'mono_wait_flags' not in chain[j]:
                copy.append(chain[j])
            j += 1
        ren = lambda s: re.sub(r'\btask\b', 'xtask', re.sub(r'\b([vt])(\d+)\b', r'\1\2x', s))
        nxt = 'task + MONO_GRID' if unfused else '(mono_i64)mono_ahead'
        group = 16 * K // 2
        out.append('    if (mono_t == 0) { const mono_i64 xtask = %s; if (xtask < %d) {' % (nxt, tasks))
        out.extend(ren(c) for c in copy)
        out.append('    if (%sx > 0) { for (int g = 0; g < %d; ++g) xp_l2_one((const mono_u8 *)%s + %sx * %d + g * %d, %d); '
                   'xp_l2_one((const mono_u8 *)%s + %sx * %d, %d); }'
                   % (cond, N // 16, w, n0, K // 2, group, min(head, group), ws, n0, cols, N * cols))
        out.append('    } }')
        patched += 1
    return '\n'.join(out), patched


def main():
    head = int(options(sys.argv[2:])['head'])
    patch_layer(sys.argv[1], 'k2.dsv41.sm_90.*.hip', HELPER,
                lambda path, text: patch(text, head, path.endswith('.unfused.hip')))


main()
