#!/usr/bin/env python3
"""An experiment on emitted sm_90 sources, kept so that it can be run again:
L2 prefetches (cp.async.bulk.prefetch.L2) patched into an ab_tree.sh tree.
Both forms made the layer slower on the H200 (docs/gpu-validation.md,
twenty-first session); the compiler does not emit them.
  patch_l2_prefetch.py TREE [ahead=N] [dense=1]
ahead: each routed.ug / routed.down task prefetches the weights of task + N
  (fused, profiled and unfused sources of K2).
dense: each CTA prefetches its share of wo_a before back.combine and of wo_b
  before back.wo_a (K2), of wq_b before the stage after front.wqkv (K1);
  fused and profiled sources only.
The patched sources build only for sm_90 (the gfx950 branch gets empty
helpers)."""
import re, sys, glob

from source_patch import add_helper, options

HELPER = r'''
#ifdef __CUDA_ARCH__
// experiment: bytes [p, p + n) towards L2, 16 KB a lane of warp 0
MONO_DEV void xp_l2(const void *p, unsigned long long n) {
  const int lane = mono_tid();
  if (lane >= 32) return;
  for (unsigned long long o = 16384ull * lane; o < n; o += 32ull * 16384ull) {
    unsigned long long m = n - o < 16384ull ? n - o : 16384ull;
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" :: "l"((const char *)p + o), "r"((unsigned)m) : "memory");
  }
}
MONO_DEV void xp_share(const void *p, unsigned long long n) {
  const unsigned long long per = ((n + MONO_GRID - 1) / MONO_GRID + 15) / 16 * 16;
  const unsigned long long b = per * mono_cta();
  if (b < n) xp_l2((const char *)p + b, n - b < per ? n - b : per);
}
#else
MONO_DEV void xp_l2(const void *, unsigned long long) {}
MONO_DEV void xp_share(const void *, unsigned long long) {}
#endif
'''


def ahead_patch(text, ahead):
    lines = text.split('\n')
    out = []
    i = 0
    patched = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r'\s*// stage \d+: routed\.(ug|down), (\d+) tasks', line)
        if not m:
            out.append(line)
            i += 1
            continue
        tasks = int(m.group(2))
        out.append(line)
        i += 1
        # to the loop header
        while not lines[i].lstrip().startswith('for (mono_i64 task'):
            out.append(lines[i]); i += 1
        out.append(lines[i]); i += 1
        body = []
        while 'else the task has nothing to do' not in lines[i]:
            body.append(lines[i]); i += 1
        ifline = lines[i]
        cond = re.search(r'if \((v\d+) > 0\)', ifline).group(1)
        nxt = lines[i + 1] + '\n' + lines[i + 2] + '\n' + lines[i + 3]
        wm = re.search(r'mono_gemv_mma(?:_weights)?<(?:\d+, )?(\d+), (\d+), (?:\d+, \d+, )?3>', nxt)
        N, K = int(wm.group(1)), int(wm.group(2))
        pm = re.search(r'\(\(const mono_u8 \*\)(r_\w+), \(const mono_u8 \*\)(r_\w+), (\d+), (v\d+)', nxt)
        w, ws, cols, n0 = pm.group(1), pm.group(2), int(pm.group(3)), pm.group(4)
        # copy of the body without its waits, for task + ahead
        copy = []
        j = 0
        while j < len(body):
            if 'if (!mono_waited' in body[j]:
                j += 4
                continue
            if 'mono_prof' not in body[j]:
                copy.append(body[j])
            j += 1
        ren = lambda s: re.sub(r'\btask\b', 'xtask', re.sub(r'\b([vt])(\d+)\b', r'\1\2x', s))
        out.extend(body)
        out.append('    { const mono_i64 xtask = task + %d; if (xtask < %d) {' % (ahead, tasks))
        out.extend(ren(c) for c in copy)
        out.append('    if (%sx > 0) { xp_l2((const mono_u8 *)%s + %sx * %d, %d); xp_l2((const mono_u8 *)%s + %sx * %d, %d); }'
                   % (cond, w, n0, K // 2, N * K // 2, ws, n0, cols, N * cols))
        out.append('    } }')
        out.append(ifline)
        i += 1
        patched += 1
    return '\n'.join(out), patched


def dense_patch(text, kernel):
    n = 0
    def before(stage, call):
        nonlocal text, n
        pat = '  mono_%s_stage%d(' % (kernel, stage)
        assert text.count(pat) == 1, pat
        text = text.replace(pat, '  ' + call + '\n' + pat)
        n += 1
    if kernel == 'k2':
        before(2, 'xp_share(r_wo_a, 4096ull * 4096); xp_share(r_wo_a_scale, 16384);')
        before(3, 'xp_share(r_wo_b, 5120ull * 4096); xp_share(r_wo_b_scale, 20480);')
    else:
        before(3, 'xp_share(r_wq_b, 16384ull * 1280); xp_share(r_wq_b_scale, 20480);')
    return text, n


def main():
    tree = sys.argv[1]
    opts = options(sys.argv[2:])
    ahead = int(opts.get('ahead', 0))
    dense = opts.get('dense', '0') == '1'
    for path in sorted(glob.glob(tree + '/bench/gpu/emitted/layer/k[12].dsv41.sm_90.*.hip')):
        text = open(path).read()
        kernel = 'k1' if '/k1.' in path else 'k2'
        unfused = path.endswith('.unfused.hip')
        notes = []
        new = text
        if ahead and kernel == 'k2':
            new, c = ahead_patch(new, ahead)
            notes.append('ahead %d stages' % c)
        if dense and not unfused:
            new, c = dense_patch(new, kernel)
            notes.append('dense %d points' % c)
        if new != text:
            open(path, 'w').write(add_helper(new, HELPER))
        print(path.split('/')[-1], ', '.join(notes))


main()
