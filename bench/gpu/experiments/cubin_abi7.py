#!/usr/bin/env python3
"""Rewrites a cubin's ELF header into the older layout that CUDA 11.8 reads.

    cubin_abi7.py IN OUT

CUDA 13's nvcc writes cubins with ELF ABI version 8, which keeps the SM in
bits 8-15 of e_flags. The cuobjdump of CUDA 11.8 (the one Debian ships, in
non-free's nvidia-cuda-toolkit) knows only ABI version 7, where the SM sits
in bits 0-7 and the virtual SM in bits 16-23, beside the unified-texture and
64-bit-address flags; it refuses the new header ("Support for 'sm_4' has
been removed"). The machine code is the same ISA either way, so only the
header is rewritten: a disassembly for reading, never a cubin to load.
"""
import struct
import sys

E_FLAGS = 48          # offset of e_flags in an ELF64 header
EI_OSABI, EI_ABIVERSION = 7, 8
ELFOSABI_CUDA = 0x41
TEXMODE_UNIFIED, ADDRESS_64BIT = 0x100, 0x400


def rewrite(header):
    if header[:4] != b"\x7fELF" or header[4] != 2:
        raise ValueError("not a 64-bit ELF file")
    if header[EI_OSABI] != ELFOSABI_CUDA:
        raise ValueError(f"not a cubin (ELF OS ABI 0x{header[EI_OSABI]:x}, a cubin's is 0x41)")
    version = header[EI_ABIVERSION]
    if version == 7:
        return header  # already the old layout
    if version != 8:
        raise ValueError(f"unknown cubin ABI version {version} (this knows 7 and 8)")
    flags = struct.unpack_from("<I", header, E_FLAGS)[0]
    sm = (flags >> 8) & 0xFF
    if sm == 0:
        raise ValueError(f"no SM in e_flags 0x{flags:x}")
    header[EI_ABIVERSION] = 7
    struct.pack_into("<I", header, E_FLAGS, sm | TEXMODE_UNIFIED | ADDRESS_64BIT | (sm << 16))
    return header


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: cubin_abi7.py IN OUT")
    source, target = sys.argv[1:]
    try:
        data = bytearray(open(source, "rb").read())
    except OSError as error:
        sys.exit(f"cubin_abi7.py: cannot read {source}: {error.strerror}")
    if len(data) < 64:
        sys.exit(f"cubin_abi7.py: {source}: too short for an ELF header")
    try:
        data = rewrite(data)
    except ValueError as error:
        sys.exit(f"cubin_abi7.py: {source}: {error}")
    with open(target, "wb") as out:
        out.write(data)


if __name__ == "__main__":
    main()
