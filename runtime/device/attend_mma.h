// monodc device library: mono.attend_chunk on tensor cores.
//
// On arches with a bf16 matrix instruction (MONO_HAS_MMA_BF16: sm_90's
// mma.sync m16n8k16), a chunk whose shape fits (attend_shape.h) is two small
// matrix products instead of mono_attend_chunk's f32 fused multiply-add
// chains, which ran at a few percent of the CUDA cores' peak (every FMA read
// two shared-memory words, and every 8 keys took five block barriers):
//   scores  S[key][head] = K[key][:] . Q[head][:]   (keys the rows, heads the
//           8 columns, the head dim the k),
//   values  P[dim][head] = sum_key K[key][dim] w[head][key]  (dims the rows).
// The keys are shared by all heads (DSV41's one latent), so they are read
// from the cache once per chunk.
//
// The same numbers as mono_attend_chunk's, in another order:
// - keys in bf16 are exact: e4m3 x 2^(code - 127) has 4 significant bits
//   (bf16 has 8) for every scale the quantizer writes (codes from 105; far
//   smaller ones would lose bf16 denormals), and the rope dims are bf16;
//   queries are bf16. The instruction sums exact products in f32.
// - the chunk is one batch: the max over all its keys first, then
//   w = 2^(t - m) in f32, so there is no running rescale.
// - w enters the values product as two bf16, its nearest and the nearest of
//   the rest (w - high is exact in f32): w to about 2^-17 of itself, where
//   one bf16 would be 2^-9. l sums the f32 w in key order.
// The simulator follows mono_attend_chunk, so launches on this path match
// it within the stage bounds, not bit for bit.
#if defined(MONO_HAS_MMA_BF16)

