#!/usr/bin/env python3
"""Adds per-stage timers to an emitted sm_90 fused kernel (a diagnostic, not
a product path): for every CTA and stage, the global timer when the CTA
enters and leaves the stage's task loop and the nanoseconds it spent in
mailbox polls, in GEMVs, in publishing its tasks' flags and in the block-wide
library calls (quantizer, block reduction, top-k, expert groups), how many
of the stage's tasks it ran, and the task (plus one) at which it left the
stage skipping the rest (mono.skip_unless rest; 0: it did not), into the
device array
`mono_prof[MONO_GRID][stages][8]` (PROFILE_WORDS)
(layer_bench reads it by name). The stage code itself is unchanged. Takes
both forms of the fused kernel: stages inline in its body (gfx950's form)
and stages as functions of their own (`MONO_STAGE`, sm_90's form), and the
unfused baseline (a kernel a stage, `mono_<launch>_s<N>`), whose records
are kept the same way, so that the two can be set side by side.

    instrument_stages.py [--spans] IN.hip OUT.hip

--spans: only when each CTA enters and leaves each stage (and its tasks),
no timers around the calls inside (their counters stay 0). The call timers
slow the unfused baseline more than the fused kernel (by more than twice
as much at rows 48), so compare fused against unfused without them (K2
prefixes: patch_k2_prefix.py). A likely reason: they read the clock with a
"memory" clobber, so the compiler cannot move loads across them, which
costs more where a stage's code is inlined (the unfused kernels) than in
the fused kernel's stage functions. Spans cost a clock read as a CTA
enters and leaves a stage.
"""
import re
import sys

STAGE = re.compile(r'^  // stage (\d+): ')
# Calls timed into a per-stage counter, in the record's order after enter
# and leave: mailbox polls, GEMVs, flag publishes, block-wide library calls
# (a statement of its own, or the assignment of a block reduction). A
# dynamic stage's publish that hands over the next task counts as a publish,
# the hand-over with it.
TIMED = [(re.compile(r'^(\s+)(mono_wait_(?:peer_)?flags\(.*\);)$'), 'mono_prof_wait'),
         (re.compile(r'^(\s+)(mono_gemv_\w+<.*\);)$'), 'mono_prof_gemv'),
         (re.compile(r'^(\s+)((?:task = )?mono_publish_(?:peer_flag|flag|rest|and_claim)\(.*\);)$'),
          'mono_prof_publish'),
         (re.compile(r'^(\s+)((?:t\d+\[0\] = )?mono_(?:quantize_mxfp8|block_reduce|topk|expert_groups)'
                     r'<.*\);)$'), 'mono_prof_block')]
# The task loop's head: each pass is a task this CTA runs (a CTA with none
# still enters and leaves the stage, often late, from an earlier stage).
TASK_LOOP = re.compile(r'^\s+for \(mono_i64 task = .*\{$')
# Where a task skips the rest of its stage, the CTA leaves the task loop.
REST_BREAK = re.compile(r"^(\s+)break;  // the stage's later tasks skip too$")
# An unfused baseline's stage kernel (its last kernel, `_end`, has no stage).
UNFUSED_KERNEL = re.compile(r'^MONO_KERNEL void mono_\w+_s\d+\(')
COUNTERS = [counter for _, counter in TIMED] + ['mono_prof_tasks', 'mono_prof_rest']
PROFILE_WORDS = 2 + len(COUNTERS)


def instrument(source, spans=False):
    lines = source.split('\n')
    stages = sum(1 for line in lines if STAGE.match(line))
    if stages == 0:
        raise SystemExit('instrument_stages: no "// stage N:" lines: not a fused kernel')
    # Stage functions and unfused stage kernels alike: each holds one
    # stage and ends at its closing brace.
    functions = any(line.startswith('MONO_STAGE void') or UNFUSED_KERNEL.match(line) for line in lines)
    out = []
    current = None
    header_done = False

    def leave():
        counters = ' '.join('p[%d] = %s;' % (2 + i, c) for i, c in enumerate(COUNTERS))
        out.append('  if (mono_t == 0) { mono_u64 *p = mono_prof + (mono_cta() * %d + %d) * %d;'
                   ' p[0] = mono_prof_enter; p[1] = mono_now_ns(); %s }'
                   % (stages, current, PROFILE_WORDS, counters))

    zeroes = ['%s = 0' % c for c in COUNTERS]

    for line in lines:
        if (line.startswith('MONO_KERNEL') or line.startswith('MONO_STAGE void')) and not header_done:
            out.append('__device__ mono_u64 mono_prof[MONO_GRID * %d * %d];' % (stages, PROFILE_WORDS))
            out.append('__device__ __forceinline__ mono_u64 mono_now_ns() {')
            # "memory": the read must not move across the barriers inside
            # the timed calls (without it, a wait's end could be read
            # before the wait's barrier, counting the poll as work).
            out.append('  mono_u64 t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t) :: "memory");'
                       ' return t;')
            out.append('}')
            header_done = True
        m = STAGE.match(line)
        if functions:
            # A stage function: its timers are its own locals, written out
            # where the function ends.
            if m:
                current = int(m.group(1))
                out.append(line)
                out.append('  mono_u64 mono_prof_enter = mono_now_ns(), %s;' % ', '.join(zeroes))
                continue
            if line == '}' and current is not None:
                leave()
                current = None
                out.append(line)
                continue
        elif m or line.startswith('  mono_epoch_end('):
            if current is not None:
                leave()
            if m:
                current = int(m.group(1))
                out.append(line)
                out.append('  mono_prof_enter = mono_now_ns(); %s;' % '; '.join(zeroes))
                continue
            current = None
        if line.startswith('  const mono_u32 mono_tag') and not functions:
            out.append(line)
            out.append('  mono_u64 mono_prof_enter = 0, %s;' % ', '.join(zeroes))
            continue
        if current is not None and TASK_LOOP.match(line):
            out.append(line)
            out.append('    ++mono_prof_tasks;')
            continue
        rest = REST_BREAK.match(line) if current is not None else None
        if rest:
            out.append('%smono_prof_rest = task + 1;' % rest.group(1))
            out.append(line)
            continue
        timed = [(p.match(line), counter) for p, counter in TIMED] if current is not None and not spans else []
        call = next(((m, counter) for m, counter in timed if m), None)
        if call:
            m, counter = call
            out.append('%s{ const mono_u64 mono_prof_t0 = mono_now_ns(); %s'
                       ' %s += mono_now_ns() - mono_prof_t0; }' % (m.group(1), m.group(2), counter))
            continue
        out.append(line)
    text = '\n'.join(out)
    if 'mono_u64 mono_prof_enter' not in text:
        raise SystemExit('instrument_stages: nowhere to anchor the timers (no mono_tag line in the'
                         ' kernel, no stage function)')
    return text


if __name__ == '__main__':
    args = sys.argv[1:]
    spans = args[:1] == ['--spans']
    if spans:
        args = args[1:]
    if len(args) != 2:
        raise SystemExit('usage: instrument_stages.py [--spans] IN.hip OUT.hip')
    with open(args[0]) as f:
        text = instrument(f.read(), spans)
    with open(args[1], 'w') as f:
        f.write(text)
