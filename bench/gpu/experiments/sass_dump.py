"""Reading `cuobjdump -sass` output: what sass_loops.py and sass_stages.py
share."""
import re
import sys

INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+([^;]*);")
CALL = re.compile(r"\bCALL\.\S*\s+(0x[0-9a-f]+)")
FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
# An unfused baseline's kernel of stage N: mono_<launch>_s<N>.
UNFUSED_KERNEL = re.compile(r"_s(\d+)$")


def opcode(text):
    words = text.split()
    word = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
    return word.split(".")[0]


def read_kernels(text):
    """[(kernel name, [(address, instruction text)])], one entry a kernel
    with code. Each kernel's addresses start at 0, so a dump is split at
    its `Function :` headers ("" names code before any header)."""
    kernels = []
    for line in text.splitlines():
        function = FUNCTION.match(line)
        if function:
            kernels.append((function.group(1), []))
            continue
        match = INSTRUCTION.match(line)
        if match:
            if not kernels:
                kernels.append(("", []))
            code = kernels[-1][1]
            address = int(match.group(1), 16)
            # A disassembler older than the code prints an instruction it
            # cannot name as its encoding alone (CUDA 11.8's cuobjdump on
            # sm_90 code of CUDA 13: VIADD and the like); each 16-byte slot
            # skipped is one such instruction, counted as `?`.
            if code:
                for skipped in range(code[-1][0] + 16, address, 16):
                    code.append((skipped, "?"))
            code.append((address, match.group(2).strip()))
    return [(name, code) for name, code in kernels if code]


def stage_starts(name, code):
    """The kernel's own calls before its first EXIT, in order: the start
    addresses of its stage functions (monodc's fused kernels on CUDA).
    None for an unfused baseline's kernel (UNFUSED_KERNEL): it runs one
    stage, and its calls reach the device library's helpers."""
    if UNFUSED_KERNEL.search(name):
        return []
    stages = []
    for _, instruction in code:
        if opcode(instruction) == "EXIT":
            break
        call = CALL.search(instruction)
        if call:
            stages.append(int(call.group(1), 16))
    return stages


def read_dump(path, tool):
    """The kernels of a dump file ('-' for stdin); exits naming `tool` when
    it cannot be read or holds no SASS."""
    try:
        text = sys.stdin.read() if path == "-" else open(path).read()
    except OSError as error:
        sys.exit(f"{tool}: cannot read {path}: {error.strerror}")
    kernels = read_kernels(text)
    if not kernels:
        sys.exit(f"{tool}: no SASS instructions in {path} (is it `cuobjdump -sass` output?)")
    return kernels
