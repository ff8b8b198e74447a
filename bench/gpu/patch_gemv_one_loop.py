#!/usr/bin/env python3
"""An experiment on emitted sm_90 sources (an ab_tree.sh tree): the
tensor-core GEMV (gemv_mma.h, mono_gemv_mma_run) steps through its blocks
in one loop instead of two, in every emitted source of the tree.
  patch_gemv_one_loop.py TREE
Why: the library runs the groups of DEPTH blocks whose next group is in
range in an unguarded loop and the last one or two in a guarded copy of
it, so that the steps of a group form one basic block. That copy is about
11 KB of code in every GEMV stage, run once a task; the twenty-ninth
session found the fused kernel waiting for instruction fetch in such code
(docs/gpu-validation.md). Where every warp's blocks and every chunk are
whole groups (the dsv41 e4m3 GEMVs: 4096 blocks of k split over 1 or 2
warps, groups of 8), the patched loop is the unguarded one for every
group: the last group loads its own blocks again instead of the next
group's (an address select, no branch), and those loads' values are never
used. Same steps, same order, same sums: the results are bit for bit the
library's; elsewhere the two loops stay (`if constexpr`)."""
import os
import sys

from source_patch import patch_every_source

# The library's two loops, as gemv_mma.h (this checkout's) has them: from
# their comment to the end of the chunk's body.
LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../runtime/device/gemv_mma.h')
FIRST = '      // Whole groups of DEPTH blocks whose next group is in range take no\n'
AFTER = "    }\n    // Each lane's sums"
library = open(LIBRARY).read()
if library.count(FIRST) != 1 or library.count(AFTER) != 1:
    sys.exit('patch_gemv_one_loop.py: %s no longer has the two block loops this patch replaces'
             % LIBRARY)
TWO_LOOPS = library[library.index(FIRST):library.index(AFTER)]

ONE_LOOP = '''      // experiment: patch_gemv_one_loop.py. Every warp's blocks and every
      // chunk whole groups: one unguarded loop, the last group reloading
      // its own blocks (unused) instead of loading the next group's.
      constexpr bool WHOLE_GROUPS =
          KB % SPLIT == 0 && (KB / SPLIT) % DEPTH == 0 && (CHUNKS == 1 || CB % DEPTH == 0);
      if constexpr (WHOLE_GROUPS) {
#pragma unroll 1
        for (; base < chunkEnd; base += DEPTH) {
          const int next = base + DEPTH < kbEnd ? base + DEPTH : base;
#pragma unroll
          for (int d = 0; d < DEPTH; ++d) {
            const typename slice_t::block_t cur = weights.held[d];
            weights.load(weights.held[d], next, d);
            step(cur, base + d);
          }
        }
      } else {
''' + TWO_LOOPS + '''      }
'''

if len(sys.argv) != 2:
    sys.exit('usage: patch_gemv_one_loop.py TREE')


def patch(path, text):
    if 'experiment: patch_gemv_one_loop.py' in text:
        sys.exit('patch_gemv_one_loop.py: %s is patched already' % path)
    if text.count(TWO_LOOPS) != 1:
        sys.exit("patch_gemv_one_loop.py: %s holds gemv_mma.h's two block loops %d times, not once "
                 "(emitted by another version of the library?)" % (path, text.count(TWO_LOOPS)))
    return text.replace(TWO_LOOPS, ONE_LOOP)


patch_every_source(sys.argv[1], 'patch_gemv_one_loop.py', patch)
