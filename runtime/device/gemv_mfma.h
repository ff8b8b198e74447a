// monodc device library: gemv_rows on gfx950's matrix cores.
//
// v_mfma_scale_f32_16x16x128_f8f6f4 (mono_mfma_scale_16x16x128, arch_gfx950.h;
// docs/gfx950-matrix-cores.md) takes the quantized codes and their E8M0
// scales as they are: weights are its A operand (a tile of 16 rows), tokens
// its B operand (a tile of 16 tokens, zero codes past `count`), 128 k an
// instruction. Nothing is dequantized per value: a lane loads its codes
// (16-byte loads) and one scale byte a tile, and the instruction applies
// both blocks' scales. The result is the sum of the exact products, each
// instruction's 128 scaled terms added to the f32 accumulator with one
// rounding (the host model's assumption; docs/gfx950-matrix-cores.md).
// mono_gemv_rows rounds the tokens to bf16 first, so the two agree within
// the stage bounds, not bit for bit.
//
// Lane l (g = l / 16, r = l % 16) of a tile holds for each 128-k step:
//   e4m3 weights (row-major, 32x32 block scales): row r, k 16 g .. 16 g + 15
//     and 64 + 16 g .. 64 + 16 g + 15 (two 16-byte loads); scale of block g;
//   MXFP4 weights (AITER's (16, 16) shuffle): row r's k block g, 32 codes,
//     which the shuffle keeps as 16 contiguous bytes (one load, no reshuffle);
//     scale of block g (one byte of AITER's shuffled scales);
//   tokens (MXFP8): token r, the k of the e4m3 rule above, scale of block g.
// Its four results are rows 4 g .. 4 g + 3 of the tile, token r.
//
// bf16 weights over bf16 tokens (WKIND 1, no scales) take
// v_mfma_f32_16x16x32_bf16 (mono_mfma_bf16_16x16x32) the same way, 32 k a
// step: lane (g, r) holds row r's (token r's) k 8 g .. 8 g + 7, one 16-byte
// load each; every product is exact in f32, and each instruction adds its
// 32 to the accumulator with one rounding (the model's assumption).

// Its shape (gemv_shape.h: mono_gemv_mfma_fits and the rest) is planned by
// the compiler too.

// gfx942 has no scaled form: its e4m3 and MXFP4 GEMVs take its fp8 MFMA
// (v_mfma_f32_16x16x32_fp8_fp8, FNUZ codes, no scales) one 32-k block an
// instruction, the scales applied in software (MONO_HAS_FNUZ_FP8_MFMA; the
// block below `mono_gemv_fp8_step`).
#if defined(MONO_HAS_MFMA_BF16)

