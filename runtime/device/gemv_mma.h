// monodc device library: gemv_rows on tensor cores.
//
// On arches with f16 matrix instructions and an e4m3 -> f16 conversion
// (MONO_HAS_MMA_F16 and MONO_HAS_E4M3_TO_F16: sm_90), GEMVs whose weights
// are e4m3 or MXFP4 and whose tokens are MXFP8 fit this path
// (gemv_shape.h, mono_gemv_mma_fits), and the compiler gives it every one
// that fits (mono_gemv_mma_chosen). The fma chains of mono_gemv_rows cost
// about ten instructions a weight, which makes those GEMVs issue-bound
// rather than memory-bound; here a matrix instruction covers a whole block
// of products. The tokens are staged as f16 values
// of their codes (exact), a pass of up to 48 tokens (6 tiles of 8) and a
// chunk of k at a time, so a block of weights is converted once for all of
// a pass's tiles: e4m3 by the arch's conversion, MXFP4 directly
// (mono_e2m1x8_to_f16: a few integer operations a word, where an e4m3 step
// would take as many plus eight conversions a block, and the conversions
// are the most issued instructions of routed.ug's loop).
//
// The result is the same sum: for each 32-k block (a block of the weight's
// scales and of the tokens'), the instruction sums the 32 exact products of
// the codes, then acc += sum * (token scale * weight scale) in f32, the
// product of the two powers of two exact, the sum rounded once. The order
// of the additions is not mono_gemv_rows', so results match the simulator
// within the stage bounds, not bit for bit.
//
// A lane (g, t) of the instruction holds rows g and g + 8 of a 16-row tile
// (MXFP4: rows 16 apart, tileRow) and 8 k of each; which physical k its
// slots stand for is free as long as the token operand uses the same: here
// lane t takes k 8t .. 8t + 7 of the block, so a row's block (32 bytes of
// e4m3, 16 of MXFP4: AITER's layout keeps a block's 16 rows x 16 bytes
// together) is read by 4 neighbouring lanes. Tiles spread over the warps, or, when there are fewer tiles than
// warps, each tile's blocks are split over several warps whose partial sums
// are then added in warp order.
#if defined(MONO_HAS_MMA_F16) && defined(MONO_HAS_E4M3_TO_F16)

// Eight MXFP4 codes (low nibble first) as f16 pairs of 2^-14 times their
// values, exactly: a code's sign and its three bits of exponent and
// mantissa are an f16's bits 15 and 11..9 (0.5, the one subnormal code, is
// the f16 subnormal 2^-15). The pairs are codes (0, 2), (1, 3), (4, 6),
// (5, 7), the order in which gemv_mma stages such a GEMV's tokens.
MONO_SHAPE float mono_e2m1_f16_scale() { return 16384.0f; }  // 2^14
MONO_DEV void mono_e2m1x8_to_f16(mono_u32 w, mono_u32 (&pairs)[4]) {
  // Each code's f16 high byte (sign << 7 | bits << 1): codes 0, 2, 4, 6, then 1, 3, 5, 7.
  const mono_u32 even = ((w << 1) & 0x0E0E0E0Eu) | ((w << 4) & 0x80808080u);
  const mono_u32 odd = ((w >> 3) & 0x0E0E0E0Eu) | (w & 0x80808080u);
  pairs[0] = mono_byte_perm(even, 0u, 0x1404u);  // byte 4 is a zero
  pairs[1] = mono_byte_perm(odd, 0u, 0x1404u);
  pairs[2] = mono_byte_perm(even, 0u, 0x3424u);
  pairs[3] = mono_byte_perm(odd, 0u, 0x3424u);
}
// The token order that goes with it: f16 pairs of codes (0, 2), (1, 3) of
// each four, from e4m3 codes 0, 1, 2, 3.
MONO_DEV mono_u32 mono_e2m1_pair_order(mono_u32 codes) { return mono_byte_perm(codes, 0u, 0x3120u); }

struct __attribute__((aligned(8))) mono_u32x2 { mono_u32 x, y; };

