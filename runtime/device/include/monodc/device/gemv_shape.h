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

// The tensor-core path (mono_gemv_mma, gemv_mma.h) on arches with an f16
// matrix instruction of 16 rows x 8 tokens x 16 k and an e4m3 -> f16
// conversion (sm_90): weights of e4m3 or MXFP4 (tokens MXFP8), whose k
// blocks of 32 are their scale blocks; the
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
// (MXFP4 included: with its scale words read once for two blocks and the
// routed tasks at 128 rows, its tensor-core loop is faster than
// mono_gemv_rows' weight ring.)
MONO_SHAPE bool mono_gemv_mma_chosen(int rows, int k, int kind, int block) {
  return mono_gemv_mma_fits(rows, k, kind, block);
}
// How the tensor-core path spreads a slice over the block's warps: tiles of
// 16 rows, each warp `mono_gemv_mma_tiles_a_warp` of them, or, when there
// are fewer tiles than warps, each tile's k blocks split over
// `mono_gemv_mma_split` warps; a lane keeps `mono_gemv_mma_depth` blocks of
// weights in flight (gemv_mma.h says why those numbers).
MONO_SHAPE int mono_gemv_mma_tiles_a_warp(int rows, int block) {
  return rows / 16 >= block / 32 ? (rows / 16) / (block / 32) : 1;
}
MONO_SHAPE int mono_gemv_mma_split(int rows, int block) {
  return rows / 16 >= block / 32 ? 1 : (block / 32) / (rows / 16);
}
MONO_SHAPE int mono_gemv_mma_depth(int rows, int kind, int block) {
  return kind == 3 ? 16 / mono_gemv_mma_tiles_a_warp(rows, block) : 8;
}
// The most k blocks one warp of a split takes (splits differ by one at most).
MONO_SHAPE int mono_gemv_mma_split_blocks(int rows, int k, int block) {
  return (k / 32 + mono_gemv_mma_split(rows, block) - 1) / mono_gemv_mma_split(rows, block);
}
// The tokens are staged in shared memory as f16 values of their codes (the
// type sm_90's tensor cores take; exact), a pass of tokens and a chunk of k
// at a time: every split's next `chunk` blocks, 64 bytes a token and block,
// each token's row padded by 64 bytes so that the 8 tokens of a tile's
// operand loads fall in distinct banks, and their scales as f32. A pass and
// a chunk may take 96 KB (routed.ug's slot, 8 tokens of 5120, fits whole).
MONO_SHAPE int mono_gemv_mma_stage_budget() { return 98304; }
MONO_SHAPE int mono_gemv_mma_staged_bytes(int pass, int split, int chunk) {
  return pass * (split * chunk * 64 + 64) + split * chunk * pass * 4;
}
// Tokens one pass stages (each pass reads the weights again): 48 at most (6
// tiles of 8, each block of weights converted once for all of them), and
// as many as a chunk of one step of blocks leaves room for. Where that is
// fewer than the tokens, the passes it takes share the tokens evenly, in
// whole tiles of 8 where those still fit: 48 tokens in passes of 43 and 5
// (7 tiles, with which ptxas spilled at grid 132) become two of 24 (6).
MONO_SHAPE int mono_gemv_mma_pass_tokens(int rows, int k, int tokens, int kind, int block) {
  const int split = mono_gemv_mma_split(rows, block), most = mono_gemv_mma_split_blocks(rows, k, block);
  const int depth = mono_gemv_mma_depth(rows, kind, block);
  const int first = depth < most ? depth : most;
  int pass = tokens < 48 ? tokens : 48;
  while (pass > 1 && mono_gemv_mma_staged_bytes(pass, split, first) > mono_gemv_mma_stage_budget())
    --pass;
  if (pass >= tokens)
    return pass;
  const int passes = (tokens + pass - 1) / pass;
  const int even = (tokens + passes - 1) / passes, tiled = (even + 7) / 8 * 8;
  return tiled <= pass ? tiled : even;
}
// A split's blocks a chunk: all of them when they fit, else whole steps
// (multiples of the depth, so that a step never straddles two chunks).
MONO_SHAPE int mono_gemv_mma_chunk_blocks(int rows, int k, int tokens, int kind, int block) {
  const int pass = mono_gemv_mma_pass_tokens(rows, k, tokens, kind, block);
  const int split = mono_gemv_mma_split(rows, block), most = mono_gemv_mma_split_blocks(rows, k, block);
  const int depth = mono_gemv_mma_depth(rows, kind, block);
  if (mono_gemv_mma_staged_bytes(pass, split, most) <= mono_gemv_mma_stage_budget()) return most;
  int chunk = depth;
  while (mono_gemv_mma_staged_bytes(pass, split, chunk + depth) <= mono_gemv_mma_stage_budget())
    chunk += depth;
  return chunk;
}
// Chunks a pass (the last may hold fewer blocks).
MONO_SHAPE int mono_gemv_mma_chunks(int rows, int k, int tokens, int kind, int block) {
  const int chunk = mono_gemv_mma_chunk_blocks(rows, k, tokens, kind, block);
  return (mono_gemv_mma_split_blocks(rows, k, block) + chunk - 1) / chunk;
}
// A staged token row's bytes.
MONO_SHAPE int mono_gemv_mma_row_bytes(int rows, int k, int tokens, int kind, int block) {
  return mono_gemv_mma_split(rows, block) * mono_gemv_mma_chunk_blocks(rows, k, tokens, kind, block) * 64 + 64;
}
// Its shared memory, in this order: the staged tokens ([pass][row bytes]),
// their scales ([split x chunk][pass] f32), the partial sums of the warps
// that split a tile's k ([warps][16][pass] f32) and the result ([tokens][rows]).
MONO_SHAPE int mono_gemv_mma_scales_at(int rows, int k, int tokens, int kind, int block) {
  return mono_gemv_mma_pass_tokens(rows, k, tokens, kind, block) *
         mono_gemv_mma_row_bytes(rows, k, tokens, kind, block);
}
MONO_SHAPE int mono_gemv_mma_partials_at(int rows, int k, int tokens, int kind, int block) {
  return mono_gemv_mma_scales_at(rows, k, tokens, kind, block) +
         mono_gemv_mma_split(rows, block) * mono_gemv_mma_chunk_blocks(rows, k, tokens, kind, block) *
             mono_gemv_mma_pass_tokens(rows, k, tokens, kind, block) * 4;
}
MONO_SHAPE int mono_gemv_mma_result_at(int rows, int k, int tokens, int kind, int block) {
  return mono_gemv_mma_partials_at(rows, k, tokens, kind, block) +
         (block / 32) * 16 * mono_gemv_mma_pass_tokens(rows, k, tokens, kind, block) * 4;
}
MONO_SHAPE int mono_gemv_mma_shared_bytes(int rows, int k, int tokens, int kind, int block) {
  return mono_gemv_mma_result_at(rows, k, tokens, kind, block) + tokens * rows * 4;
}

