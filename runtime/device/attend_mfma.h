// monodc device library: mono.attend_chunk on gfx950's matrix cores.
//
// On arches with the 16x16x32 bf16 MFMA (MONO_HAS_MFMA_BF16), a chunk whose
// shape fits (attend_shape.h) is the two matrix products of attend_batch.h,
// one instruction per 16 keys (or dims) x 32 k x all 16 columns, in place of
// mono_attend_chunk's f32 fused multiply-add chains, which the issue-time
// estimate (monodc report) showed issue-bound on gfx950:
// - scores: a wave takes a key tile (16 rows) over its part of the head
//   dim; the columns are the heads, past H zero;
// - values: a wave takes whole dim tiles; columns 0-7 are the heads' high
//   weight halves and 8-15 their low halves, so one instruction carries
//   both, and lanes r and r + 8 add their results (high + low, in f32).
// Operand words are read from the shared layout with 16-byte loads, except
// the values' keys, which the instruction wants along the keys and the
// layout keeps along the dims: those are gathered as bf16 halves.
#if defined(MONO_HAS_MFMA_BF16)

template <int H, int D, int NOPE, int N, int PT, int DATA, int SS, int SH, int SP>
MONO_DEV void mono_attend_chunk_mfma(const mono_u16 *q, const mono_u8 *cache, mono_i64 pageBytes,
                                     float scale, const float (&slots)[SS], float (&m)[SH],
                                     float (&l)[SH], float (&p)[SP], float *lds) {
  static_assert(mono_attend_mfma_fits(H, D, NOPE, N, MONO_BLOCK), "no MFMA shape for this chunk");
  constexpr int WAVES = MONO_BLOCK / 64, KROW = mono_attend_batch_key_words(D);
  constexpr int WROW = mono_attend_batch_weight_words(N);
  constexpr int KEY_TILES = N / 16, PARTS = mono_attend_mfma_score_parts(D, N, MONO_BLOCK);
  constexpr int STEPS_PER_PART = D / 32 / PARTS, DIM_TILES_PER_WAVE = D / 16 / WAVES;
  const mono_u32 *keys = (const mono_u32 *)lds;
  const mono_u32 *queries = (const mono_u32 *)lds + mono_attend_batch_queries_at(D, N);
  float *scores = lds + mono_attend_batch_scores_at(D, N);
  // The 16 weight rows: 8 of high halves, then 8 of low halves.
  const mono_u32 *halves = (const mono_u32 *)lds + mono_attend_batch_weights_at(D, N, PARTS);
  float *out = lds;  // H x D f32, over the keys once the values product is done
  const int tid = mono_tid(), wave = tid / 64, g = (tid % 64) / 16, r = tid % 16;

  if (!mono_attend_batch_stage<H, D, NOPE, N, PT, DATA, SS, PARTS>(q, cache, pageBytes, slots,
                                                                    lds)) {
    mono_attend_masked_chunk<H, SH, SP>(m, l, p);  // no key: nothing to read
    mono_block_sync();  // every thread has read the slots
    return;
  }
  mono_block_sync();

  // Scores: lane (g, r) gives key 16 tile + r's and head r's dims
  // 32 step + 8 g .. + 7 (4 words); it gets keys 16 tile + 4 g .. + 3 of head r.
  for (int job = wave; job < KEY_TILES * PARTS; job += WAVES) {
    const int tile = job % KEY_TILES, part = job / KEY_TILES;
    const mono_u32 *a = keys + (16 * tile + r) * KROW + 4 * g;
    const mono_u32 *b = queries + (r % 8) * KROW + 4 * g;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 4
    for (int step = part * STEPS_PER_PART; step < (part + 1) * STEPS_PER_PART; ++step) {
      const mono_u32x4 av = *(const mono_u32x4 *)(a + 16 * step);
      const mono_u32x4 bv = *(const mono_u32x4 *)(b + 16 * step);
      const mono_u32 aw[4] = {av.x, av.y, av.z, av.w};
      // Columns 8-15 have no head: zeros.
      const mono_u32 bw[4] = {r < 8 ? bv.x : 0u, r < 8 ? bv.y : 0u, r < 8 ? bv.z : 0u,
                              r < 8 ? bv.w : 0u};
      mono_mfma_bf16_16x16x32(aw, bw, acc);
    }
    if (r < 8) {
      float *s = scores + part * N * 8 + (16 * tile + 4 * g) * 8 + r;
#pragma unroll
      for (int v = 0; v < 4; ++v) s[8 * v] = acc[v];
    }
  }
  mono_attend_batch_weights<H, D, N, PARTS>(scale, lds);

  // Values: wave w takes dim tiles w, w + WAVES, ...; lane (g, r) gives dim
  // 16 tile + r at keys 32 step + 8 g .. + 7 (gathered from the key rows)
  // and weight row r at the same keys; it gets dims 16 tile + 4 g .. + 3 of
  // column r.
  const mono_u16 *keyHalves = (const mono_u16 *)keys;
  float acc[DIM_TILES_PER_WAVE][4];
#pragma unroll
  for (int j = 0; j < DIM_TILES_PER_WAVE; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[j][e] = 0.0f;
#pragma unroll
  for (int step = 0; step < N / 32; ++step) {
    const int k0 = 32 * step + 8 * g;
    const mono_u32x4 bv = *(const mono_u32x4 *)(halves + r * WROW + 16 * step + 4 * g);
    const mono_u32 bw[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
    for (int j = 0; j < DIM_TILES_PER_WAVE; ++j) {
      const int d = 16 * (wave + j * WAVES) + r;
      mono_u32 aw[4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        aw[i] = (mono_u32)keyHalves[(k0 + 2 * i) * 2 * KROW + d] |
                ((mono_u32)keyHalves[(k0 + 2 * i + 1) * 2 * KROW + d] << 16);
      mono_mfma_bf16_16x16x32(aw, bw, acc[j]);
    }
  }
  // Column r + 8 holds the low halves' share of column r's sums.
#pragma unroll
  for (int j = 0; j < DIM_TILES_PER_WAVE; ++j)
#pragma unroll
    for (int v = 0; v < 4; ++v) acc[j][v] += mono_shfl_xor_f32(acc[j][v], 8);
  mono_block_sync();  // every wave is done with the keys: `out` takes their place
  if (r < H) {
#pragma unroll
    for (int j = 0; j < DIM_TILES_PER_WAVE; ++j)
#pragma unroll
      for (int v = 0; v < 4; ++v) out[r * D + 16 * (wave + j * WAVES) + 4 * g + v] = acc[j][v];
  }
  mono_block_sync();
  mono_attend_batch_results<H, D, N, PARTS, SH, SP>(m, l, p, lds);
}

#endif