#if defined(MONO_HAS_FNUZ_FP8_MFMA)
// gfx942's fp8 MFMA reads FNUZ e4m3 (bias 8, 0x80 NaN): the bits of an OCP
// e4m3 code read as FNUZ are half its value, subnormals too, except -0
// (0x80), which must become 0. Each word's bytes with a zero magnitude lose
// their sign (no carry crosses a byte: 0x7F + 0x7F < 0x100).
MONO_DEV mono_u32 mono_e4m3_as_fnuz(mono_u32 w) {
  const mono_u32 nonzero = ((w & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) & 0x80808080u;
  return w & (nonzero | 0x7F7F7F7Fu);
}
// Eight e2m1 codes (byte p: code 2p in bits 3..0, 2p + 1 in 7..4) as FNUZ
// e4m3 bytes of half their values (every one exact): codes 0..3 in lo,
// 4..7 in hi. Magnitudes 0 .5 1 1.5 2 3 4 6 halve to 0x00 0x30 0x38 0x3C
// 0x40 0x44 0x48 0x4C; the sign is set where the magnitude is not zero.
MONO_DEV void mono_e2m1x8_as_fnuz(mono_u32 w, mono_u32 &lo, mono_u32 &hi) {
  const mono_u32 even = w & 0x0F0F0F0Fu, odd = (w >> 4) & 0x0F0F0F0Fu;
  const mono_u32 codes[2] = {mono_perm_b32(odd, even, 0x05010400u), mono_perm_b32(odd, even, 0x07030602u)};
  mono_u32 out[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const mono_u32 magnitude = codes[h] & 0x07070707u;
    const mono_u32 value = mono_perm_b32(0x4C484440u, 0x3C383000u, magnitude);
    out[h] = value | ((codes[h] << 4) & (magnitude + 0x7F7F7F7Fu) & 0x80808080u);
  }
  lo = out[0], hi = out[1];
}
struct __attribute__((aligned(8))) mono_u32_pair { mono_u32 x, y; };
#endif

// A lane's share of the weights: its row of each of its tiles for the steps
// in flight (mono_gemv_mfma_depth: TOKENS sets how many), with the scale
// bytes. `prefetch` loads the first DEPTH steps (a task issues it before it
// polls for its tokens).
template <int N, int K, int TOKENS, int WKIND>
struct mono_gemv_mfma_weights {
  static_assert(mono_gemv_mfma_fits(N, K, WKIND, MONO_BLOCK), "no matrix-core shape for this gemv");
  static constexpr bool FP4 = WKIND == 3, BF16 = WKIND == 1;
#if defined(MONO_HAS_FNUZ_FP8_MFMA)
  static constexpr bool SOFT = !BF16;  // gfx942: fp8 MFMA, scales in software
#else
  static constexpr bool SOFT = false;
#endif
  static constexpr int STEP_K = BF16 ? 32 : 128;  // k an instruction
  static constexpr int WAVES = MONO_BLOCK / 64, TILES = N / 16, STEPS = K / STEP_K;
  static constexpr int TPW = mono_gemv_mfma_tiles_a_wave(N, MONO_BLOCK);
  static constexpr int SPLIT = mono_gemv_mfma_split(N, MONO_BLOCK);  // waves a tile
  static constexpr int WORDS = FP4 || BF16 ? 4 : 8;  // a lane's operand words a tile and step
  // gfx942's step holds more between loads and instructions (the
  // exchanged and converted words, the scales): half the steps in flight.
  static constexpr int DEPTH_ALL = mono_gemv_mfma_depth(N, K, TOKENS, WKIND, MONO_BLOCK);
  static constexpr int DEPTH = SOFT ? (DEPTH_ALL + 1) / 2 : DEPTH_ALL;
  struct step_t {
    mono_u32 q[TPW][WORDS];
    mono_u32 s[TPW];  // the scale byte, in bits 0..7
  };
  step_t held[DEPTH];
  const mono_u8 *row[TPW];       // the lane's codes at step 0
  const mono_u8 *scaleRow[TPW];  // its scale byte at step 0

  MONO_DEV static int wave() { return mono_tid() / 64; }
  MONO_DEV static int firstTile() { return TILES >= WAVES ? wave() * TPW : wave() / SPLIT; }
  MONO_DEV static int stepBegin() { return (wave() % SPLIT) * STEPS / SPLIT; }
  MONO_DEV static int stepEnd() { return (wave() % SPLIT + 1) * STEPS / SPLIT; }

  MONO_DEV void locate(const mono_u8 *w, const mono_u8 *ws, int wsCols, mono_i64 n0) {
    const int lane = mono_tid() % 64, g = lane / 16, r = lane % 16;
#pragma unroll
    for (int i = 0; i < TPW; ++i) {
      const mono_i64 rw = n0 + 16 * (firstTile() + i) + r;
      if (BF16) {
        row[i] = w + 2 * (rw * K + 8 * g);
        scaleRow[i] = w;  // no scales
      } else if (FP4) {
        // Block g's 16 bytes; block 4 s + g is 1024 s bytes on.
        row[i] = w + mono_aiter_weight_offset(rw, 16 * g, K / 2);
        scaleRow[i] = ws + mono_aiter_scale_row(rw, wsCols) + mono_aiter_scale_col((unsigned)g);
      } else if (SOFT) {
        // The tile's four block scales of a step are one aligned word
        // (wsCols = K / 32, a multiple of 4).
        row[i] = w + rw * K + 16 * g;
        scaleRow[i] = ws + mono_block_scale_offset(rw, 0, wsCols);
      } else {
        row[i] = w + rw * K + 16 * g;
        scaleRow[i] = ws + mono_block_scale_offset(rw, 0, wsCols) + g;
      }
    }
  }
  MONO_DEV void load(step_t &b, int s) const {
#pragma unroll
    for (int i = 0; i < TPW; ++i) {
      if (BF16) {
        const mono_u32x4 v = *(const mono_u32x4 *)(row[i] + 64 * s);
        b.q[i][0] = v.x, b.q[i][1] = v.y, b.q[i][2] = v.z, b.q[i][3] = v.w;
        b.s[i] = 0;
      } else if (FP4) {
        const mono_u32x4 v = *(const mono_u32x4 *)(row[i] + 1024 * s);
        b.q[i][0] = v.x, b.q[i][1] = v.y, b.q[i][2] = v.z, b.q[i][3] = v.w;
        // Column 4 s + g: mono_aiter_scale_col(4 s + g) - mono_aiter_scale_col(g).
        b.s[i] = scaleRow[i][256 * (s / 2) + 2 * (s % 2)];
      } else {
        const mono_u32x4 lo = *(const mono_u32x4 *)(row[i] + 128 * s);
        const mono_u32x4 hi = *(const mono_u32x4 *)(row[i] + 128 * s + 64);
        b.q[i][0] = lo.x, b.q[i][1] = lo.y, b.q[i][2] = lo.z, b.q[i][3] = lo.w;
        b.q[i][WORDS - 4] = hi.x, b.q[i][WORDS - 3] = hi.y;
        b.q[i][WORDS - 2] = hi.z, b.q[i][WORDS - 1] = hi.w;
        b.s[i] = SOFT ? *(const mono_u32 *)(scaleRow[i] + 4 * s) : scaleRow[i][4 * s];
      }
    }
  }
  MONO_DEV void prefetch(const mono_u8 *w, const mono_u8 *ws, int wsCols, mono_i64 n0) {
    locate(w, ws, wsCols, n0);
    const int first = stepBegin(), end = stepEnd();
#pragma unroll
    for (int d = 0; d < DEPTH; ++d)
      if (first + d < end) load(held[d], first + d);
  }
};

#if defined(MONO_HAS_FNUZ_FP8_MFMA)
// One 128-k step on gfx942: each (row tile, token tile) takes four fp8
// MFMAs, one a 32-k block (the blocks of the E8M0 scales), each with C = 0;
// each result is scaled by its weight and token block scales and added to
// the accumulator: acc += ldexp(d, sw + sx - 252), two roundings a block
// (the 4 is the FNUZ halving of both operands). The instruction needs a
// block's 32 k spread over the four lanes of a row (8 each), but a lane's
// 16-byte loads hold 16 k of one block (e4m3) or a whole block (MXFP4), so
// the lanes of a row exchange words (ds_bpermute): e4m3 with the lane 32
// on, MXFP4 a 4 x 4 word transpose (32 on, then 16 on). After it lane g of
// a row holds k 16 (g & 1) + 8 (g >> 1) .. + 7 of each block (e4m3) or
// k 8 g .. 8 g + 7 (MXFP4); the tokens are loaded at the same k (8 bytes),
// so A and B pair the same k in each instruction.
template <int TTP, int N, int K, int TOKENS, int WKIND>
MONO_DEV void mono_gemv_fp8_step(const typename mono_gemv_mfma_weights<N, K, TOKENS, WKIND>::step_t &cur,
                                 int s, const mono_u8 *const (&tok)[TTP],
                                 const mono_u8 *const (&tokScale)[TTP], const mono_u32 (&live)[TTP],
                                 int tcn, float (&acc)[mono_gemv_mfma_weights<N, K, TOKENS, WKIND>::TPW][TTP][4]) {
  typedef mono_gemv_mfma_weights<N, K, TOKENS, WKIND> slice_t;
  constexpr int TPW = slice_t::TPW;
  constexpr bool FP4 = slice_t::FP4;
  const int g = (mono_tid() % 64) / 16;
  // The token tiles' codes (FNUZ) of the four blocks, and their scale bytes.
  mono_u32 b[TTP][4][2];
  mono_u32 bs[TTP];
#pragma unroll
  for (int j = 0; j < TTP; ++j) {
    if (j == 0 || 16 * j < tcn) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const mono_u32_pair v = *(const mono_u32_pair *)(tok[j] + 128 * s + 32 * q);
        b[j][q][0] = mono_e4m3_as_fnuz(v.x & live[j]);
        b[j][q][1] = mono_e4m3_as_fnuz(v.y & live[j]);
      }
      bs[j] = *(const mono_u32 *)(tokScale[j] + 4 * s);
    }
  }