// Groups a weight ring holds: the compiler sizes rings with it; the device
// derives it from the ring's bytes. (An enumerator: a constant variable
// that a translation unit does not use draws a warning from nvrtc.)
enum { mono_ring_stages = 4 };

// gemv_rows on gfx950's MFMA (gemv_mfma.h): weights e4m3 (kind 0) or MXFP4
// (3) on the scaled 16x16x128 form, k in steps of 128, or bf16 (1) on the
// 16x16x32 bf16 form, k in steps of 32; rows in tiles of 16, blocks of
// 64-lane waves; tiles spread over the waves, or each tile's steps split
// over several waves when there are fewer tiles than waves.
MONO_SHAPE bool mono_gemv_mfma_fits(int rows, int k, int kind, int block) {
  const int step = kind == 1 ? 32 : 128;
  if ((kind != 0 && kind != 1 && kind != 3) || rows <= 0 || rows % 16 != 0 || k <= 0 ||
      k % step != 0 || block % 64 != 0 || block == 0)
    return false;
  const int tiles = rows / 16, waves = block / 64;
  return tiles % waves == 0 || waves % tiles == 0;
}
MONO_SHAPE int mono_gemv_mfma_tiles_a_wave(int rows, int block) {
  return rows / 16 >= block / 64 ? (rows / 16) / (block / 64) : 1;
}
MONO_SHAPE int mono_gemv_mfma_split(int rows, int block) {
  return rows / 16 >= block / 64 ? 1 : (block / 64) / (rows / 16);
}
// Token tiles of 16 a pass: each (row tile, token tile) takes 4 accumulator
// registers a lane; at most 64 of them, so 4 row tiles a wave take 4 token
// tiles (64 tokens) a pass. Each pass reads the weights again.
MONO_SHAPE int mono_gemv_mfma_pass_tiles(int rows, int tokens, int block) {
  const int most = 16 / mono_gemv_mfma_tiles_a_wave(rows, block);
  const int tiles = (tokens + 15) / 16;
  return tiles < most ? tiles : (most > 0 ? most : 1);
}
// Steps a lane's weights are loaded ahead of their instructions: 128 bytes
// of weights a lane, at most the steps of a split. Where a pass takes
// several token tiles (rows 17 to 48), each step also loads their operands
// and the scheduler issues a group's loads together, so the group is cut
// to 64 registers a lane of loads (4 steps held 250 registers in back.wo_a
// at rows 48).
MONO_SHAPE int mono_gemv_mfma_depth(int rows, int k, int tokens, int kind, int block) {
  const int steps = k / (kind == 1 ? 32 : 128), split = mono_gemv_mfma_split(rows, block);
  const int most = (steps + split - 1) / split;
  const int tokenTiles = mono_gemv_mfma_pass_tiles(rows, tokens, block);
  const int weightWords = mono_gemv_mfma_tiles_a_wave(rows, block) * (kind == 0 ? 8 : 4);
  const int tokenWords = tokenTiles * (kind == 1 ? 4 : 8);
  const int want = 32 / weightWords, fit = tokenTiles > 1 ? 64 / (weightWords + tokenWords) : want;
  const int depth = want < fit ? want : fit;
  return depth < 1 ? 1 : (depth < most ? depth : most);
}
// Shared memory: the split waves' partial sums ([waves][16][16 x pass
// tiles] f32, when split), then the result ([tokens][rows] f32).
MONO_SHAPE int mono_gemv_mfma_result_at(int rows, int tokens, int block) {
  return mono_gemv_mfma_split(rows, block) > 1
             ? (block / 64) * 16 * 16 * mono_gemv_mfma_pass_tiles(rows, tokens, block) * 4
             : 0;
}
MONO_SHAPE int mono_gemv_mfma_shared_bytes(int rows, int tokens, int block) {
  return mono_gemv_mfma_result_at(rows, tokens, block) + tokens * rows * 4;
}


#endif