template <int H, int D, int NOPE, int N, int PT, int DATA, int SS, int SH, int SP>
MONO_DEV void mono_attend_chunk_mma(const mono_u16 *q, const mono_u8 *cache, mono_i64 pageBytes,
                                    float scale, const float (&slots)[SS], float (&m)[SH],
                                    float (&l)[SH], float (&p)[SP], float *lds) {
  static_assert(mono_attend_mma_fits(H, D, NOPE, N, MONO_BLOCK), "no tensor-core shape for this chunk");
  constexpr int WARPS = MONO_BLOCK / 32, KROW = mono_attend_mma_key_words(D);
  constexpr int WROW = mono_attend_mma_weight_words(N);
  constexpr int KEY_TILES = N / 16, PARTS = mono_attend_mma_score_parts(D, N, MONO_BLOCK);
  constexpr int DIM_TILES_PER_WARP = D / 16 / WARPS;
  mono_u32 *keys = (mono_u32 *)lds;  // N rows of KROW words: bf16 pairs along the dims
  mono_u32 *queries = (mono_u32 *)lds + mono_attend_mma_queries_at(D, N);
  float *scores = lds + mono_attend_mma_scores_at(D, N);
  mono_u32 *high = (mono_u32 *)lds + mono_attend_mma_weights_at(D, N, MONO_BLOCK);
  mono_u32 *low = high + 8 * WROW;
  float *slotL = lds + mono_attend_mma_slots_at(D, N, MONO_BLOCK);
  float *mHead = slotL + N, *lHead = mHead + 8;
  float *out = lds;  // H x D f32, over the keys once the values product is done
  const int tid = mono_tid(), warp = tid / 32, g = (tid % 32) / 4, t = tid % 4;
  const float minusInf = mono_as_float(0xFF800000u);

  // Every global load of the chunk is issued before the shared-memory
  // stores that use it: `lds` may alias global memory as far as the
  // compiler knows, so a load after a store waits for it, and a loop of
  // load-then-store pays a memory latency per iteration.
  // Queries as bf16 pairs (q is 4-byte aligned: its column is a multiple of
  // D); the instruction's columns past H multiply zeros.
  constexpr int QUERY_WORDS = 8 * (D / 2) / MONO_BLOCK;
  mono_u32 queryWords[QUERY_WORDS];
#pragma unroll
  for (int r = 0; r < QUERY_WORDS; ++r) {
    const int i = r * MONO_BLOCK + tid, h = i / (D / 2);
    queryWords[r] = h < H ? ((const mono_u32 *)q)[h * (D / 2) + i % (D / 2)] : 0u;
  }
#pragma unroll
  for (int s = 0; s < SS; ++s) {
    const int j = s * MONO_BLOCK + tid;
    if (j < N) slotL[j] = slots[s];
  }
#pragma unroll
  for (int r = 0; r < QUERY_WORDS; ++r) {
    const int i = r * MONO_BLOCK + tid;
    queries[(i / (D / 2)) * KROW + i % (D / 2)] = queryWords[r];
  }
  mono_block_sync();
  // Keys 16 dims a piece (a thread's pieces all have the same dims), loaded
  // ROUND pieces at a time with 4-byte loads (records are only 4-byte
  // aligned), then stored as 8 words at once; a masked key is zeros. The
  // cache holds no NaN codes (the quantizer clamps), so the weights' e4m3
  // decoding serves.
  constexpr int PIECES_PER_THREAD = N * (D / 16) / MONO_BLOCK, ROUND = 4;
  const int d0 = (tid % (D / 16)) * 16;
#pragma unroll
  for (int r0 = 0; r0 < PIECES_PER_THREAD; r0 += ROUND) {
    mono_u32 words[ROUND][8];
    float groupScale[ROUND];
#pragma unroll
    for (int r = 0; r < ROUND; ++r) {
      const int k = ((r0 + r) * MONO_BLOCK + tid) / (D / 16);
      const int slot = r0 + r < PIECES_PER_THREAD ? (int)slotL[k] : -1;
      groupScale[r] = 1.0f;
#pragma unroll
      for (int i = 0; i < 8; ++i) words[r][i] = 0u;
      if (slot >= 0) {
        const mono_u8 *page = cache + (mono_i64)(slot / PT) * pageBytes;
        const mono_u8 *record = page + (slot % PT) * DATA;
        if (d0 < NOPE) {
          const mono_u32 *src = (const mono_u32 *)(record + d0);
#pragma unroll
          for (int i = 0; i < 4; ++i) words[r][i] = src[i];
          groupScale[r] = mono_exp2i((int)page[PT * DATA + (slot % PT) * 8 + d0 / 64] - 127);
        } else {
          const mono_u32 *src = (const mono_u32 *)(record + NOPE + 2 * (d0 - NOPE));
#pragma unroll
          for (int i = 0; i < 8; ++i) words[r][i] = src[i];
        }
      }
    }
#pragma unroll
    for (int r = 0; r < ROUND; ++r) {
      if (r0 + r >= PIECES_PER_THREAD) break;
      const int k = ((r0 + r) * MONO_BLOCK + tid) / (D / 16);
      if (d0 < NOPE) {
        // Exact values, so the top half of each f32 is its bf16.
        float v[16];
#pragma unroll
        for (int i = 0; i < 4; ++i) mono_e4m3x4_values(words[r][i], v + 4 * i);
#pragma unroll
        for (int i = 0; i < 8; ++i)
          words[r][i] = (mono_as_u32(v[2 * i] * groupScale[r]) >> 16) |
                        (mono_as_u32(v[2 * i + 1] * groupScale[r]) & 0xFFFF0000u);
      }
      mono_u32x4 *row = (mono_u32x4 *)(keys + k * KROW + d0 / 2);
      row[0] = mono_u32x4{words[r][0], words[r][1], words[r][2], words[r][3]};
      row[1] = mono_u32x4{words[r][4], words[r][5], words[r][6], words[r][7]};
    }
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
  mono_block_sync();
  // t = score x log2(e) / sqrt(D), -inf for a masked key, over scores[key][head].
  for (int i = tid; i < N * 8; i += MONO_BLOCK) {
    float sum = scores[i];
#pragma unroll
    for (int part = 1; part < PARTS; ++part) sum += scores[part * N * 8 + i];
    scores[i] = (int)slotL[i / 8] >= 0 ? sum * scale : minusInf;
  }
  mono_block_sync();
  for (int h = tid; h < H; h += MONO_BLOCK) {
    float top = minusInf;
    for (int k = 0; k < N; ++k) top = mono_fmax(top, scores[k * 8 + h]);
    mHead[h] = top;
  }
  mono_block_sync();
  // Weights, and their two bf16 halves in [head][key] rows (zero past H).
  mono_u16 *highHalves = (mono_u16 *)high, *lowHalves = (mono_u16 *)low;
  for (int i = tid; i < N * 8; i += MONO_BLOCK) {
    const int k = i / 8, h = i % 8;
    float w = 0.0f;
    if (h < H && scores[i] != minusInf) w = mono_exp2(scores[i] - mHead[h]);
    const mono_u16 hi = mono_bf16_bits(w);
    scores[i] = w;
    highHalves[h * 2 * WROW + k] = hi;
    lowHalves[h * 2 * WROW + k] = mono_bf16_bits(w - mono_bf16_value(hi));
  }
  mono_block_sync();
  for (int h = tid; h < H; h += MONO_BLOCK) {
    float sum = 0.0f;
    for (int k = 0; k < N; ++k) sum += scores[k * 8 + h];
    lHead[h] = sum;
  }

  // Values: warp w takes dim tiles w, w + WARPS, ...; A's (dim, key pair)
  // words are put together from the key rows' bf16 halves.
  const mono_u16 *keyHalves = (const mono_u16 *)keys;
  float acc[DIM_TILES_PER_WARP][4];
#pragma unroll
  for (int j = 0; j < DIM_TILES_PER_WARP; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[j][e] = 0.0f;
  for (int step = 0; step < KEY_TILES; ++step) {
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
#pragma unroll
  for (int s = 0; s < SP; ++s) {
    const int i = s * MONO_BLOCK + tid;
    if (i < H * D) p[s] = out[i];
  }
#pragma unroll
  for (int s = 0; s < SH; ++s) {
    const int h = s * MONO_BLOCK + tid;
    if (h < H) {
      m[s] = mHead[h];
      l[s] = lHead[h];
    }
  }
  mono_block_sync();
}

#endif
