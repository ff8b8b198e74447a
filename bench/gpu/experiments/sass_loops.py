#!/usr/bin/env python3
"""Summarises the tensor-core loops of an sm_90 cubin's SASS.

    sass_loops.py [--min-hmma N] FILE

FILE is `cuobjdump -sass` output ('-' for stdin). A loop is the code from a
backward branch's target to the branch; each innermost loop holding N or
more HMMA instructions (default 16; a loop around such a loop is not
listed) gets one line: the fused stage whose function holds it (the
kernel's calls before its first EXIT are its stages, in order: monodc's
stage functions on CUDA), where it starts, how many instructions and HMMA
it has, instructions per HMMA, and its most frequent opcodes a HMMA
(`LOP3 4.50` is 4.5 LOP3 for every HMMA). A dump of several kernels (the
unfused baseline: one kernel a stage) is read kernel by kernel, each line
then starting with its kernel's name. The GEMV loops of gemv_mma.h
issue two HMMA a block step and a token tile, so for one token tile twice
the per-HMMA figures are a block step's. An instruction the disassembler printed without a name (its
encoding alone) counts as `?`.
"""
import argparse
import collections
import re
import sys

from sass_dump import opcode, read_dump, stage_starts

BRANCH = re.compile(r"\bBRA\s+(?:`\(\S+\)\s*)?(0x[0-9a-f]+)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="cuobjdump -sass output, or - for stdin")
    parser.add_argument("--min-hmma", type=int, default=16,
                        help="report loops with at least this many HMMA (default 16)")
    args = parser.parse_args()
    kernels = read_dump(args.file, "sass_loops.py")
    named = len(kernels) > 1
    found = 0
    for name, code in kernels:
        for line in innermost_loops(name, code, args.min_hmma):
            print(f"{name}: {line}" if named else line)
            found += 1
    if not found:
        sys.exit(f"sass_loops.py: no loop with {args.min_hmma} or more HMMA in {args.file}")


def innermost_loops(name, code, min_hmma):
    """One line for each innermost loop of kernel `name`'s (address, text)
    list."""
    index = {address: i for i, (address, _) in enumerate(code)}
    stages = stage_starts(name, code)
    loops = []
    for end, (address, instruction) in enumerate(code):
        branch = BRANCH.search(instruction)
        if not branch:
            continue
        target = int(branch.group(1), 16)
        if target >= address or target not in index:
            continue
        body = [opcode(text) for _, text in code[index[target]:end + 1]]
        hmma = body.count("HMMA")
        if hmma >= min_hmma:
            loops.append((target, address, body, hmma))
    innermost = [loop for loop in loops
                 if not any(other is not loop and loop[0] <= other[0] and other[1] <= loop[1]
                            for other in loops)]
    lines = []
    for target, address, body, hmma in innermost:
        owners = [i for i, start in enumerate(stages) if start <= target]
        where = f"stage {owners[-1]}" if owners else "kernel"
        mix = collections.Counter(body).most_common(12)
        lines.append(f"{where}, loop 0x{target:x}-0x{address:x}: {len(body)} instructions, {hmma} HMMA, "
                     f"{len(body) / hmma:.2f} a HMMA; a HMMA: "
                     + ", ".join(f"{op} {count / hmma:.2f}" for op, count in mix))
    return lines


if __name__ == "__main__":
    main()
