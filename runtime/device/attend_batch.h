// monodc device library: the steps of mono.attend_chunk that its matrix-core
// forms share (attend_mma.h on sm_90, attend_mfma.h on gfx950). Those take
// the chunk as one batch, two small matrix products over the shared-memory
// layout of attend_shape.h:
//   scores  S[key][head] = K[key][:] . Q[head][:],
//   values  P[dim][head] = sum_key K[key][dim] w[head][key].
// The keys are shared by all heads (DSV41's one latent), so they are read
// from the cache once per chunk.
//
// The same numbers as mono_attend_chunk's, in another order:
// - keys in bf16 are exact: e4m3 x 2^(code - 127) has 4 significant bits
//   (bf16 has 8) for every scale the quantizer writes (codes from 105; far
//   smaller ones would lose bf16 denormals), and the rope dims are bf16;
//   queries are bf16. The instructions sum exact products in f32.
// - the chunk is one batch: the max over all its keys first, then
//   w = 2^(t - m) in f32, so there is no running rescale.
// - w enters the values product as two bf16, its nearest and the nearest of
//   the rest (w - high is exact in f32): w to about 2^-17 of itself, where
//   one bf16 would be 2^-9. l sums the f32 w in key order.
// The simulator follows mono_attend_chunk, so launches on these paths match
// it within the stage bounds, not bit for bit.

// Queries, slots and keys into shared memory as bf16 rows (attend_shape.h's
// layout for PARTS score parts); the block is synced before the keys are
// loaded (they need the slots) and must be synced by the caller after.
// Returns false, loading no key, where every slot is masked.
template <int H, int D, int NOPE, int N, int PT, int DATA, int SS, int PARTS>
MONO_DEV bool mono_attend_batch_stage(const mono_u16 *q, const mono_u8 *cache, mono_i64 pageBytes,
                                      const float (&slots)[SS], float *lds) {
  constexpr int KROW = mono_attend_batch_key_words(D);
  mono_u32 *keys = (mono_u32 *)lds;  // N rows of KROW words: bf16 pairs along the dims
  mono_u32 *queries = (mono_u32 *)lds + mono_attend_batch_queries_at(D, N);
  float *slotL = lds + mono_attend_batch_slots_at(D, N, PARTS);
  const int tid = mono_tid();

  // Every global load of the chunk is issued before the shared-memory
  // stores that use it: `lds` may alias global memory as far as the
  // compiler knows, so a load after a store waits for it, and a loop of
  // load-then-store pays a memory latency per iteration.
  // Queries as bf16 pairs (q is 4-byte aligned: its column is a multiple of
  // D); the rows past H are zeros.
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
  if (!mono_chunk_has_keys<N>(slotL))
    return false;
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
  return true;
}

// From the scores (PARTS partial sums of [key][8 heads] at scores_at), the
// batch softmax: t = score x log2(e) / sqrt(D) (-inf for a masked key), the
// max m per head, w = 2^(t - m) with its two bf16 halves in [head][key] rows
// (zero past H), and l = the f32 sum of w in key order. Starts with a block
// sync; the halves are synced when it returns, m and l (at the layout's max
// and sum) only at the caller's next sync.
template <int H, int D, int N, int PARTS>
MONO_DEV void mono_attend_batch_weights(float scale, float *lds) {
  constexpr int WROW = mono_attend_batch_weight_words(N);
  float *scores = lds + mono_attend_batch_scores_at(D, N);
  mono_u16 *highHalves = (mono_u16 *)(lds + mono_attend_batch_weights_at(D, N, PARTS));
  mono_u16 *lowHalves = highHalves + 2 * 8 * WROW;
  float *slotL = lds + mono_attend_batch_slots_at(D, N, PARTS);
  float *mHead = slotL + N, *lHead = mHead + 8;
  const int tid = mono_tid();
  const float minusInf = mono_as_float(0xFF800000u);
  mono_block_sync();
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
}

// The chunk's results from the values product's f32 output (heads x dims,
// written over the keys at the start of `lds`, synced by the caller) and
// the per-head max and sum.
template <int H, int D, int N, int PARTS, int SH, int SP>
MONO_DEV void mono_attend_batch_results(float (&m)[SH], float (&l)[SH], float (&p)[SP],
                                        const float *lds) {
  const float *out = lds;
  const float *mHead = lds + mono_attend_batch_slots_at(D, N, PARTS) + N, *lHead = mHead + 8;
  const int tid = mono_tid();
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