#pragma unroll
  for (int i = 0; i < TPW; ++i) {
    mono_u32 a[4][2];  // block q's operand
    if constexpr (FP4) {
      // W[q] (codes 8 q .. of block 4 s + g) to Z[q] = lane q's W[g].
      const bool upper = (g & 2) != 0, odd = (g & 1) != 0;
      mono_u32 y[4], z[4];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const mono_u32 got = mono_lane_xor_u32(upper ? cur.q[i][h] : cur.q[i][2 + h], 32);
        y[h] = upper ? got : cur.q[i][h];
        y[2 + h] = upper ? cur.q[i][2 + h] : got;
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const mono_u32 got = mono_lane_xor_u32(odd ? y[2 * h] : y[2 * h + 1], 16);
        z[2 * h] = odd ? got : y[2 * h];
        z[2 * h + 1] = odd ? y[2 * h + 1] : got;
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) mono_e2m1x8_as_fnuz(z[q], a[q][0], a[q][1]);
    } else {
      // Run h (k 64 h + 16 g ..) holds block 2 h (g < 2) or 2 h + 1: each
      // lane keeps the half of its run that stays and takes its partner's.
      const bool upper = g >= 2;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const mono_u32 *w = cur.q[i] + 4 * h;
        mono_u32 got[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          got[e] = mono_lane_xor_u32(upper ? w[e] : w[2 + e], 32);
          a[2 * h][e] = mono_e4m3_as_fnuz(upper ? got[e] : w[e]);
          a[2 * h + 1][e] = mono_e4m3_as_fnuz(upper ? w[2 + e] : got[e]);
        }
      }
    }
    // The weight scale bytes of the lane's results: e4m3 one a block for
    // the tile (byte q of cur.s); MXFP4 one a row (4 g + v) and block.
    // There lane (g, r) loaded row r's byte of block g (as on gfx950): the
    // row's four lanes gather them into one word (byte q: block q), and
    // lane (g, r) reads the words of rows 4 g .. 4 g + 3 from lanes 4 g + v.
    mono_u32 ws[4][4];
    if constexpr (FP4) {
      mono_u32 word = cur.s[i] << (8 * g);
      word |= mono_lane_xor_u32(word, 32);
      word |= mono_lane_xor_u32(word, 16);
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const mono_u32 rowWord = mono_lane_get_u32(word, 4 * g + v);
#pragma unroll
        for (int q = 0; q < 4; ++q) ws[q][v] = (rowWord >> (8 * q)) & 255u;
      }
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int v = 0; v < 4; ++v) ws[q][v] = (cur.s[i] >> (8 * q)) & 255u;
    }
