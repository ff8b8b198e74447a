#!/usr/bin/env python3
"""An experiment on emitted sm_90 sources (an ab_tree.sh tree):
e4m3 codes made and read by the tensor-core generation's conversions
instead of the device library's portable bit arithmetic, in every emitted
source of the tree (the layer's fused, unfused and profiled sources alike,
so that the A/B of fusion stays fair, and the launch checks' and the race
stress's, so that the checks test the patched conversions).
  patch_e4m3_cvt.py TREE
Why: the twenty-ninth session found the fused attention back waiting for
instruction fetch in the code a task runs once, and the quantizing
epilogues are much of it: each of a thread's values is encoded, decoded
and encoded again on its store (mono_quantize_mxfp8 then mono_store_e4m3),
about 40 instructions a value in software, 2-3 with cvt.
Bit for bit the same codes as generic.h's mono_e4m3_bits (saturate to
+-448, round to nearest even, subnormals on the 2^-9 grid): cvt's
satfinite rounds first and saturates after, which gives 448 for every
magnitude the library clamps to 448 (below 464 the rounding gives 448
itself; from 464 on it gives 480, which satfinite makes 448); a NaN keeps
the library's code, sign | 0x7F. bench/gpu/E4m3CvtCheck.cpp checks that
here for every f32 against CUDA's host emulation of the instructions (0
mismatches); the layer check and the launch checks confirm it there."""
import re
import sys

from source_patch import patch_every_source

ENCODE = re.compile(r'^MONO_DEV mono_u8 mono_e4m3_bits\(float v\) \{\n(?:  .*\n)*?\}\n', re.M)
DECODE = re.compile(r'^MONO_DEV float mono_e4m3_value\(mono_u8 c\) \{\n(?:  .*\n)*?\}\n', re.M)

HW_ENCODE = r'''MONO_DEV mono_u8 mono_e4m3_bits(float v) {  // experiment: patch_e4m3_cvt.py
  unsigned short pair;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %1;" : "=h"(pair) : "f"(v));
  const mono_u8 nan = (mono_u8)(((mono_as_u32(v) >> 31) << 7) | 0x7Fu);
  return v != v ? nan : (mono_u8)(pair & 0xFFu);
}
'''
HW_DECODE = r'''MONO_DEV float mono_e4m3_value(mono_u8 c) {  // experiment: patch_e4m3_cvt.py
  float f;
  asm("{ .reg .b16 p, lo, hi; .reg .b32 h2;\n mov.b16 p, %1;\n cvt.rn.f16x2.e4m3x2 h2, p;\n"
      " mov.b32 {lo, hi}, h2;\n cvt.f32.f16 %0, lo; }" : "=f"(f) : "h"((unsigned short)c));
  return f;
}
'''

if len(sys.argv) != 2:
    sys.exit('usage: patch_e4m3_cvt.py TREE')


def patch(path, text):
    if 'experiment: patch_e4m3_cvt.py' in text:
        sys.exit('patch_e4m3_cvt.py: %s is patched already' % path)
    text, encoders = ENCODE.subn(lambda m: HW_ENCODE, text)
    text, decoders = DECODE.subn(lambda m: HW_DECODE, text)
    if (encoders, decoders) != (1, 1):
        sys.exit('patch_e4m3_cvt.py: %s has %d mono_e4m3_bits and %d mono_e4m3_value definitions, '
                 'not one each' % (path, encoders, decoders))
    return text


patch_every_source(sys.argv[1], 'patch_e4m3_cvt.py', patch)
