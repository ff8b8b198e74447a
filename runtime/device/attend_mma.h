// monodc device library: mono.attend_chunk on sm_90's tensor cores.
//
// On arches with a bf16 matrix instruction (MONO_HAS_MMA_BF16: sm_90's
// mma.sync m16n8k16), a chunk whose shape fits (attend_shape.h) is the two
// small matrix products of attend_batch.h instead of mono_attend_chunk's f32
// fused multiply-add chains, which ran at a few percent of the CUDA cores'
// peak (every FMA read two shared-memory words, and every 8 keys took five
// block barriers). Keys and dims are the instruction's 16 rows, heads its 8
// columns; the values product takes each weight's two bf16 halves as two
// instructions into one accumulator.
#if defined(MONO_HAS_MMA_BF16)

template <int H, int D, int NOPE, int N, int PT, int DATA, int SS, int SH, int SP>
MONO_DEV void mono_attend_chunk_mma(const mono_u16 *q, const mono_u8 *cache, mono_i64 pageBytes,
                                    float scale, const float (&slots)[SS], float (&m)[SH],
                                    float (&l)[SH], float (&p)[SP], float *lds) {
  static_assert(mono_attend_mma_fits(H, D, NOPE, N, MONO_BLOCK), "no tensor-core shape for this chunk");
  constexpr int WARPS = MONO_BLOCK / 32, KROW = mono_attend_batch_key_words(D);
  constexpr int WROW = mono_attend_batch_weight_words(N);
  constexpr int KEY_TILES = N / 16, PARTS = mono_attend_mma_score_parts(D, N, MONO_BLOCK);
  constexpr int DIM_TILES_PER_WARP = D / 16 / WARPS;
  const mono_u32 *keys = (const mono_u32 *)lds;
  const mono_u32 *queries = (const mono_u32 *)lds + mono_attend_batch_queries_at(D, N);
  float *scores = lds + mono_attend_batch_scores_at(D, N);
  const mono_u32 *high = (const mono_u32 *)lds + mono_attend_batch_weights_at(D, N, PARTS);
  const mono_u32 *low = high + 8 * WROW;
  float *out = lds;  // H x D f32, over the keys once the values product is done
  const int tid = mono_tid(), warp = tid / 32, g = (tid % 32) / 4, t = tid % 4;

  if (!mono_attend_batch_stage<H, D, NOPE, N, PT, DATA, SS, PARTS>(q, cache, pageBytes, slots,
                                                                    lds)) {
    mono_attend_masked_chunk<H, SH, SP>(m, l, p);  // no key: nothing to read
    mono_block_sync();  // every thread has read the slots
    return;
  }
  mono_block_sync();

  // Scores: warp w takes key tile w % KEY_TILES over dim part w / KEY_TILES.
  for (int job = warp; job < KEY_TILES * PARTS; job += WARPS) {
    const int tile = job % KEY_TILES, part = job / KEY_TILES;
    const mono_u32 *a0 = keys + (16 * tile + g) * KROW + t, *a1 = a0 + 8 * KROW;
    const mono_u32 *b = queries + g * KROW + t;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 4
    for (int step = part * (D / 16 / PARTS); step < (part + 1) * (D / 16 / PARTS); ++step) {
      const int w = 8 * step;  // 16 dims
      const mono_u32 a[4] = {a0[w], a1[w], a0[w + 4], a1[w + 4]};
      mono_mma_bf16(acc, a, b[w], b[w + 4]);
    }
    float *s = scores + part * N * 8;
    s[(16 * tile + g) * 8 + 2 * t] = acc[0];
    s[(16 * tile + g) * 8 + 2 * t + 1] = acc[1];
    s[(16 * tile + g + 8) * 8 + 2 * t] = acc[2];
    s[(16 * tile + g + 8) * 8 + 2 * t + 1] = acc[3];
  }
  mono_attend_batch_weights<H, D, N, PARTS>(scale, lds);

  // Values: warp w takes dim tiles w, w + WARPS, ...; A's (dim, key pair)
  // words are put together from the key rows' bf16 halves.
  const mono_u16 *keyHalves = (const mono_u16 *)keys;
  float acc[DIM_TILES_PER_WARP][4];
#pragma unroll
  for (int j = 0; j < DIM_TILES_PER_WARP; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[j][e] = 0.0f;
  for (int step = 0; step < N / 16; ++step) {
    const int k = 16 * step + 2 * t;
    const mono_u32 *hb = high + g * WROW + 8 * step + t, *lb = low + g * WROW + 8 * step + t;
    const mono_u32 bh0 = hb[0], bh1 = hb[4], bl0 = lb[0], bl1 = lb[4];
#pragma unroll
    for (int j = 0; j < DIM_TILES_PER_WARP; ++j) {
      const int d = 16 * (warp + j * WARPS) + g;
      auto pair = [&](int key, int dim) {
        return (mono_u32)keyHalves[key * 2 * KROW + dim] |
               ((mono_u32)keyHalves[(key + 1) * 2 * KROW + dim] << 16);
      };
      const mono_u32 a[4] = {pair(k, d), pair(k, d + 8), pair(k + 8, d), pair(k + 8, d + 8)};
      mono_mma_bf16(acc[j], a, bh0, bh1);
      mono_mma_bf16(acc[j], a, bl0, bl1);
    }
  }
  mono_block_sync();  // every warp is done with the keys: `out` takes their place
#pragma unroll
  for (int j = 0; j < DIM_TILES_PER_WARP; ++j) {
    const int d = 16 * (warp + j * WARPS) + g;
    if (2 * t < H) {
      out[2 * t * D + d] = acc[j][0];
      out[2 * t * D + d + 8] = acc[j][2];
    }
    if (2 * t + 1 < H) {
      out[(2 * t + 1) * D + d] = acc[j][1];
      out[(2 * t + 1) * D + d + 8] = acc[j][3];
    }
  }
  mono_block_sync();
  mono_attend_batch_results<H, D, N, PARTS, SH, SP>(m, l, p, lds);
}

#endif