#pragma unroll
    for (int j = 0; j < TTP; ++j) {
      if (j == 0 || 16 * j < tcn) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          float d[4];
          mono_mfma_fp8_16x16x32(a[q], b[j][q], d);
          const int sx = (int)((bs[j] >> (8 * q)) & 255u) - 252;
#pragma unroll
          for (int v = 0; v < 4; ++v) acc[i][j][v] += mono_ldexp(d[v], (int)ws[q][v] + sx);
        }
      }
    }
  }
}
#endif

// result[t * N + j] = sum_k x[t0 + t][k] * W[n0 + j][k] for TOKENS tokens,
// dealt to the lanes as mono_gemv_rows deals them (out[s] is value
// s * MONO_BLOCK + tid). With a runtime `count` (0 .. TOKENS, block-uniform)
// only the first `count` tokens are read and summed, the others' results
// are 0, and a count of 0 reads no weights past those `weights` holds.
// `lds` holds mono_gemv_mfma_shared_bytes(N, TOKENS, MONO_BLOCK).
template <int SO, int N, int K, int TOKENS, int WKIND>
MONO_DEV void mono_gemv_mfma_run(mono_gemv_mfma_weights<N, K, TOKENS, WKIND> &weights, const mono_u8 *w,
                                 const mono_u8 *ws, int wsCols, mono_i64 n0, const void *x,
                                 const mono_u8 *xs, mono_i64 t0, float (&out)[SO], float *lds,
                                 int count = TOKENS) {
  typedef mono_gemv_mfma_weights<N, K, TOKENS, WKIND> slice_t;
  typedef typename slice_t::step_t step_t;
  constexpr int TPW = slice_t::TPW, SPLIT = slice_t::SPLIT, DEPTH = slice_t::DEPTH,
                WORDS = slice_t::WORDS, KB = K / 32;
  constexpr bool BF16 = slice_t::BF16, SOFT = slice_t::SOFT, FP4 = slice_t::FP4;
  constexpr int FA = WKIND == 3 ? 4 : 0;  // the instruction's A format: e2m1 or e4m3
  constexpr int TTP = mono_gemv_mfma_pass_tiles(N, TOKENS, MONO_BLOCK);  // token tiles a pass
  constexpr int PT = 16 * TTP;
  float *partial = lds;
  // A constant here: called at run time, the function is not always inlined.
  constexpr int RESULT_AT = mono_gemv_mfma_result_at(N, TOKENS, MONO_BLOCK);
  float *result = (float *)((mono_u8 *)lds + RESULT_AT);
  const int tid = mono_tid(), lane = tid % 64, g = lane / 16, r = lane % 16;
  const int begin = slice_t::stepBegin(), end = slice_t::stepEnd();
  for (int tc0 = 0; tc0 < count; tc0 += PT) {
    const int tcn = count - tc0 < PT ? count - tc0 : PT;
    if (tc0 > 0) weights.prefetch(w, ws, wsCols, n0);  // the weights again
    // The lane's token of each tile, and whether it is one: lanes past the
    // pass read its first token (no branch) and give zero codes instead.
    const mono_u8 *tok[TTP];
    const mono_u8 *tokScale[TTP];
    mono_u32 live[TTP];  // all ones or 0
#pragma unroll
    for (int j = 0; j < TTP; ++j) {
      const int t = 16 * j + r;
      live[j] = t < tcn ? ~0u : 0u;
      const mono_i64 at = t0 + tc0 + (t < tcn ? t : 0);
      // SOFT: a block's 8 k of the lane, at the offset the weights' exchange
      // leaves them (mono_gemv_fp8_step); its scale word holds 4 blocks.
      const int soft = FP4 ? 8 * g : 16 * (g & 1) + 8 * (g >> 1);
      tok[j] = BF16   ? (const mono_u8 *)x + 2 * (at * K + 8 * g)
               : SOFT ? (const mono_u8 *)x + at * K + soft
                      : (const mono_u8 *)x + at * K + 16 * g;
      tokScale[j] = BF16 ? tok[j] : xs + at * KB + (SOFT ? 0 : g);
    }
    float acc[TPW][TTP][4];
#pragma unroll
    for (int i = 0; i < TPW; ++i)
#pragma unroll
      for (int j = 0; j < TTP; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
    // One step: the token tiles' operand words (e4m3: two 16-byte runs and
    // the block's scale; bf16: one 16-byte run), then an instruction for each
    // (row tile, token tile) that holds a token.
    constexpr int TW = BF16 ? 4 : 8, STEP_BYTES = BF16 ? 64 : 128;  // token words, bytes a step
    auto step = [&](const step_t &cur, int s) {
      if constexpr (SOFT) {
#if defined(MONO_HAS_FNUZ_FP8_MFMA)
        mono_gemv_fp8_step<TTP, N, K, TOKENS, WKIND>(cur, s, tok, tokScale, live, tcn, acc);
#endif
      } else {
        mono_u32 b[TTP][TW];
        int bs[TTP];
#pragma unroll
        for (int j = 0; j < TTP; ++j) {
          if (j == 0 || 16 * j < tcn) {
            const mono_u32x4 lo = *(const mono_u32x4 *)(tok[j] + STEP_BYTES * s);
            b[j][0] = lo.x & live[j], b[j][1] = lo.y & live[j];
            b[j][2] = lo.z & live[j], b[j][3] = lo.w & live[j];
            if constexpr (!BF16) {
              const mono_u32x4 hi = *(const mono_u32x4 *)(tok[j] + STEP_BYTES * s + 64);
              bs[j] = tokScale[j][4 * s];  // a dead lane's scales only its dropped column
              b[j][4] = hi.x & live[j], b[j][5] = hi.y & live[j];
              b[j][6] = hi.z & live[j], b[j][7] = hi.w & live[j];
            }
          }
        }
#pragma unroll
        for (int i = 0; i < TPW; ++i) {
          if constexpr (BF16) {
            const mono_u32 a[4] = {cur.q[i][0], cur.q[i][1], cur.q[i][2], cur.q[i][3]};
#pragma unroll
            for (int j = 0; j < TTP; ++j)
              if (j == 0 || 16 * j < tcn) mono_mfma_bf16_16x16x32(a, b[j], acc[i][j]);
          } else {
            mono_u32 a[8];
#pragma unroll
            for (int q = 0; q < 8; ++q) a[q] = q < WORDS ? cur.q[i][q < WORDS ? q : 0] : 0u;
#pragma unroll
            for (int j = 0; j < TTP; ++j)
              if (j == 0 || 16 * j < tcn)
                mono_mfma_scale_16x16x128<FA, 0>(a, b[j], acc[i][j], (int)cur.s[i], bs[j]);
          }
        }
      }
    };
    // Groups of DEPTH steps: the next group's weights are loaded while the
    // current one is computed. Groups whose next group is whole take no
    // guard, so that a group is one basic block the scheduler can overlap;
    // the last one or two are guarded.
    int base = begin;
#pragma unroll 1
    for (; base + 2 * DEPTH <= end; base += DEPTH) {
#pragma unroll
      for (int d = 0; d < DEPTH; ++d) {
        const step_t cur = weights.held[d];
        weights.load(weights.held[d], base + DEPTH + d);
        step(cur, base + d);
      }
    }
#pragma unroll 1
    for (; base < end; base += DEPTH) {
#pragma unroll
      for (int d = 0; d < DEPTH; ++d) {
        if (base + d < end) {
          const step_t cur = weights.held[d];
          if (base + DEPTH + d < end) weights.load(weights.held[d], base + DEPTH + d);
          step(cur, base + d);
        }
      }
    }
    // Lane (g, r) holds rows 4 g + e of each tile, token 16 j + r.
#pragma unroll
    for (int i = 0; i < TPW; ++i)
#pragma unroll
      for (int j = 0; j < TTP; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int rowInTile = 4 * g + e, t = 16 * j + r;
          if (t < tcn) {
            if (SPLIT == 1)
              result[(tc0 + t) * N + 16 * (slice_t::firstTile() + i) + rowInTile] = acc[i][j][e];
            else
              partial[(slice_t::wave() * 16 + rowInTile) * PT + t] = acc[i][j][e];
          }
        }
    if (SPLIT > 1) {
      mono_block_sync();
      // Wave v holds split v % SPLIT of tile v / SPLIT: the splits in order.
      for (int q = tid; q < N * tcn; q += MONO_BLOCK) {
        const int rowOfSlice = q / tcn, t = q % tcn, tile = rowOfSlice / 16, rowInTile = rowOfSlice % 16;
        float sum = 0.0f;
        for (int p = 0; p < SPLIT; ++p) sum += partial[((tile * SPLIT + p) * 16 + rowInTile) * PT + t];
        result[(tc0 + t) * N + rowOfSlice] = sum;
      }
    }
    mono_block_sync();
  }
  mono_gemv_zero_past<N, TOKENS>(result, count);
  mono_gemv_deal<SO, TOKENS * N>(result, out);
}

// The whole GEMV when nothing is waited for in between.
template <int SO, int N, int K, int TOKENS, int WKIND>
MONO_DEV void mono_gemv_mfma(const mono_u8 *w, const mono_u8 *ws, int wsCols, mono_i64 n0,
                             const void *x, const mono_u8 *xs, mono_i64 t0, float (&out)[SO],
                             float *lds, int count = TOKENS) {
  mono_gemv_mfma_weights<N, K, TOKENS, WKIND> weights;
  if (count > 0) weights.prefetch(w, ws, wsCols, n0);
  mono_gemv_mfma_run<SO, N, K, TOKENS, WKIND>(weights, w, ws, wsCols, n0, x, xs, t0, out, lds,
                                              count);
}

#endif
