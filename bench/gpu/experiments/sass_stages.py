#!/usr/bin/env python3
"""The code of each stage of an sm_90 cubin's SASS: its size and mix.

    sass_stages.py [--manifest FILE] DUMP

DUMP is `cuobjdump -sass` output ('-' for stdin). A fused kernel's stages
are the functions its calls before its first EXIT reach (in order); each
runs from its first instruction to the next function's (a stage's or a
helper's, such as a division's slow path). A dump of several kernels (the
unfused baseline: mono_<launch>_s<N>, one a stage) gives a line a kernel.
Each line: the code's size in KB, its instructions, and how many are HMMA,
block barriers (BAR), global loads (LDG) and `?` (an instruction the
disassembler printed as its encoding alone). A stage's code is fetched
from memory the first time a CTA runs it, so its size is what instruction
fetch pays. With the
launch's manifest (`stage N NAME TASKS` lines), stages are named.
"""
import argparse
import sys

from sass_dump import CALL, UNFUSED_KERNEL, opcode, read_dump, stage_starts

COUNTED = ("HMMA", "BAR", "LDG", "?")


def stage_names(path):
    names = {}
    try:
        for line in open(path):
            words = line.split()
            if len(words) >= 3 and words[0] == "stage" and words[1].isdigit():
                names[int(words[1])] = words[2]
    except OSError as error:
        sys.exit(f"sass_stages.py: cannot read {path}: {error.strerror}")
    if not names:
        sys.exit(f"sass_stages.py: no `stage N NAME` lines in {path} (is it a manifest?)")
    return names


def describe(label, body):
    ops = [opcode(text) for _, text in body]  # sm_90 instructions are 16 bytes
    return (f"{label}: {16 * len(ops) / 1024:.1f} KB, {len(ops)} instructions, "
            + ", ".join(f"{ops.count(op)} {op}" for op in COUNTED))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump", help="cuobjdump -sass output, or - for stdin")
    parser.add_argument("--manifest", help="the launch's manifest, to name the stages")
    args = parser.parse_args()
    kernels = read_dump(args.dump, "sass_stages.py")
    names = stage_names(args.manifest) if args.manifest else {}

    def named(number):
        return f"stage {number} {names[number]}" if number in names else f"stage {number}"

    for kernel, code in kernels:
        stages = stage_starts(kernel, code)
        if not stages:  # one stage's own kernel, or a kernel without stages
            match = UNFUSED_KERNEL.search(kernel)
            label = f"{kernel} ({named(int(match.group(1)))})" if match else kernel or "kernel"
            print(describe(label, code))
            continue
        # Every function's start, the stages' and the helpers' they call.
        starts = sorted({int(call.group(1), 16) for _, text in code
                         if (call := CALL.search(text))} | set(stages))

        def extent(start):
            later = [s for s in starts if s > start]
            end = later[0] if later else code[-1][0] + 16
            return [(a, text) for a, text in code if start <= a < end]

        prefix = f"{kernel}: " if kernel else ""
        for number, start in enumerate(stages):
            print(describe(prefix + named(number), extent(start)))
        helpers = [line for start in starts if start not in stages for line in extent(start)]
        if helpers:
            print(describe(prefix + "helpers", helpers))


if __name__ == "__main__":
    main()