// A lane's share of a gemv_rows' weights: for the blocks in flight, its
// words of each of its tiles' two rows and their scale bytes. `prefetch`
// fills the first DEPTH blocks, which a task issues before it polls.
template <int N, int K, int WKIND>
struct mono_gemv_mma_weights {
  static_assert(mono_gemv_mma_fits(N, K, WKIND, MONO_BLOCK), "no tensor-core shape for this gemv");
  static constexpr int WARPS = MONO_BLOCK / 32, TILES = N / 16, KB = K / 32;
  static constexpr int TPW = mono_gemv_mma_tiles_a_warp(N, MONO_BLOCK);
  static constexpr int SPLIT = mono_gemv_mma_split(N, MONO_BLOCK);  // warps a tile
  static constexpr int WORDS = WKIND == 3 ? 1 : 2;  // a row's words of a block
  // Blocks in flight a lane: 8 of e4m3 (128 bytes, 40 registers); 16 of
  // MXFP4 for one tile (128 bytes, 48 registers). More spilled in the dsv41
  // K2 (MXFP4: 24 blocks, e4m3: 16), and more bytes in flight did not make
  // routed.ug faster: they are not what bounds this path.
  static constexpr int DEPTH = mono_gemv_mma_depth(N, WKIND, MONO_BLOCK);
  static_assert(WKIND != 3 || DEPTH % 8 == 0, "MXFP4 steps go whole scale words (8 blocks) at a time");
  struct block_t {
    mono_u32 q[TPW][2][WORDS];  // [tile][row g, g + 8][word]
    mono_u32 s[TPW];            // their scale codes, as mono_e8m0x2_values takes them: MXFP4 row g's
                                // in bits 0..7, row g + 8's in 16..23; e4m3 the block's in 0..7
  };
  block_t held[DEPTH];
  // The lane's two rows of each tile: weight bytes at block 0; the scales'
  // row part, one for both (MXFP4: row g's scale word holds row g + 8's too;
  // e4m3: one scale a 32-row block).
  const mono_u8 *row[TPW][2];
  const mono_u8 *scaleRow[TPW];

  MONO_DEV static int warp() { return mono_tid() / 32; }
  MONO_DEV static int firstTile() { return TILES >= WARPS ? warp() * TPW : warp() / SPLIT; }
  MONO_DEV static int kbBegin() { return (warp() % SPLIT) * KB / SPLIT; }
  MONO_DEV static int kbEnd() { return (warp() % SPLIT + 1) * KB / SPLIT; }
  // The slice's row that row r (0..15) of a tile stands for. e4m3 tiles are
  // 16 rows in order, inside one 32-row scale block. MXFP4 tiles go in
  // pairs over 32 rows, tile 2p + h taking rows 8h + r and 16 + 8h + r
  // (r < 8): a lane's two rows are then 16 apart, and AITER's scale layout
  // keeps such twins in one word, with the same rows' bytes for blocks c
  // and c + 4 beside them (mono_aiter_scale_row, _col).
  MONO_DEV static int tileRow(int tile, int r) {
    return WKIND == 3 ? 32 * (tile / 2) + 8 * (tile % 2) + r % 8 + 16 * (r / 8) : 16 * tile + r;
  }

  MONO_DEV void locate(const mono_u8 *w, const mono_u8 *ws, int wsCols, mono_i64 n0) {
    const int lane = mono_tid() % 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < TPW; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const mono_i64 r = n0 + tileRow(firstTile() + i, g + 8 * h);
        // Block kb of a row is 256 kb bytes on for MXFP4 (AITER: 16 rows x 16 bytes a block).
        row[i][h] = WKIND == 3 ? w + mono_aiter_weight_offset(r, 4 * t, K / 2) : w + r * K + 8 * t;
        if (h == 0)
          scaleRow[i] = ws + (WKIND == 3 ? mono_aiter_scale_row(r, wsCols) : mono_block_scale_offset(r, 0, wsCols));
      }
    }
  }
  // Block `base + d`. For MXFP4, base is a multiple of 8 (mono_gemv_mma_fits
  // asks it of where each warp starts; steps go DEPTH at a time), so the
  // scale word's column part (mono_aiter_scale_word) and which half of it
  // is the block's (the high one when d % 8 >= 4) are fixed by d.
  MONO_DEV void load(block_t &b, int base, int d) const {
    const int kb = base + d;
#pragma unroll
    for (int i = 0; i < TPW; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (WKIND == 3) {
          b.q[i][h][0] = *(const mono_u32 *)(row[i][h] + 256 * kb);
        } else {
          const mono_u32x2 v = *(const mono_u32x2 *)(row[i][h] + 32 * kb);
          b.q[i][h][0] = v.x;
          b.q[i][h][WORDS - 1] = v.y;
        }
      }
#pragma unroll
    for (int i = 0; i < TPW; ++i) {
      if (WKIND == 3) {
        const mono_u32 word =
            *(const mono_u32 *)(scaleRow[i] + mono_aiter_scale_word((unsigned)base, d));
        // Bytes 0, 1 (block d % 8 < 4) or 2, 3 of the word, apart.
        b.s[i] = mono_byte_perm(word, 0u, d % 8 >= 4 ? 0x4342u : 0x4140u);
      } else {
        b.s[i] = scaleRow[i][kb];
      }
    }
  }
  MONO_DEV void prefetch(const mono_u8 *w, const mono_u8 *ws, int wsCols, mono_i64 n0) {
    locate(w, ws, wsCols, n0);
    const int first = kbBegin(), end = kbEnd();
#pragma unroll
    for (int d = 0; d < DEPTH; ++d)
      if (first + d < end) load(held[d], first, d);
  }
};

