// monodc device library: the shape of a gemv_rows weight slice. The
// compiler's shared-memory planning (mono-prepare-emission) includes this
// file too, so the bytes it gives a weight ring are the bytes the device
// lays out. Constant expressions only: no device code, no prelude types.
#ifndef MONO_GEMV_SHAPE_H
#define MONO_GEMV_SHAPE_H

// nvrtc takes an unannotated function for a host one and refuses it; clang's
// HIP makes constexpr functions host and device by itself.
#if defined(__CUDACC__)
#define MONO_SHAPE __host__ __device__ constexpr
#else
#define MONO_SHAPE constexpr
#endif

// kind (WKIND): 0 e4m3 with 32x32 E8M0 block scales, 1 bf16, 2 f32, 3 MXFP4
// (e2m1 with E8M0 per 32, AITER's layouts). A chunk is 16 weights of a row.
MONO_SHAPE bool mono_gemv_scaled(int kind) { return kind == 0 || kind == 3; }
// 16-byte vectors a chunk takes in registers.
MONO_SHAPE int mono_gemv_vectors(int kind) { return mono_gemv_scaled(kind) ? 1 : (kind == 1 ? 2 : 4); }
// Chunks a streaming group: 4, except MXFP4's chunks of 8 bytes go 8 at a
// time (64 bytes in flight a thread, like 4 e4m3 chunks), and f32 chunks,
// four times an e4m3 one, 2 (double-buffered, 4 chunks x 17 registers).
MONO_SHAPE int mono_gemv_group(int kind) { return kind == 3 ? 8 : (mono_gemv_vectors(kind) >= 4 ? 2 : 4); }
// A chunk's weight bytes, and its ring slot: the bytes, then the aligned
// 4-byte word that holds its scale byte.
MONO_SHAPE int mono_gemv_chunk_bytes(int kind) { return kind == 3 ? 8 : 16 * mono_gemv_vectors(kind); }
MONO_SHAPE int mono_gemv_slot(int kind) { return mono_gemv_chunk_bytes(kind) + (mono_gemv_scaled(kind) ? 4 : 0); }

// A thread's slice stays in registers (read once, no streaming and no ring)
// when its chunks take at most 40 registers: 4 a vector, 1 for the scale.
MONO_SHAPE bool mono_gemv_resident(int chunksPerThread, int kind) {
  return chunksPerThread * (4 * mono_gemv_vectors(kind) + 1) <= 40;
}

// The tensor-core path (mono_gemv_mma, gemv_mma.h) on arches with an e4m3
// matrix instruction of 16 rows x 8 tokens x 32 k (sm_90): weights of e4m3
// or MXFP4 (tokens MXFP8), whose k blocks of 32 are their scale blocks; the
// rows in tiles of 16 spread over the block's warps, or each tile's k over
// several warps when there are fewer tiles than warps.
MONO_SHAPE bool mono_gemv_mma_fits(int rows, int k, int kind, int block) {
  if (!mono_gemv_scaled(kind) || rows % 16 != 0 || k % 32 != 0 || block % 32 != 0 || rows == 0)
    return false;
  const int tiles = rows / 16, warps = block / 32;
  if (tiles % warps != 0 && warps % tiles != 0) return false;
  if (kind != 3) return true;
  // MXFP4 tiles go in pairs over 32 rows, and every warp starts at a block
  // that is a multiple of 8, stepping 16 / (tiles a warp) blocks at a time
  // (gemv_mma.h reads one scale word for blocks c and c + 4).
  const int split = tiles >= warps ? 1 : warps / tiles;
  return rows % 32 == 0 && tiles <= 2 * warps && (split == 1 || (k / 32) % (8 * split) == 0);
}
// The gemv_rows the compiler gives the tensor cores: every one that fits.
// (MXFP4 had stayed on mono_gemv_rows' ring while its tensor-core loop was
// slower; with its scale words read once for two blocks and the routed
// tasks at 128 rows, routed.ug's own kernel took 220 us at rows 6 against
// the ring's 335 on the H200: docs/gpu-validation.md.)
MONO_SHAPE bool mono_gemv_mma_chosen(int rows, int k, int kind, int block) {
  return mono_gemv_mma_fits(rows, k, kind, block);
}
// Tokens one pass stages (each pass reads the weights again): 16 at most
// (two tiles of 8), and no more than 64 KB of codes.
MONO_SHAPE int mono_gemv_mma_pass_tokens(int k, int tokens) {
  const int fit = 65536 / (k + 32) < 1 ? 1 : 65536 / (k + 32);
  const int most = tokens < 16 ? tokens : 16;
  return most < fit ? most : fit;
}
// Tokens are staged as f16 values of their codes when a pass is one tile of
// 8 at most and its rows fit 96 KB (8 tokens of 5120, routed.ug's slot;
// sm_90 gives a CTA 227 KB): f16 is what sm_90's tensor cores take, so a
// block step converts only the weights' operand, and MXFP4 weights go to
// f16 directly (gemv_mma.h). Wider passes stage the e4m3 codes, half the bytes.
MONO_SHAPE bool mono_gemv_mma_f16_tokens(int k, int tokens) {
  const int pass = mono_gemv_mma_pass_tokens(k, tokens);
  return pass <= 8 && pass * (2 * k + 64) <= 98304;
}
// A staged token row: its k codes (or f16 values), then 32 (64) bytes, so
// that the 8 tokens of a tile's operand loads fall in distinct banks.
MONO_SHAPE int mono_gemv_mma_row_bytes(int k, int tokens) {
  return mono_gemv_mma_f16_tokens(k, tokens) ? 2 * k + 64 : k + 32;
}
// Its shared memory, in this order: a pass's codes ([pass][row bytes]),
// their scales as f32 ([k / 32][pass]), the partial sums of the warps that
// split a tile's k ([warps][16][pass] f32) and the result ([tokens][rows]).
MONO_SHAPE int mono_gemv_mma_scales_at(int k, int tokens) {
  return mono_gemv_mma_pass_tokens(k, tokens) * mono_gemv_mma_row_bytes(k, tokens);
}
MONO_SHAPE int mono_gemv_mma_partials_at(int k, int tokens) {
  return mono_gemv_mma_scales_at(k, tokens) + (k / 32) * mono_gemv_mma_pass_tokens(k, tokens) * 4;
}
MONO_SHAPE int mono_gemv_mma_result_at(int k, int tokens, int block) {
  return mono_gemv_mma_partials_at(k, tokens) + (block / 32) * 16 * mono_gemv_mma_pass_tokens(k, tokens) * 4;
}
MONO_SHAPE int mono_gemv_mma_shared_bytes(int rows, int k, int tokens, int block) {
  return mono_gemv_mma_result_at(k, tokens, block) + tokens * rows * 4;
}

// Groups a weight ring holds: the compiler sizes rings with it; the device
// derives it from the ring's bytes. (An enumerator: a constant variable
// that a translation unit does not use draws a warning from nvrtc.)
enum { mono_ring_stages = 4 };

#endif
