#!/usr/bin/env python3
"""Where a fused kernel's warps wait, stage by stage.

    ncu_stalls.py NCU_SASS_CSV KERNEL SOURCE.hip

NCU_SASS_CSV is Nsight Compute's SASS page as CSV (`ncu --import R --page
source --csv --print-source sass`, which run_h200.sh writes as
ncu_sass.csv); KERNEL names one of its kernels (mono_k1); SOURCE is the
fused source it was built from, whose `// stage N: NAME` lines name the
stages. Each stage is a function of its own (MONO_STAGE), called in stage
order from the kernel's body, so the body's first calls give each stage's
first address; other call targets are the library's own functions
(`library`). A body that calls fewer stages than the source has is a K2
cut by patch_k2_prefix.py: its calls are the first stages. KERNEL may also
be an unfused stage kernel (`mono_k2_s4`, SOURCE the unfused source): its
body is that stage, its call targets the library. Prints, per function,
its code size and warp-stall samples by reason (the columns ncu calls
stall_*; `no_inst` is instruction fetch).
"""
import collections
import csv
import re
import sys

from sass_dump import UNFUSED_KERNEL

REASONS = ["barrier", "long_sb", "wait", "no_inst", "short_sb", "lg", "selected",
           "branch_resolving", "membar", "mio", "math", "sleep"]


def fail(message):
    sys.exit("ncu_stalls: " + message)


def kernel_rows(path, kernel):
    """The header and the instruction rows of one kernel of the CSV."""
    header, rows, inside = None, [], False
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "Kernel Name":
                if inside:
                    break
                inside = len(row) > 1 and row[1] == kernel
            elif inside and row[0] == "Address":
                header = row
            elif inside:
                rows.append(row)
    if header is None or not rows:
        fail(f"no kernel {kernel} with a SASS page in {path}")
    return header, rows


def stage_names(source):
    with open(source) as f:
        names = re.findall(r"^\s*// stage \d+: ([^,\n]+)", f.read(), re.M)
    if not names:
        fail(f'no "// stage N:" lines in {source}: not a fused kernel')
    return names


def main():
    if len(sys.argv) != 4:
        fail("usage: ncu_stalls.py NCU_SASS_CSV KERNEL SOURCE.hip")
    header, rows = kernel_rows(sys.argv[1], sys.argv[2])
    names = stage_names(sys.argv[3])
    col = {name: i for i, name in enumerate(header)}
    for needed in ["Source"] + ["stall_" + r for r in REASONS]:
        if needed not in col:
            fail(f"the CSV has no column {needed} (ncu --set full gives it)")
    every_reason = [n[len("stall_"):] for n in header
                    if n.startswith("stall_") and "(Not Issued)" not in n]
    address = lambda row: int(row[0], 16)
    # (where a call is, its target), in address order
    calls = [(address(r), int(r[col["Source"]].split()[-1], 16)) for r in rows
             if "CALL.REL" in r[col["Source"]]]
    unfused = UNFUSED_KERNEL.search(sys.argv[2])
    if unfused:
        # One stage's kernel: the body is the stage, every call target
        # (after the body) the library's.
        stage = int(unfused.group(1))
        if stage >= len(names):
            fail(f"{sys.argv[2]} is stage {stage}, the source has {len(names)} stages")
        names = [names[stage]]
        first_call = min((target for _, target in calls), default=None)
        owner = lambda a: names[0] if first_call is None or a < first_call else "library"
    else:
        # The body calls the stages first, in order; it ends at its first EXIT.
        body_end = next(address(r) for r in rows if "EXIT" in r[col["Source"]])
        body_calls = [target for at, target in calls if at < body_end]
        if len(body_calls) > len(names):
            fail(f"the kernel's body makes {len(body_calls)} calls, the source has "
                 f"{len(names)} stages")
        if len(body_calls) < len(names):
            print(f"{sys.argv[2]}: its body calls the first {len(body_calls)} of the source's "
                  f"{len(names)} stages (a cut K2)")
            names = names[:len(body_calls)]
        starts = {target: name for target, name in zip(body_calls, names)}
        for _, target in calls:
            starts.setdefault(target, "library")
        ordered = sorted(starts)
        owner = lambda a: "kernel" if a < ordered[0] else starts[
            max(s for s in ordered if s <= a)]
    samples = collections.defaultdict(collections.Counter)
    code = collections.Counter()
    for row in rows:
        who = owner(address(row))
        code[who] += 16  # every sm_90 instruction is 16 bytes
        for reason in every_reason:
            value = row[col["stall_" + reason]]
            samples[who][reason] += int(value) if value else 0
    total = sum(sum(c.values()) for c in samples.values())
    print(f"{sys.argv[2]}: warp-stall samples by function ({total} in all; no_inst is "
          "instruction fetch)")
    print(f"{'function':<24} {'code KB':>7} {'samples':>7} " +
          " ".join(f"{r[:8]:>8}" for r in REASONS) + f" {'other':>8}")
    for who in ["kernel"] + names + ["library"]:
        if who not in code:
            continue
        counts = samples[who]
        listed = sum(counts[r] for r in REASONS)
        print(f"{who:<24} {code[who] / 1024:7.1f} {sum(counts.values()):7d} " +
              " ".join(f"{counts[r]:8d}" for r in REASONS) +
              f" {sum(counts.values()) - listed:8d}")


if __name__ == "__main__":
    main()