// result[t * N + j] = sum_k x[t0 + t][k] * W[n0 + j][k] for TOKENS tokens, PT
// of them staged at a time (mono_gemv_mma_pass_tokens); the lane's outputs
// s * MONO_BLOCK + tid in `out`, as mono_gemv_rows gives them. With a
// runtime `count` (0 .. TOKENS, block-uniform), only the first `count`
// tokens are read and summed and the others' results are 0: a count of 0
// reads no weights past those `weights` holds.
template <int SO, int N, int K, int TOKENS, int PT, int WKIND>
MONO_DEV void mono_gemv_mma_run(mono_gemv_mma_weights<N, K, WKIND> &weights, const mono_u8 *w,
                                const mono_u8 *ws, int wsCols, mono_i64 n0, const void *x,
                                const mono_u8 *xs, mono_i64 t0, float (&out)[SO], float *lds,
                                int count = TOKENS) {
  typedef mono_gemv_mma_weights<N, K, WKIND> slice_t;
  constexpr int TPW = slice_t::TPW, SPLIT = slice_t::SPLIT, KB = slice_t::KB,
                DEPTH = slice_t::DEPTH, WORDS = slice_t::WORDS;
  constexpr int TT = (PT + 7) / 8;  // token tiles a pass
  // A split's blocks a chunk of staged tokens, and chunks a pass.
  constexpr int CB = mono_gemv_mma_chunk_blocks(N, K, TOKENS, WKIND, MONO_BLOCK);
  constexpr int CHUNKS = mono_gemv_mma_chunks(N, K, TOKENS, WKIND, MONO_BLOCK);
  constexpr int ROW = mono_gemv_mma_row_bytes(N, K, TOKENS, WKIND, MONO_BLOCK);
  // MXFP4 weights go to f16 directly, 2^-14 times their values
  // (mono_e2m1x8_to_f16), so the tokens are staged in its pair order and
  // their scales 2^14 times theirs (a token scale of 2^114 or more would
  // overflow: values of 2^122; the routed experts' tokens, the normed x and
  // the clamped h, stay far below).
  constexpr bool DIRECT = WKIND == 3;
  // One token: a lane's odd result columns (2t + 1) are never a token's.
  constexpr int COLUMNS = TOKENS == 1 ? 1 : 2;
  static_assert(PT == mono_gemv_mma_pass_tokens(N, K, TOKENS, WKIND, MONO_BLOCK),
                "the compiler's pass is the device's");
  static_assert(CHUNKS == 1 || CB % DEPTH == 0, "a step of blocks never straddles two chunks");
  mono_u8 *codes = (mono_u8 *)lds;
  float *scales = (float *)((mono_u8 *)lds + mono_gemv_mma_scales_at(N, K, TOKENS, WKIND, MONO_BLOCK));
  float *partial = (float *)((mono_u8 *)lds + mono_gemv_mma_partials_at(N, K, TOKENS, WKIND, MONO_BLOCK));
  float *result = (float *)((mono_u8 *)lds + mono_gemv_mma_result_at(N, K, TOKENS, WKIND, MONO_BLOCK));
  const int tid = mono_tid(), lane = tid % 32, g = lane / 4, t = lane % 4;
  const int kbBegin = slice_t::kbBegin(), kbEnd = slice_t::kbEnd();
  const int mySplit = slice_t::warp() % SPLIT;
  for (int tc0 = 0; tc0 < count; tc0 += PT) {
    const int tcn = count - tc0 < PT ? count - tc0 : PT;
    if (tc0 > 0) weights.prefetch(w, ws, wsCols, n0);  // the weights again
    // Token rows past the pass read its last one (their results are dropped).
    int tokRow[TT], tokCol[TT][2];
#pragma unroll
    for (int j = 0; j < TT; ++j) {
      tokRow[j] = 8 * j + g < tcn ? 8 * j + g : tcn - 1;
      tokCol[j][0] = 8 * j + 2 * t < tcn ? 8 * j + 2 * t : tcn - 1;
      tokCol[j][1] = 8 * j + 2 * t + 1 < tcn ? 8 * j + 2 * t + 1 : tcn - 1;
    }
    float acc[TPW][TT][4];
#pragma unroll
    for (int i = 0; i < TPW; ++i)
#pragma unroll
      for (int j = 0; j < TT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
    int base = kbBegin;
#pragma unroll 1
    for (int c = 0; c < CHUNKS; ++c) {
      if (c > 0) mono_block_sync();  // every warp is done with the last chunk
      // The chunk's token scales, one a (token, block): every load issued
      // here, stored after the codes', so that their latencies overlap (a
      // rolled loop of load and store waited one latency a round: a
      // routed.ug task's 8 tokens x 160 blocks are 5 rounds). At most
      // about 6 rounds: the codes of a chunk take 16 times the bytes.
      constexpr int SCALES = PT * SPLIT * CB, SCALE_ROUNDS = (SCALES + MONO_BLOCK - 1) / MONO_BLOCK;
      auto scaleSlot = [&](int i, int &tok, int &sb) {  // whether entry i is one, and which
        tok = i / (SPLIT * CB), sb = i % (SPLIT * CB);
        const int split = sb / CB, kb = split * KB / SPLIT + c * CB + sb % CB;
        return i < tcn * SPLIT * CB && kb < (split + 1) * KB / SPLIT ? kb : -1;
      };
      mono_u8 scaleCode[SCALE_ROUNDS];
#pragma unroll
      for (int r = 0; r < SCALE_ROUNDS; ++r) {
        int tok, sb;
        const int kb = scaleSlot(r * MONO_BLOCK + tid, tok, sb);
        scaleCode[r] = kb >= 0 ? xs[(t0 + tc0 + tok) * KB + kb] : (mono_u8)0;
      }
      // Stage the chunk: split s's blocks s KB / SPLIT + c CB + b (b < CB)
      // at staged block s CB + b, each token's 32 codes as 64 bytes of f16,
      // 16 codes a thread at a time, a round's 4 loads issued before their
      // stores (each would otherwise wait a memory latency in turn; 8 made
      // ptxas spill 2.5 KB in K2 at rows 48).
      constexpr int PIECES = 2 * SPLIT * CB;  // 16-code pieces a token
      constexpr int ROUNDS = 4;
#pragma unroll 1
      for (int i0 = 0; i0 < tcn * PIECES; i0 += ROUNDS * MONO_BLOCK) {
        mono_u32x4 v[ROUNDS];
        int at[ROUNDS];
#pragma unroll
        for (int r = 0; r < ROUNDS; ++r) {
          const int i = i0 + r * MONO_BLOCK + tid, tok = i / PIECES, sb = (i % PIECES) / 2;
          const int split = sb / CB, kb = split * KB / SPLIT + c * CB + sb % CB;
          at[r] = i < tcn * PIECES && kb < (split + 1) * KB / SPLIT ? tok * ROW + 32 * (i % PIECES) : -1;
          if (at[r] >= 0)
            v[r] = *(const mono_u32x4 *)((const mono_u8 *)x + (t0 + tc0 + tok) * K + 32 * kb + 16 * (i % 2));
        }
#pragma unroll
        for (int r = 0; r < ROUNDS; ++r) {
          if (at[r] < 0) continue;
          mono_u32x4 lo, hi;
          if (DIRECT) {
            v[r].x = mono_e2m1_pair_order(v[r].x);
            v[r].y = mono_e2m1_pair_order(v[r].y);
            v[r].z = mono_e2m1_pair_order(v[r].z);
            v[r].w = mono_e2m1_pair_order(v[r].w);
          }
          mono_e4m3x4_to_f16(v[r].x, lo.x, lo.y);
          mono_e4m3x4_to_f16(v[r].y, lo.z, lo.w);
          mono_e4m3x4_to_f16(v[r].z, hi.x, hi.y);
          mono_e4m3x4_to_f16(v[r].w, hi.z, hi.w);
          *(mono_u32x4 *)(codes + at[r]) = lo;
          *(mono_u32x4 *)(codes + at[r] + 16) = hi;
        }
      }
#pragma unroll
      for (int r = 0; r < SCALE_ROUNDS; ++r) {
        int tok, sb;
        if (scaleSlot(r * MONO_BLOCK + tid, tok, sb) < 0) continue;
        const float scale = mono_e8m0_value(scaleCode[r]);
        scales[sb * PT + tok] = DIRECT ? scale * mono_e2m1_f16_scale() : scale;
      }
      mono_block_sync();
      // This warp's blocks of the chunk, and where block kb is staged.
      const int chunkBegin = kbBegin + c * CB;
      const int chunkEnd = chunkBegin + CB < kbEnd ? chunkBegin + CB : kbEnd;
      const int stagedBase = mySplit * CB - chunkBegin;
      // One block step: the tokens' f16 values and scales of block kb, then
      // each tile's weights as f16 (once for all token tiles), two f16
      // instructions a token tile and its scaled sum into the accumulators.
      auto step = [&](const typename slice_t::block_t &cur, int kb) {
        const int sb = stagedBase + kb;
        mono_u32 b[TT][4];  // f16 pairs: k 8t, 8t + 1 (b0) .. 8t + 6, 8t + 7 (b3)
        float xsc[TT][2];
#pragma unroll
        for (int j = 0; j < TT; ++j) {
          const mono_u32x4 v = *(const mono_u32x4 *)(codes + tokRow[j] * ROW + 64 * sb + 16 * t);
          b[j][0] = v.x;
          b[j][1] = v.y;
          b[j][2] = v.z;
          b[j][3] = v.w;
#pragma unroll
          for (int col = 0; col < COLUMNS; ++col) xsc[j][col] = scales[sb * PT + tokCol[j][col]];
        }
#pragma unroll
        for (int i = 0; i < TPW; ++i) {
          // Rows g and g + 8: MXFP4 scales a row (a pair, decoded
          // together), e4m3 one a 32-row block (both rows' the same).
          float wsc[2];
          mono_e8m0x2_values(cur.s[i], wsc[0], wsc[1]);
          // Rows g, g + 8 as f16 pairs, the first instruction taking the
          // token's b0, b1, the second b2, b3. MXFP4: codes (0, 2) of both
          // rows, then (1, 3), the second (4, 6), (5, 7) (the tokens' pair
          // order). e4m3: k 8t .. 8t + 3, then 8t + 4 .. 8t + 7.
          mono_u32 first[4], second[4];
          if (DIRECT) {
            mono_u32 g0[4], g8[4];
            mono_e2m1x8_to_f16(cur.q[i][0][0], g0);
            mono_e2m1x8_to_f16(cur.q[i][1][0], g8);
            first[0] = g0[0], first[1] = g8[0], first[2] = g0[1], first[3] = g8[1];
            second[0] = g0[2], second[1] = g8[2], second[2] = g0[3], second[3] = g8[3];
          } else {
            mono_u32 h[8];  // row g k 8t .. 8t + 3, row g + 8 there, then both at 8t + 4 ..
            mono_e4m3x4_to_f16(cur.q[i][0][0], h[0], h[1]);
            mono_e4m3x4_to_f16(cur.q[i][1][0], h[2], h[3]);
            mono_e4m3x4_to_f16(cur.q[i][0][WORDS - 1], h[4], h[5]);
            mono_e4m3x4_to_f16(cur.q[i][1][WORDS - 1], h[6], h[7]);
            first[0] = h[0], first[1] = h[2], first[2] = h[1], first[3] = h[3];
            second[0] = h[4], second[1] = h[6], second[2] = h[5], second[3] = h[7];
          }
#pragma unroll
          for (int j = 0; j < TT; ++j) {
            if (j == 0 || 8 * j < tcn) {
              float dsum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
              mono_mma_f16(dsum, first, b[j][0], b[j][1]);
              mono_mma_f16(dsum, second, b[j][2], b[j][3]);
              // The two scales' product, a power of two (exact), then one
              // rounding of the scaled sum into the accumulator.
              float both[2][2];
#pragma unroll
              for (int r = 0; r < 2; ++r)
#pragma unroll
                for (int col = 0; col < COLUMNS; ++col)
                  both[r][col] = xsc[j][col] * wsc[DIRECT ? r : 0];
#pragma unroll
              for (int e = 0; e < 4; ++e)
                if (e % 2 < COLUMNS)
                  acc[i][j][e] = mono_fma(dsum[e], both[e / 2][e % 2], acc[i][j][e]);
            }
          }
        }
      };
      // Where every warp's blocks and every chunk are whole groups of DEPTH
      // (dsv41's wo_a, wo_b, shared.gate_up, routed.ug), one unguarded loop:
      // the last group loads its own blocks again (an address select, values
      // unused) instead of the next group's. A second, guarded copy of the
      // loop for the last group would be run once a task, and in a fused
      // kernel such code is fetched from L2 again each time (the fused
      // kernel's stages evict each other's code from the instruction cache).
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
        // Whole groups of DEPTH blocks whose next group is in range take no
        // guard, so the steps of a group are one basic block the scheduler
        // can overlap; the last one or two groups are guarded. Same steps,
        // same order. A chunk holds whole groups (but the last chunk).
#pragma unroll 1
        for (; base + DEPTH <= chunkEnd && base + 2 * DEPTH <= kbEnd; base += DEPTH) {
#pragma unroll
          for (int d = 0; d < DEPTH; ++d) {
            const typename slice_t::block_t cur = weights.held[d];
            weights.load(weights.held[d], base + DEPTH, d);
            step(cur, base + d);
          }
        }
#pragma unroll 1
        for (; base < chunkEnd; base += DEPTH) {
#pragma unroll
          for (int d = 0; d < DEPTH; ++d) {
            const int kb = base + d;
            if (kb < chunkEnd) {
              const typename slice_t::block_t cur = weights.held[d];
              if (kb + DEPTH < kbEnd) weights.load(weights.held[d], base + DEPTH, d);
              step(cur, kb);
            }
          }
        }
      }
    }
    // Each lane's sums: rows 16 tile + g (+ 8), tokens 8j + 2t (+ 1).
#pragma unroll
    for (int i = 0; i < TPW; ++i)
#pragma unroll
      for (int j = 0; j < TT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = g + 8 * (e / 2), tok = 8 * j + 2 * t + e % 2;
          if (tok < tcn) {
            if (SPLIT == 1)
              result[(tc0 + tok) * N + slice_t::tileRow(slice_t::firstTile() + i, r)] = acc[i][j][e];
            else
              partial[(slice_t::warp() * 16 + r) * PT + tok] = acc[i][j][e];
          }
        }
    if (SPLIT > 1) {
      mono_block_sync();
      // Warp w holds split w % SPLIT of tile w / SPLIT: add the splits in order.
      for (int i = tid; i < N * tcn; i += MONO_BLOCK) {
        const int tileAndRow = i / tcn, tok = i % tcn, tile = tileAndRow / 16, r = tileAndRow % 16;
        float s = 0.0f;
        for (int q = 0; q < SPLIT; ++q) s += partial[((tile * SPLIT + q) * 16 + r) * PT + tok];
        result[(tc0 + tok) * N + slice_t::tileRow(tile, r)] = s;
      }
    }
    mono_block_sync();
  }
  mono_gemv_zero_past<N, TOKENS>(result, count);
  mono_gemv_deal<SO, TOKENS * N>(result, out);
}

// The whole GEMV when nothing is waited for in between.
template <int SO, int N, int K, int TOKENS, int PT, int WKIND>
MONO_DEV void mono_gemv_mma(const mono_u8 *w, const mono_u8 *ws, int wsCols, mono_i64 n0,
                            const void *x, const mono_u8 *xs, mono_i64 t0, float (&out)[SO],
                            float *lds, int count = TOKENS) {
  mono_gemv_mma_weights<N, K, WKIND> weights;
  if (count > 0) weights.prefetch(w, ws, wsCols, n0);
  mono_gemv_mma_run<SO, N, K, TOKENS, PT, WKIND>(weights, w, ws, wsCols, n0, x, xs, t0, out, lds,
                                                 count);
}

#endif
