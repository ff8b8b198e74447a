// monodc device library: the shapes of mono.attend_chunk on matrix cores,
// the whole chunk at once (attend_batch.h): sm_90's warp mma
// (attend_mma.h) and gfx950's bf16 MFMA (attend_mfma.h) share one
// shared-memory layout and differ in how their waves split the two
// products. The compiler's tile lowering (mono-lower-tiles) and shared-memory
// planning (mono-prepare-emission) include this file too, so the rule it
// checks and the bytes it reserves are the device's. Constant expressions
// only: no device code.
#ifndef MONO_ATTEND_SHAPE_H
#define MONO_ATTEND_SHAPE_H

#ifndef MONO_SHAPE
#if defined(__CUDACC__)
#define MONO_SHAPE __host__ __device__ constexpr
#else
#define MONO_SHAPE constexpr
#endif
#endif

// A key's or query's row: dim / 2 words of bf16 pairs and 4 words of gap, so
// the rows a fragment load touches start in different banks, and every row
// starts 16-byte aligned.
MONO_SHAPE int mono_attend_batch_key_words(int dim) { return dim / 2 + 4; }
// A head's row of weights: keys / 2 words of bf16 pairs and the same gap.
MONO_SHAPE int mono_attend_batch_weight_words(int keys) { return keys / 2 + 4; }

// What both matrix paths need: heads fit the 8 weight rows (the values
// product's columns); keys and dims come in 16s, the e4m3 dims in whole
// 64-dim scale groups; every thread loads the same number of 16-dim key
// pieces, all at the same dims, and of query words; the output (f32, heads x
// dims) fits where the keys were.
MONO_SHAPE bool mono_attend_batch_fits(int heads, int dim, int nope, int keys, int block) {
  return heads >= 1 && heads <= 8 && keys % 16 == 0 && keys > 0 && dim % 32 == 0 &&
         nope % 64 == 0 && nope <= dim && block % (dim / 16) == 0 &&
         (keys * (dim / 16)) % block == 0 && (8 * (dim / 2)) % block == 0 &&
         heads * dim <= keys * mono_attend_batch_key_words(dim);
}

// Shared memory in 4-byte words, in this order: keys (keys rows), queries (8
// rows, heads past `heads` zero), partial scores (parts x keys x 8), the
// weights' high and low bf16 halves (8 rows each, high first), the slots,
// then max and sum (8 each). `parts`: how many pieces of the head dim the
// score product is split into (the path's score_parts).
MONO_SHAPE int mono_attend_batch_queries_at(int dim, int keys) {
  return keys * mono_attend_batch_key_words(dim);
}
MONO_SHAPE int mono_attend_batch_scores_at(int dim, int keys) {
  return mono_attend_batch_queries_at(dim, keys) + 8 * mono_attend_batch_key_words(dim);
}
MONO_SHAPE int mono_attend_batch_weights_at(int dim, int keys, int parts) {
  return mono_attend_batch_scores_at(dim, keys) + parts * keys * 8;
}
MONO_SHAPE int mono_attend_batch_slots_at(int dim, int keys, int parts) {
  return mono_attend_batch_weights_at(dim, keys, parts) + 2 * 8 * mono_attend_batch_weight_words(keys);
}
MONO_SHAPE int mono_attend_batch_shared_bytes(int dim, int keys, int parts) {
  return 4 * (mono_attend_batch_slots_at(dim, keys, parts) + keys + 16);
}

// The score product's k (the head dim) is split over this many warps
// (waves) when there are fewer key tiles than warps; the pieces are whole
// instruction steps of `step` dims, and their sums are added in order.
MONO_SHAPE int mono_attend_batch_score_parts(int dim, int keys, int warps, int step) {
  int parts = warps / (keys / 16);
  parts = parts < 1 ? 1 : parts;
  while ((dim / step) % parts != 0)
    --parts;
  return parts;
}

// sm_90 (m16n8k16 bf16, 32-lane warps): heads are the instruction's 8
// columns, keys and dims its 16 rows, k 16; every warp takes the same
// number of the values product's dim tiles.
MONO_SHAPE int mono_attend_mma_score_parts(int dim, int keys, int block) {
  return mono_attend_batch_score_parts(dim, keys, block / 32, 16);
}
MONO_SHAPE bool mono_attend_mma_fits(int heads, int dim, int nope, int keys, int block) {
  return block % 32 == 0 && mono_attend_batch_fits(heads, dim, nope, keys, block) &&
         (dim / 16) % (block / 32) == 0;
}
MONO_SHAPE int mono_attend_mma_shared_bytes(int dim, int keys, int block) {
  return mono_attend_batch_shared_bytes(dim, keys, mono_attend_mma_score_parts(dim, keys, block));
}

// gfx950 (v_mfma_f32_16x16x32_bf16, 64-lane waves): keys (scores) and dims
// (values) are the 16 rows, k is 32 (dims, then keys, so keys come in 32s);
// the 16 columns are the heads (scores) or the heads' high and low weight
// halves side by side (values); every wave takes the same number of dim tiles.
MONO_SHAPE int mono_attend_mfma_score_parts(int dim, int keys, int block) {
  return mono_attend_batch_score_parts(dim, keys, block / 64, 32);
}
MONO_SHAPE bool mono_attend_mfma_fits(int heads, int dim, int nope, int keys, int block) {
  return block % 64 == 0 && keys % 32 == 0 && mono_attend_batch_fits(heads, dim, nope, keys, block) &&
         (dim / 16) % (block / 64) == 0;
}
MONO_SHAPE int mono_attend_mfma_shared_bytes(int dim, int keys, int block) {
  return mono_attend_batch_shared_bytes(dim, keys, mono_attend_mfma_score_parts(dim, keys, block));
}

#endif
