// monodc device library: the shape of mono.attend_chunk on tensor cores
// (attend_mma.h). The compiler's shared-memory planning (mono-prepare-
// emission) includes this file too, so the bytes it reserves are the bytes
// the device lays out. Constant expressions only: no device code.
#ifndef MONO_ATTEND_SHAPE_H
#define MONO_ATTEND_SHAPE_H

#ifndef MONO_SHAPE
#if defined(__CUDACC__)
#define MONO_SHAPE __host__ __device__ constexpr
#else
#define MONO_SHAPE constexpr
#endif
#endif

// Heads are the instruction's 8 columns (m16n8k16, bf16); keys and dims
// come in tiles of 16; the e4m3 dims in whole 64-dim scale groups; every
// warp takes the same number of the values product's dim tiles; every
// thread loads the same number of 16-dim key pieces, all at the same dims,
// and of query words; the output (f32, heads x dims) fits where the keys were.
MONO_SHAPE bool mono_attend_mma_fits(int heads, int dim, int nope, int keys, int block) {
  return block % 32 == 0 && heads >= 1 && heads <= 8 && keys % 16 == 0 && keys > 0 &&
         dim % 32 == 0 && nope % 64 == 0 && nope <= dim && (dim / 16) % (block / 32) == 0 &&
         block % (dim / 16) == 0 && (keys * (dim / 16)) % block == 0 &&
         (8 * (dim / 2)) % block == 0 && heads * dim <= keys * (dim / 2 + 4);
}
// A key's or query's row: dim / 2 words of bf16 pairs and 4 words of gap, so
// the 8 rows a fragment load touches start in different banks.
MONO_SHAPE int mono_attend_mma_key_words(int dim) { return dim / 2 + 4; }
// A head's row of weights: keys / 2 words of bf16 pairs and the same gap.
MONO_SHAPE int mono_attend_mma_weight_words(int keys) { return keys / 2 + 4; }
// The score product's k (the head dim) is split over this many warps when
// there are fewer key tiles than warps; their sums are added in order.
MONO_SHAPE int mono_attend_mma_score_parts(int dim, int keys, int block) {
  int parts = block / 32 / (keys / 16);
  parts = parts < 1 ? 1 : parts;
  while ((dim / 16) % parts != 0)
    --parts;
  return parts;
}
// Shared memory in 4-byte words, in this order: keys (keys rows), queries (8
// rows, heads past `heads` zero), partial scores (parts x keys x 8), the
// weights' high and low bf16 halves (8 rows each), the slots, then max and
// sum (8 each).
MONO_SHAPE int mono_attend_mma_queries_at(int dim, int keys) {
  return keys * mono_attend_mma_key_words(dim);
}
MONO_SHAPE int mono_attend_mma_scores_at(int dim, int keys) {
  return mono_attend_mma_queries_at(dim, keys) + 8 * mono_attend_mma_key_words(dim);
}
MONO_SHAPE int mono_attend_mma_weights_at(int dim, int keys, int block) {
  return mono_attend_mma_scores_at(dim, keys) + mono_attend_mma_score_parts(dim, keys, block) * keys * 8;
}
MONO_SHAPE int mono_attend_mma_slots_at(int dim, int keys, int block) {
  return mono_attend_mma_weights_at(dim, keys, block) + 2 * 8 * mono_attend_mma_weight_words(keys);
}
MONO_SHAPE int mono_attend_mma_shared_bytes(int dim, int keys, int block) {
  return 4 * (mono_attend_mma_slots_at(dim, keys, block) + keys + 16);
}

#endif
