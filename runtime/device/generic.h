// monodc device library: the generic layer, shared by every arch.
// Tiles are block-distributed: value i of an n-value tile lives in thread
// (i % MONO_BLOCK), slot (i / MONO_BLOCK), carried as f32. A size-1 tile is
// uniform (held by every thread). Every building block here is deterministic:
// its summation order depends only on the sizes and MONO_BLOCK, and the CPU
// simulator reproduces the same order.

// ---- number formats (values carried as f32) ----
MONO_DEV float mono_nan() { return mono_as_float(0x7FC00000u); }
MONO_DEV float mono_fabs(float v) { return mono_as_float(mono_as_u32(v) & 0x7FFFFFFFu); }
MONO_DEV float mono_fmax(float a, float b) { return a > b ? a : (b == b ? b : a); }
MONO_DEV float mono_fmin(float a, float b) { return a < b ? a : (b == b ? b : a); }

// 2^k for k in [-127, 127], exactly (2^-127 is an f32 denormal).
MONO_DEV float mono_exp2i(int k) {
  return k >= -126 ? mono_as_float((mono_u32)(k + 127) << 23) : mono_as_float(0x00400000u);
}

// The encoders below compute every case and choose with selects: they are
// unrolled once per register slot of every tile they touch, and branches
// there multiply the code the back end must schedule.
MONO_DEV mono_u16 mono_bf16_bits(float v) {
  const mono_u32 b = mono_as_u32(v);
  const mono_u32 rounded = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;  // nearest even
  const mono_u32 quiet = ((b >> 16) & 0x8000u) | 0x7FC0u;           // NaN: canonical, sign kept
  return (mono_u16)((b & 0x7FFFFFFFu) > 0x7F800000u ? quiet : rounded);
}
MONO_DEV float mono_bf16_value(mono_u16 bits) { return mono_as_float((mono_u32)bits << 16); }
MONO_DEV float mono_round_bf16(float v) { return mono_bf16_value(mono_bf16_bits(v)); }

#if defined(MONO_HAS_E4M3_SCALAR_CVT)  // the same codes by the arch's conversions
MONO_DEV mono_u8 mono_e4m3_bits(float v) { return mono_e4m3_bits_cvt(v); }
MONO_DEV float mono_e4m3_value(mono_u8 c) { return mono_e4m3_value_cvt(c); }
#else
// OCP e4m3fn: saturate to +-448, then round to nearest even; NaN -> sign | 0x7F.
// Below 2^-6 the grid is 2^-9 (subnormals; code 8 is 2^-6).
MONO_DEV mono_u8 mono_e4m3_bits(float v) {
  const mono_u32 sign = (mono_as_u32(v) >> 31) << 7;
  const float a = mono_fmin(mono_fabs(v), 448.0f);
  const mono_u32 subnormal = (mono_u32)mono_rint(a * 512.0f);
  const mono_u32 b = mono_as_u32(a) + 0x7FFFFu + ((mono_as_u32(a) >> 20) & 1u);  // 3 bits, even
  const mono_u32 normal = ((((b >> 23) & 0xFFu) - 120u) << 3) | ((b >> 20) & 7u);
  const mono_u32 code = a < 0.015625f ? subnormal : normal;
  return (mono_u8)(sign | (v != v ? 0x7Fu : code));
}
// Decoding likewise: both magnitudes, chosen by a select.
MONO_DEV float mono_e4m3_value(mono_u8 c) {
  const mono_u32 bits = c & 0x7Fu;
  const float subnormal = (float)(bits & 7u) * (1.0f / 512.0f);
  const float normal = mono_as_float((bits << 20) + (120u << 23));
  const float mag = bits < 8u ? subnormal : normal;
  const float value = mono_as_float(mono_as_u32(mag) | ((mono_u32)(c & 0x80u) << 24));
  return bits == 0x7Fu ? mono_nan() : value;
}
#endif
MONO_DEV float mono_round_e4m3(float v) { return mono_e4m3_value(mono_e4m3_bits(v)); }

// FP4 e2m1: 0, .5, 1, 1.5, 2, 3, 4, 6; saturating; ties to the even code.
MONO_DEV mono_u8 mono_e2m1_bits(float v) {
  if (v != v) return 0;
  mono_u8 sign = (mono_as_u32(v) >> 31) ? 8 : 0;
  float a = mono_fabs(v);
  mono_u8 c = a <= 0.25f ? 0 : a < 0.75f ? 1 : a <= 1.25f ? 2 : a < 1.75f ? 3
            : a <= 2.5f ? 4 : a < 3.5f ? 5 : a <= 5.0f ? 6 : 7;
  return (mono_u8)(sign | c);
}
// e2m1 without a table (a table lives in local memory, one load per value):
// the code's three magnitude bits placed at f32 bits 22..24 make the value
// times 2^-126 (1 the subnormal 2^-127, 2..7 normals), so one exact multiply
// by 2^126 gives it; the sign bit goes to bit 31. Needs f32 subnormals kept,
// as mono_e4m3_fast (gfx950 kernels run with denormal mode 3, no flushing).
MONO_DEV float mono_e2m1_value(mono_u8 c) {
  const mono_u32 bits = ((mono_u32)(c & 7u) << 22) | ((mono_u32)(c & 8u) << 28);
  return mono_as_float(bits) * mono_exp2i(126);
}
MONO_DEV float mono_round_e2m1(float v) { return mono_e2m1_value(mono_e2m1_bits(v)); }

// Eight packed e2m1 codes (code i in bits 4i..4i+3) to their exact values.
// Where the arch converts FP4 itself (MONO_HAS_E2M1_CVT, gfx950), through
// that. Where it has a byte permute (MONO_HAS_BYTE_PERM: mono_byte_perm
// picks byte (s & 7) of hi:lo for each selector nibble s, as CUDA's prmt),
// four codes at a time index two 8-byte tables, of the high and the low
// byte of the magnitude's bf16, the sign bits join the high bytes, and one
// more permute pairs them into two bf16 values: about 3 operations a value
// instead of 6 (the routed experts' GEMVs are bound by instruction count).
MONO_DEV void mono_e2m1x8_values(mono_u32 w, float *v) {
#if defined(MONO_HAS_E2M1_CVT)
  mono_e2m1x8_convert(w, v);  // the arch's own FP4 conversion (gfx950)
#elif defined(MONO_HAS_BYTE_PERM)
  // bf16 of 0, .5, 1, 1.5, 2, 3, 4, 6: high bytes 00 3F 3F 3F 40 40 40 40,
  // low bytes 00 00 80 C0 00 40 80 C0 (tables little-endian, entry 0 first).
  const mono_u32 highLo = 0x3F3F3F00u, highHi = 0x40404040u;
  const mono_u32 lowLo = 0xC0800000u, lowHi = 0xC0804000u;
  const mono_u32 magnitudes = w & 0x77777777u, shifted = w << 4;
  // Byte b of `shifted` has code 2b's sign as its top bit, byte b of w code 2b + 1's.
  const mono_u32 signs[2] = {mono_byte_perm(shifted, w, 0x5140u), mono_byte_perm(shifted, w, 0x7362u)};
#pragma unroll
  for (int g = 0; g < 2; ++g) {
    const mono_u32 codes = g == 0 ? magnitudes : magnitudes >> 16;
    const mono_u32 high = mono_byte_perm(highLo, highHi, codes) | (signs[g] & 0x80808080u);
    const mono_u32 low = mono_byte_perm(lowLo, lowHi, codes);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // Codes 4g + 2h and 4g + 2h + 1 as bf16 in the low and the high half.
      const mono_u32 pair = mono_byte_perm(low, high, h == 0 ? 0x5140u : 0x7362u);
      v[4 * g + 2 * h] = mono_as_float(pair << 16);
      v[4 * g + 2 * h + 1] = mono_as_float(pair & 0xFFFF0000u);
    }
  }
#else
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = mono_e2m1_value((mono_u8)((w >> (4 * i)) & 15u));
#endif
}

// E8M0: code c means 2^(c-127); 255 is NaN. From f32: floor(log2 |v|) + 127.
MONO_DEV float mono_e8m0_value(mono_u8 c) { return c == 255 ? mono_nan() : mono_exp2i((int)c - 127); }
// The same for a code held in a word (0..255), in 32-bit operations: 1..254
// are c << 23; 0 (2^-127, a denormal) and 255 (NaN) set bit 22 besides.
MONO_DEV float mono_e8m0_word_value(mono_u32 c) {
  return mono_as_float((c << 23) | (c - 1u >= 254u ? 0x00400000u : 0u));
}
#if defined(MONO_HAS_BF16X2)
// Two codes, in bits 0..7 and 16..23 of `codes` (the rest 0), as values: a
// code is a bf16's exponent field, so code << 7 is the bf16 of 2^(c - 127)
// for 1..254; the max with 2^-127 (bf16 0x0040, a denormal) gives code 0,
// and 255 (an infinity so far) becomes NaN as inf * 0 + x (for the others
// v * 0 + x is x). Six operations for two values where
// mono_e8m0_word_value takes about six for one (the MXFP4 GEMVs decode two
// scales a block step, gemv_mma.h).
MONO_DEV void mono_e8m0x2_values(mono_u32 codes, float &lo, float &hi) {
  const mono_u32 v = codes << 7;
  const mono_u32 pair = mono_bf16x2_fma(v, 0u, mono_bf16x2_max(v, 0x00400040u));
  lo = mono_as_float(pair << 16);
  hi = mono_as_float(pair & 0xFFFF0000u);
}
#endif
MONO_DEV mono_u8 mono_e8m0_bits(float v) {
  mono_u32 e = (mono_as_u32(v) >> 23) & 0xFFu;
  if (v != v) return 255;
  return (mono_u8)(e > 254u ? 254u : e);
}
MONO_DEV float mono_round_e8m0(float v) { return mono_e8m0_value(mono_e8m0_bits(v)); }

// ceil(log2(t)) for t > 0, exactly, from the bits.
MONO_DEV int mono_ceil_log2(float t) {
  mono_u32 b = mono_as_u32(t);
  int e = (int)((b >> 23) & 0xFFu);
  mono_u32 m = b & 0x7FFFFFu;
  if (e != 0) return (e - 127) + (m != 0u ? 1 : 0);
  int p = 31 - mono_clz(m);  // denormal: t = m * 2^-149
  return p - 149 + ((m & (m - 1u)) != 0u ? 1 : 0);
}

// MXFP8 scale code of one group (docs/numerics.md sections 2 and 4): variant 0 the
// standard activation quantizer, 1 the routed experts' (amax floored at 1e-10,
// code >= 1), 2 the KV record's (amax floored at 1e-4).
MONO_DEV int mono_mxfp8_scale_code(float amax, int variant) {
  float floor = variant == 1 ? 1e-10f : (variant == 2 ? 1e-4f : 1.17549435e-38f);
  float a = mono_fmax(amax, floor);
  int c = mono_ceil_log2(a / 448.0f) + 127;
  int lo = variant == 1 ? 1 : 0;
  return c < lo ? lo : (c > 254 ? 254 : c);
}

// ---- memory: element i of a region in its storage format ----
MONO_DEV float mono_load_f32(const void *p, mono_i64 i) { return ((const float *)p)[i]; }
MONO_DEV float mono_load_bf16(const void *p, mono_i64 i) { return mono_bf16_value(((const mono_u16 *)p)[i]); }
MONO_DEV float mono_load_e4m3(const void *p, mono_i64 i) { return mono_e4m3_value(((const mono_u8 *)p)[i]); }
MONO_DEV float mono_load_e8m0(const void *p, mono_i64 i) { return mono_e8m0_value(((const mono_u8 *)p)[i]); }
// Index inputs hold whole numbers below 2^24: exact as f32.
MONO_DEV float mono_load_i32(const void *p, mono_i64 i) { return (float)((const int *)p)[i]; }
MONO_DEV float mono_load_i64(const void *p, mono_i64 i) { return (float)((const mono_i64 *)p)[i]; }
MONO_DEV float mono_load_e2m1(const void *p, mono_i64 i) {
  mono_u8 byte = ((const mono_u8 *)p)[i >> 1];
  return mono_e2m1_value((i & 1) ? (byte >> 4) : (byte & 15));
}
MONO_DEV void mono_store_f32(void *p, mono_i64 i, float v) { ((float *)p)[i] = v; }
MONO_DEV void mono_store_bf16(void *p, mono_i64 i, float v) { ((mono_u16 *)p)[i] = mono_bf16_bits(v); }
MONO_DEV void mono_store_e4m3(void *p, mono_i64 i, float v) { ((mono_u8 *)p)[i] = mono_e4m3_bits(v); }
MONO_DEV void mono_store_e8m0(void *p, mono_i64 i, float v) { ((mono_u8 *)p)[i] = mono_e8m0_bits(v); }

// ---- a block's tile into shared memory: value i (slot s of thread i -
// s * MONO_BLOCK) at to[i], for the N values of the tile ----
template <int S, int N>
MONO_DEV void mono_tile_to_shared(const float (&x)[S], float *to) {
  const int tid = mono_tid();
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = s * MONO_BLOCK + tid;
    if (i < N) to[i] = x[s];
  }
}

// ---- block reductions: per-thread partials in slot order, then a fixed tree ----
// The tree adds (or maxes) entry tid + w into entry tid for w = MONO_BLOCK / 2
// down to 1. Where the arch has warp shuffles (MONO_HAS_WARP_SHUFFLE) the
// rounds below the warp's width run in warp 0's registers, the same pairs
// in the same order, so the result is the same bit for bit with fewer block
// barriers (combine's tasks, for one, reduce 2 and 8 values: 10 barriers
// each, 2 this way). When every value is in warp 0 (one slot, N at most the
// warp's width) the rounds above it only combined each value with the
// identity (x + 0, or max with -inf: a NaN there becomes -inf), which the
// shuffle path does once.
template <int KIND>
MONO_DEV float mono_reduce_pair(float a, float b) {
  return KIND == 0 ? a + b : mono_fmax(a, b);
}

template <int S, int N, int KIND>  // KIND: 0 sum, 1 max, 2 absmax
MONO_DEV float mono_block_reduce(const float (&x)[S], float *lds) {
  const int tid = mono_tid();
  const float identity = KIND == 0 ? 0.0f : mono_as_float(0xFF800000u);  // -inf
  float acc = identity;
#pragma unroll
  for (int s = 0; s < S; ++s) {
    int i = s * MONO_BLOCK + tid;
    if (N == 1 || i < N) {
      float v = KIND == 2 ? mono_fabs(x[s]) : x[s];
      acc = mono_reduce_pair<KIND>(acc, v);
    }
    if (N == 1) break;  // a uniform tile counts once
  }
  if (N == 1) return acc;
#if defined(MONO_HAS_WARP_SHUFFLE)
  constexpr int SHUFFLED = MONO_WARP_SIZE;  // rounds below this width are shuffles
#else
  constexpr int SHUFFLED = 1;
#endif
  constexpr bool IN_WARP0 = SHUFFLED > 1 && S == 1 && N <= SHUFFLED;
  if (!IN_WARP0) {
    lds[tid] = acc;
    mono_block_sync();
    for (int w = MONO_BLOCK / 2; w >= SHUFFLED; w >>= 1) {
      if (tid < w) lds[tid] = mono_reduce_pair<KIND>(lds[tid], lds[tid + w]);
      mono_block_sync();
    }
  }
#if defined(MONO_HAS_WARP_SHUFFLE)
  if (tid < MONO_WARP_SIZE) {
    float v = IN_WARP0 ? mono_reduce_pair<KIND>(acc, identity) : lds[tid];
#pragma unroll
    for (int w = MONO_WARP_SIZE / 2; w > 0; w >>= 1)
      v = mono_reduce_pair<KIND>(v, mono_shfl_down_f32(v, w));
    if (tid == 0) lds[0] = v;
  }
  mono_block_sync();
#endif
  float r = lds[0];
  mono_block_sync();
  return r;
}

// ---- top-k: the k largest values, ties to the lower index, NaN last ----
// That order is total, so each value's place is the number of values that
// come before it: every thread ranks its own values against all n in
// shared memory (the same result as k selection passes, without a serial
// thread), and a value whose rank is below k writes itself there. The
// values are ranked by an unsigned key in that order (larger comes first;
// NaN 1, every number above it, the two zeros equal), so that a comparison
// is two integer compares and no branch (the float comparison's NaN cases
// branched in the loop).
MONO_DEV mono_u32 mono_topk_key(float v) {
  if (v != v) return 1u;
  const mono_u32 bits = mono_as_u32(v) & (v == 0.0f ? 0u : 0xFFFFFFFFu);  // -0 as +0
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

template <int S, int N, int K, int SK>
MONO_DEV void mono_topk(const float (&x)[S], float (&values)[SK], float (&indices)[SK], float *lds) {
  const int tid = mono_tid();
  // N keys, then k values and k indices.
  mono_u32 *keys = (mono_u32 *)lds;
  float *result = lds + N;
  mono_u32 key[S];
  mono_block_sync();
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = s * MONO_BLOCK + tid;
    key[s] = mono_topk_key(x[s]);
    if (i < N) keys[i] = key[s];
  }
  mono_block_sync();
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = s * MONO_BLOCK + tid;
    if (i < N) {
      int rank = 0;
      // Those before i come first on a tie.
      for (int j = 0; j < N; ++j) {
        const mono_u32 other = keys[j];
        rank += (other > key[s]) | ((other == key[s]) & (j < i));
      }
      if (rank < K) {
        result[rank] = x[s];
        result[K + rank] = (float)i;
      }
    }
  }
  mono_block_sync();
#pragma unroll
  for (int s = 0; s < SK; ++s) {
    const int i = s * MONO_BLOCK + tid;
    if (i < K) {
      values[s] = result[i];
      indices[s] = result[K + i];
    }
  }
  mono_block_sync();
}

// ---- slots of one expert's places (mono.expert_groups) ----
// Each place finds its run's start (the places before it with the same
// expert) and so its offset in the run; a slot starts at offsets 0, G, 2G..;
// a place's slot is the number of starts up to it, less one (a count over
// shared memory, as mono_topk ranks: no serial thread). A slot's count is
// the distance to the next slot's first place (or to N).
template <int S, int N, int G>
MONO_DEV void mono_expert_groups(const float (&experts)[S], float (&slotExpert)[S],
                                 float (&slotFirst)[S], float (&slotCount)[S],
                                 float (&placeRow)[S], float *lds) {
  const int tid = mono_tid();
  float *e = lds, *starts = lds + N, *first = lds + 2 * N;  // N each, then first[N] = N
  mono_block_sync();
  mono_tile_to_shared<S, N>(experts, e);
  mono_block_sync();
  int offset[S];
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = s * MONO_BLOCK + tid;
    offset[s] = 0;
    if (i < N) {
      int runStart = i;
      while (runStart > 0 && e[runStart - 1] == experts[s]) --runStart;
      offset[s] = (i - runStart) % G;
      starts[i] = offset[s] == 0 ? 1.0f : 0.0f;
    }
  }
  mono_block_sync();
  int used = 0;
  for (int j = 0; j < N; ++j) used += starts[j] != 0.0f ? 1 : 0;
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = s * MONO_BLOCK + tid;
    if (i < N) {
      int slot = -1;
      for (int j = 0; j <= i; ++j) slot += starts[j] != 0.0f ? 1 : 0;
      placeRow[s] = (float)(slot * G + offset[s]);
      if (offset[s] == 0) first[slot] = (float)i;
    }
  }
  if (tid == 0) first[used] = (float)N;
  mono_block_sync();
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = s * MONO_BLOCK + tid;
    if (i < N) {
      const bool live = i < used;
      slotFirst[s] = live ? first[i] : (float)N;
      slotCount[s] = live ? first[i + 1] - first[i] : 0.0f;
      slotExpert[s] = live ? e[(int)first[i]] : -1.0f;
    }
  }
  mono_block_sync();
}

// ---- split-K attention over one chunk of cached keys (mono.attend_chunk) ----
// H heads of D dims (NOPE e4m3 dims then bf16 ones), N keys at `slots`, KB
// keys a batch, PT records a page of DATA data bytes each. `q` points at the
// first head's bf16 values; `scale` = log2(e) / sqrt(D). Each (head, key)
// score is split over PARTS threads, each a fused multiply-add chain over
// D / PARTS consecutive dims, the parts then added in order. Shared memory:
// N slots, KB keys and H queries of D + PARTS words each, H x KB x PARTS
// partial scores (the first H x KB of them become the weights), H running
// max, sum and rescale. A key or query row holds its PARTS segments of
// D / PARTS dims one word apart: the lanes of a warp take different keys
// and segments at the same dim, and without the gaps (D a multiple of 32)
// they would all read one bank, a 32-way conflict on every score FMA.
template <int D, int PARTS>
MONO_DEV int mono_attend_word(int row, int d) {
  return row * (D + PARTS) + d + d / (D / PARTS);
}
// Whether any of a chunk's N slots, staged in shared memory at `slotL`
// behind a barrier, is a key (slot >= 0): every thread reads them all.
template <int N>
MONO_DEV bool mono_chunk_has_keys(const float *slotL) {
  bool any = false;
  for (int k = 0; k < N; ++k) any = any || slotL[k] >= 0.0f;
  return any;
}
// The state of a chunk whose keys are all masked (a pad row's, or a chunk
// past a row's keys), as the whole computation gives it: max -inf, sum 0,
// values +0. Its keys are never read.
template <int H, int SH, int SP>
MONO_DEV void mono_attend_masked_chunk(float (&m)[SH], float (&l)[SH], float (&p)[SP]) {
  const int tid = mono_tid();
#pragma unroll
  for (int s = 0; s < SP; ++s) p[s] = 0.0f;
#pragma unroll
  for (int s = 0; s < SH; ++s) {
    if (s * MONO_BLOCK + tid < H) {
      m[s] = mono_as_float(0xFF800000u);
      l[s] = 0.0f;
    }
  }
}

template <int H, int D, int NOPE, int N, int KB, int PT, int DATA, int SS, int SH, int SP,
          int PARTS>
MONO_DEV void mono_attend_chunk(const mono_u16 *q, const mono_u8 *cache, mono_i64 pageBytes,
                                float scale, const float (&slots)[SS], float (&m)[SH],
                                float (&l)[SH], float (&p)[SP], float *lds) {
  const int tid = mono_tid();
  const float minusInf = mono_as_float(0xFF800000u);
  constexpr int ROW = D + PARTS;
  float *slotL = lds, *kv = lds + N, *qL = kv + KB * ROW, *part = qL + H * ROW, *t = part,
        *mRun = part + H * KB * PARTS, *lRun = mRun + H, *alpha = lRun + H;
  for (int i = tid; i < H * D; i += MONO_BLOCK)
    qL[mono_attend_word<D, PARTS>(i / D, i % D)] = mono_bf16_value(q[i]);
#pragma unroll
  for (int s = 0; s < SS; ++s) {
    int j = s * MONO_BLOCK + tid;
    if (j < N) slotL[j] = slots[s];
  }
  for (int h = tid; h < H; h += MONO_BLOCK) {
    mRun[h] = minusInf;
    lRun[h] = 0.0f;
  }
#pragma unroll
  for (int s = 0; s < SP; ++s) p[s] = 0.0f;
  mono_block_sync();
  if (!mono_chunk_has_keys<N>(slotL)) {
    mono_attend_masked_chunk<H, SH, SP>(m, l, p);
    mono_block_sync();  // every thread has read the slots
    return;
  }
  for (int b0 = 0; b0 < N; b0 += KB) {
    // Dequantize the batch's keys 16 dims a piece: four 4-byte loads of e4m3
    // codes (and their 64-dim group's scale byte) or eight of bf16 values
    // (records are only 4-byte aligned), a thread's pieces unrolled so that
    // their loads are in flight together (a byte a load made each batch a
    // chain of memory latencies). A masked key (slot < 0) is never read.
    constexpr int PIECES = KB * D / 16;
#pragma unroll
    for (int s = 0; s < (PIECES + MONO_BLOCK - 1) / MONO_BLOCK; ++s) {
      const int piece = s * MONO_BLOCK + tid;
      if (piece < PIECES) {
        const int k = piece / (D / 16), d0 = (piece % (D / 16)) * 16;
        const int slot = b0 + k < N ? (int)slotL[b0 + k] : -1;
        float v[16];
#pragma unroll
        for (int i = 0; i < 16; ++i) v[i] = 0.0f;
        if (slot >= 0) {
          const mono_u8 *page = cache + (mono_i64)(slot / PT) * pageBytes;
          const mono_u8 *record = page + (slot % PT) * DATA;
          if (d0 < NOPE) {
            const mono_u32 *src = (const mono_u32 *)(record + d0);
            const mono_u32 words[4] = {src[0], src[1], src[2], src[3]};
            const float groupScale =
                mono_exp2i((int)page[PT * DATA + (slot % PT) * 8 + d0 / 64] - 127);
#pragma unroll
            for (int i = 0; i < 16; ++i)
              v[i] = mono_e4m3_value((mono_u8)(words[i / 4] >> (8 * (i % 4)))) * groupScale;
          } else {
            const mono_u32 *src = (const mono_u32 *)(record + NOPE + 2 * (d0 - NOPE));
            mono_u32 words[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) words[i] = src[i];
#pragma unroll
            for (int i = 0; i < 16; ++i)
              v[i] = mono_bf16_value((mono_u16)(words[i / 2] >> (16 * (i % 2))));
          }
        }
#pragma unroll
        for (int i = 0; i < 16; ++i) kv[mono_attend_word<D, PARTS>(k, d0 + i)] = v[i];
      }
    }
    mono_block_sync();
    for (int i = tid; i < H * KB * PARTS; i += MONO_BLOCK) {
      int pair = i / PARTS, h = pair / KB, k = pair % KB, d0 = (i % PARTS) * (D / PARTS);
      const float *qs = qL + mono_attend_word<D, PARTS>(h, d0),
                  *ks = kv + mono_attend_word<D, PARTS>(k, d0);
      float acc = 0.0f;
      for (int d = 0; d < D / PARTS; ++d) acc = mono_fma(qs[d], ks[d], acc);
      part[i] = acc;
    }
    mono_block_sync();
    // Scores of the pairs (in place of their first parts: read, then sync).
    float score[(H * KB + MONO_BLOCK - 1) / MONO_BLOCK];
#pragma unroll
    for (int s = 0; s < (H * KB + MONO_BLOCK - 1) / MONO_BLOCK; ++s) {
      int pair = s * MONO_BLOCK + tid;
      if (pair < H * KB) {
        int k = pair % KB;
        int slot = b0 + k < N ? (int)slotL[b0 + k] : -1;
        float acc = 0.0f;
        for (int j = 0; j < PARTS; ++j) acc += part[pair * PARTS + j];
        score[s] = slot >= 0 ? acc * scale : minusInf;
      }
    }
    mono_block_sync();
#pragma unroll
    for (int s = 0; s < (H * KB + MONO_BLOCK - 1) / MONO_BLOCK; ++s) {
      int pair = s * MONO_BLOCK + tid;
      if (pair < H * KB) t[pair] = score[s];
    }
    mono_block_sync();
    // Online softmax per head: new max, rescale of the old sums, weights.
    for (int h = tid; h < H; h += MONO_BLOCK) {
      float mOld = mRun[h], mNew = mOld;
      for (int k = 0; k < KB; ++k) mNew = mono_fmax(mNew, t[h * KB + k]);
      float a = mNew == minusInf ? 1.0f : mono_exp2(mOld - mNew);
      float sum = 0.0f;
      for (int k = 0; k < KB; ++k) {
        float w = t[h * KB + k] == minusInf ? 0.0f : mono_exp2(t[h * KB + k] - mNew);
        t[h * KB + k] = w;
        sum += w;
      }
      lRun[h] = lRun[h] * a + sum;
      mRun[h] = mNew;
      alpha[h] = a;
    }
    mono_block_sync();
#pragma unroll
    for (int s = 0; s < SP; ++s) {
      int i = s * MONO_BLOCK + tid;
      if (i < H * D) {
        int h = i / D, d = i % D;
        float acc = p[s] * alpha[h];
        for (int k = 0; k < KB; ++k)
          acc = mono_fma(t[h * KB + k], kv[mono_attend_word<D, PARTS>(k, d)], acc);
        p[s] = acc;
      }
    }
    mono_block_sync();
  }
#pragma unroll
  for (int s = 0; s < SH; ++s) {
    int h = s * MONO_BLOCK + tid;
    if (h < H) {
      m[s] = mRun[h];
      l[s] = lRun[h];
    }
  }
  mono_block_sync();
}

// ---- MXFP8 of a row: codes and scales as f32 values ----
// A group's amax is the max of |v| over its non-NaN values and 0; max is
// exact, so every order gives the same bits. Where each group's G values
// sit in G lanes of one warp (G a power of two dividing the warp's width
// and the block's), the lanes exchange by shuffles and each knows its
// group's scale: the row is not staged and there is one barrier fewer,
// only the scales crossing warps through shared memory. Otherwise one
// thread a group walks the row in shared memory; so do rows of more than
// MONO_QUANTIZE_SHUFFLED_SLOTS slots a thread, since the shuffles and the
// scale's code are unrolled for each slot: at 28 slots (a hidden row)
// they made a sm_90 stage 7-13 KB larger, and instruction fetch is what
// the fused K2 waits on most.
#define MONO_QUANTIZE_SHUFFLED_SLOTS 4
MONO_DEV float mono_mxfp8_code(float x, int scaleCode) {
  float v = x * mono_exp2i(127 - scaleCode);
  v = v > 448.0f ? 448.0f : (v < -448.0f ? -448.0f : v);
  return mono_round_e4m3(v);
}

template <int S, int SS, int N, int G>
MONO_DEV void mono_quantize_mxfp8(const float (&x)[S], float (&codes)[S], float (&scales)[SS],
                                  int variant, float *lds) {
  const int tid = mono_tid();
#if defined(MONO_HAS_WARP_SHUFFLE)
  constexpr bool BY_SHUFFLES =
      (G & (G - 1)) == 0 && MONO_WARP_SIZE % G == 0 && MONO_BLOCK % G == 0 &&
      S <= MONO_QUANTIZE_SHUFFLED_SLOTS;
#else
  constexpr bool BY_SHUFFLES = false;
#endif
  float *groupScale = BY_SHUFFLES ? lds : lds + N;
  if constexpr (BY_SHUFFLES) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      // Every lane takes part; a group past N is whole and goes unused.
      float amax = mono_fmax(0.0f, mono_fabs(x[s]));
#pragma unroll
      for (int m = G / 2; m > 0; m >>= 1) amax = mono_fmax(amax, mono_shfl_xor_f32(amax, m));
      const int c = mono_mxfp8_scale_code(amax, variant), i = s * MONO_BLOCK + tid;
      if (i < N) {
        codes[s] = mono_mxfp8_code(x[s], c);
        if (i % G == 0) groupScale[i / G] = (float)c;
      }
    }
  } else {
    mono_tile_to_shared<S, N>(x, lds);
    mono_block_sync();
    for (int g = tid; g < N / G; g += MONO_BLOCK) {
      float amax = 0.0f;
      // (Starting each group at its own place in the group, which takes the
      // reads off one bank, is not worth it: the conflict is not what this
      // walk waits on, and the staggered start costs registers.)
      for (int j = 0; j < G; ++j) amax = mono_fmax(amax, mono_fabs(lds[g * G + j]));
      groupScale[g] = (float)mono_mxfp8_scale_code(amax, variant);
    }
  }
  mono_block_sync();
  if constexpr (!BY_SHUFFLES) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int i = s * MONO_BLOCK + tid;
      if (i < N) codes[s] = mono_mxfp8_code(x[s], (int)groupScale[i / G]);
    }
  }
#pragma unroll
  for (int s = 0; s < SS; ++s) {
    int g = s * MONO_BLOCK + tid;
    if (g < N / G) scales[s] = mono_exp2i((int)groupScale[g] - 127);
  }
  mono_block_sync();
}

// ---- GEMV over weight rows [row0, row0 + N) of a [rows, K] weight ----
// Threads split into groups of T per output; each thread sums a contiguous run
// of 32-wide K blocks; the T partials are then added in order.
template <int N, int K>
struct mono_gemv_shape {
  static constexpr int T = N >= MONO_BLOCK ? 1 : MONO_BLOCK / N;  // threads per output
  static constexpr int PER_PASS = MONO_BLOCK / T;
  static constexpr int BLOCKS = K / 32;
  static constexpr int BLOCKS_PER_THREAD = (BLOCKS + T - 1) / T;
};

template <int SO, int N>
MONO_DEV void mono_gemv_finish(float acc, int j0, float *partial, float *outLds, float (&out)[SO]) {
  typedef mono_gemv_shape<N, 32> shape;
  const int tid = mono_tid();
  partial[tid] = acc;
  mono_block_sync();
  if (tid < shape::PER_PASS && j0 + tid < N) {
    float s = 0.0f;
    for (int p = 0; p < shape::T; ++p) s += partial[tid * shape::T + p];
    outLds[j0 + tid] = s;
  }
  mono_block_sync();
}

template <int SX, int SXS, int SO, int N, int K>
MONO_DEV void mono_gemv_e4m3(const float (&x)[SX], const float (&xs)[SXS], const mono_u8 *w,
                             const mono_u8 *ws, int wsCols, mono_i64 row0, float (&out)[SO],
                             float *lds) {
  typedef mono_gemv_shape<N, K> shape;
  const int tid = mono_tid();
  float *xd = lds, *xScale = lds + K, *partial = xScale + K / 32, *outLds = partial + MONO_BLOCK;
  mono_tile_to_shared<SXS, K / 32>(xs, xScale);
  mono_block_sync();
#pragma unroll
  for (int s = 0; s < SX; ++s) {
    int i = s * MONO_BLOCK + tid;
    if (i < K) xd[i] = x[s] * xScale[i / 32];  // exact: the scale is a power of two
  }
  mono_block_sync();
  for (int j0 = 0; j0 < N; j0 += shape::PER_PASS) {
    int j = j0 + tid / shape::T, part = tid % shape::T;
    float acc = 0.0f;
    if (tid / shape::T < shape::PER_PASS && j < N) {
      mono_i64 row = row0 + j;
      const mono_u8 *wRow = w + row * K;
      for (int b = part * shape::BLOCKS_PER_THREAD;
           b < (part + 1) * shape::BLOCKS_PER_THREAD && b < shape::BLOCKS; ++b) {
        const mono_u32 *words = (const mono_u32 *)(wRow + b * 32);
        float blockSum = 0.0f;
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          mono_u32 word = words[q];
#pragma unroll
          for (int byte = 0; byte < 4; ++byte)
            blockSum += xd[b * 32 + q * 4 + byte] * mono_e4m3_value((mono_u8)(word >> (8 * byte)));
        }
        acc += blockSum * mono_e8m0_value(ws[(row / 32) * wsCols + b]);
      }
    }
    mono_gemv_finish<SO, N>(acc, j0, partial, outLds, out);
  }
#pragma unroll
  for (int s = 0; s < SO; ++s) {
    int i = s * MONO_BLOCK + tid;
    if (i < N) out[s] = outLds[i];
  }
  mono_block_sync();
}

template <int SX, int SO, int N, int K>
MONO_DEV void mono_gemv_bf16(const float (&x)[SX], const mono_u16 *w, mono_i64 row0,
                             float (&out)[SO], float *lds) {
  typedef mono_gemv_shape<N, K> shape;
  const int tid = mono_tid();
  float *xd = lds, *partial = lds + K + K / 32, *outLds = partial + MONO_BLOCK;
  mono_tile_to_shared<SX, K>(x, xd);
  mono_block_sync();
  for (int j0 = 0; j0 < N; j0 += shape::PER_PASS) {
    int j = j0 + tid / shape::T, part = tid % shape::T;
    float acc = 0.0f;
    if (tid / shape::T < shape::PER_PASS && j < N) {
      const mono_u16 *wRow = w + (row0 + j) * K;
      for (int b = part * shape::BLOCKS_PER_THREAD;
           b < (part + 1) * shape::BLOCKS_PER_THREAD && b < shape::BLOCKS; ++b) {
        float blockSum = 0.0f;
#pragma unroll
        for (int q = 0; q < 32; ++q) blockSum += xd[b * 32 + q] * mono_bf16_value(wRow[b * 32 + q]);
        acc += blockSum;
      }
    }
    mono_gemv_finish<SO, N>(acc, j0, partial, outLds, out);
  }
#pragma unroll
  for (int s = 0; s < SO; ++s) {
    int i = s * MONO_BLOCK + tid;
    if (i < N) out[s] = outLds[i];
  }
  mono_block_sync();
}

// ---- GEMV over all the step's tokens: weights streamed once ----
// result[t * N + j] = sum_k x[t0 + t][k] * W[n0 + j][k]. Each output row has
// TP = MONO_BLOCK / N threads; thread p reads the 16-byte weight chunks
// p, p + TP, ... of its row (adjacent threads, adjacent chunks: coalesced),
// decodes them once and applies them to TC tokens of activations staged in
// shared memory as bf16 (exact dequantized MXFP8 for scale codes >= 3).
// Accumulation is one fused multiply-add chain per (thread, token); the TP
// partials of an output are then added in thread order.
struct __attribute__((aligned(16))) mono_u32x4 { mono_u32 x, y, z, w; };

// e4m3fn without branches: sign and 7 bits moved into f32 position, then
// scaled by 2^120 (exact for normals and subnormals; weights hold no NaN).
MONO_DEV float mono_e4m3_fast(mono_u32 b) {
  return mono_as_float(((b & 0x80u) << 24) | ((b & 0x7Fu) << 20)) * mono_exp2i(120);
}

// Four packed e4m3 weight codes (code i in bits 8i..8i+7), exactly: the
// arch's own conversion where it has one (MONO_HAS_E4M3_CVT, gfx950),
// otherwise mono_e4m3_fast each (weights hold no NaN).
MONO_DEV void mono_e4m3x4_values(mono_u32 w, float *v) {
#if defined(MONO_HAS_E4M3_CVT)
  mono_e4m3x4_convert(w, v);
#else
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = mono_e4m3_fast(w >> (8 * i));
#endif
}

// Byte offsets into AITER's shuffled MXFP4 layouts (docs/numerics.md section 2):
// byte kb of a row of KB bytes, inside its 16-row group stored k block (32
// bytes) by k block, each as two 16-row x 16-byte halves; and the scale
// (row, col) of scales [rows / 32][2][16][cols / 8][2][4] permuted to
// [rows / 32][cols / 8][4][16][2][2] (cols = the padded width).
MONO_DEV mono_i64 mono_aiter_weight_offset(mono_i64 row, int kb, int KB) {
  return (row / 16) * 16 * KB + (kb / 32) * 512 + ((kb % 32) / 16) * 256 + (row % 16) * 16 +
         kb % 16;
}
// The E8M0 scale of 16-weight chunk c of an e4m3 weight row: one per 32x32
// block, `cols` of them a block row.
MONO_DEV mono_i64 mono_block_scale_offset(mono_i64 row, int c, int cols) {
  return (row / 32) * cols + c / 2;
}
// The scale's offset is a row part plus a column part, so a GEMV walking a
// row's columns adds a column part to the row's (gemv_mma.h adds
// mono_aiter_scale_word's). Columns are never negative: unsigned, the
// divisions are shifts and masks.
MONO_DEV mono_i64 mono_aiter_scale_row(mono_i64 row, int cols) {
  return (row / 32) * 32 * cols + (row % 16) * 4 + (row / 16) % 2;
}
MONO_DEV unsigned mono_aiter_scale_col(unsigned col) {
  return (col / 8) * 256 + (col % 4) * 64 + ((col / 4) % 2) * 2;
}
// The aligned word at column `base + d` of a row's scales, for base a
// multiple of 8: 32 base (whole groups of 8 columns) + a part d fixes. It
// holds the row's and its twin's (16 rows on) scales for columns c and
// c + 4 (c = base + d % 4): row byte, twin byte, then the same for c + 4.
MONO_DEV unsigned mono_aiter_scale_word(unsigned base, int d) {
  return 32u * base + 256u * (unsigned)(d / 8) + 64u * (unsigned)(d % 4);
}
MONO_DEV mono_i64 mono_aiter_scale_offset(mono_i64 row, int col, int cols) {
  return mono_aiter_scale_row(row, cols) + mono_aiter_scale_col((unsigned)col);
}

// The 16 weights of chunk `c` of row `row`, decoded exactly but unscaled:
// `scale` (the chunk's E8M0 block scale; 1 for bf16 and f32) multiplies
// their sum once. WKIND: 0 e4m3 with 32x32 E8M0 blocks, 1 bf16, 2 f32, 3
// MXFP4 (e2m1 with an E8M0 per 32) in AITER's shuffled layouts: 8 bytes a
// chunk.
template <int K, int WKIND>
struct mono_weight_chunk {
  static constexpr int VECTORS = mono_gemv_vectors(WKIND);
  mono_u32x4 q[VECTORS];
  float scale;
  MONO_DEV void load(const mono_u8 *w, const mono_u8 *ws, int wsCols, mono_i64 row, int c) {
    if (WKIND == 3) {
      const mono_u32 *src = (const mono_u32 *)(w + mono_aiter_weight_offset(row, 8 * c, K / 2));
      q[0].x = src[0];
      q[0].y = src[1];
      scale = mono_e8m0_value(ws[mono_aiter_scale_offset(row, c / 2, wsCols)]);
      return;
    }
    const int bytesPerValue = WKIND == 0 ? 1 : (WKIND == 1 ? 2 : 4);
    const mono_u32x4 *src = (const mono_u32x4 *)(w + (row * K + 16 * c) * bytesPerValue);
#pragma unroll
    for (int v = 0; v < VECTORS; ++v) q[v] = src[v];
    scale = WKIND == 0 ? mono_e8m0_value(ws[mono_block_scale_offset(row, c, wsCols)]) : 1.0f;
  }
  MONO_DEV void decode(float (&wv)[16]) const {
    mono_u32 words[4 * VECTORS];
#pragma unroll
    for (int v = 0; v < VECTORS; ++v) {
      words[4 * v] = q[v].x;
      words[4 * v + 1] = q[v].y;
      words[4 * v + 2] = q[v].z;
      words[4 * v + 3] = q[v].w;
    }
    if (WKIND == 3) {
      mono_e2m1x8_values(words[0], wv);
      mono_e2m1x8_values(words[1], wv + 8);
      return;
    }
    if (WKIND == 0) {
#pragma unroll
      for (int v = 0; v < 4; ++v) mono_e4m3x4_values(words[v], wv + 4 * v);
      return;
    }
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      if (WKIND == 1)
        wv[i] = mono_bf16_value((mono_u16)(words[i / 2] >> (16 * (i % 2))));
      else
        wv[i] = mono_as_float(words[i]);
    }
  }
};

// The byte of an AITER-shuffled scale (row, col) inside its aligned 4-byte
// word: the padded width is a multiple of 8, so every other term of
// mono_aiter_scale_offset is a multiple of 4.
MONO_DEV int mono_aiter_scale_byte(mono_i64 row, int col) {
  return ((col / 4) % 2) * 2 + (int)((row / 16) % 2);
}

// A gemv_rows' weight chunks streamed through shared memory by asynchronous
// copies (arches that define MONO_HAS_ASYNC_COPY): RING bytes hold STAGES
// groups of D chunks a thread, so STAGES - 1 groups are in flight while one
// is computed, and bytes in flight cost no registers. A thread copies and
// reads only its own slots, so its own waits order them; no barrier. A
// chunk's scale byte travels as the aligned word that holds it.
#if defined(MONO_HAS_ASYNC_COPY)
template <int K, int WKIND, int D, int RING>
struct mono_weight_ring {
  typedef mono_weight_chunk<K, WKIND> chunk_t;
  static constexpr bool SCALED = mono_gemv_scaled(WKIND);
  static constexpr int CB = mono_gemv_chunk_bytes(WKIND);
  static constexpr int SLOT = mono_gemv_slot(WKIND);
  static constexpr int STAGE = D * MONO_BLOCK * SLOT;
  static constexpr int STAGES = RING / STAGE;
  static_assert(RING % STAGE == 0 && STAGES >= 2, "a ring holds whole stages, two at least");
  mono_u8 *base;  // 16-byte aligned
  // Through the ring's type, so that arches without these never look them up.
  MONO_DEV static void commit() { mono_async_commit(); }
  template <int N>
  MONO_DEV static void wait() { mono_async_wait<N>(); }
  MONO_DEV mono_u8 *weightSlot(int s, int d) const {
    return base + ((s * D + d) * MONO_BLOCK + mono_tid()) * CB;
  }
  MONO_DEV mono_u32 *scaleSlot(int s, int d) const {
    return (mono_u32 *)(base + STAGES * D * MONO_BLOCK * CB) + (s * D + d) * MONO_BLOCK + mono_tid();
  }
  MONO_DEV void issue(const mono_u8 *w, const mono_u8 *ws, int wsCols, mono_i64 row, int c, int s,
                      int d) const {
    mono_u8 *slot = weightSlot(s, d);
    if (WKIND == 3) {
      mono_async_copy8(slot, w + mono_aiter_weight_offset(row, 8 * c, K / 2));
    } else {
      const int bytesPerValue = WKIND == 0 ? 1 : (WKIND == 1 ? 2 : 4);
      const mono_u8 *src = w + (row * K + 16 * c) * bytesPerValue;
#pragma unroll
      for (int v = 0; v < chunk_t::VECTORS; ++v) mono_async_copy16(slot + 16 * v, src + 16 * v);
    }
    if (SCALED) {
      const mono_i64 offset = WKIND == 3 ? mono_aiter_scale_offset(row, c / 2, wsCols)
                                         : mono_block_scale_offset(row, c, wsCols);
      mono_async_copy4(scaleSlot(s, d), ws + (offset & ~(mono_i64)3));
    }
  }
  MONO_DEV void read(chunk_t &chunk, int wsCols, mono_i64 row, int c, int s, int d) const {
    const mono_u8 *slot = weightSlot(s, d);
    if (WKIND == 3) {
      const mono_u32 *q = (const mono_u32 *)slot;
      chunk.q[0].x = q[0];
      chunk.q[0].y = q[1];
    } else {
#pragma unroll
      for (int v = 0; v < chunk_t::VECTORS; ++v) chunk.q[v] = ((const mono_u32x4 *)slot)[v];
    }
    chunk.scale = 1.0f;
    if (SCALED) {
      const int byte = WKIND == 3 ? mono_aiter_scale_byte(row, c / 2)
                                  : (int)(mono_block_scale_offset(row, c, wsCols) & 3);
      chunk.scale = mono_e8m0_value((mono_u8)(*scaleSlot(s, d) >> (8 * byte)));
    }
  }
};
#else
// Without asynchronous copies the compiler gives no gemv_rows a ring.
template <int K, int WKIND, int D, int RING>
struct mono_weight_ring {
  static_assert(RING == 0, "this arch has no asynchronous copies");
};
#endif

// Where a staged bf16 token row keeps half h of chunk c (values 16c + 8h
// .. 16c + 8h + 8), in bf16 units: every chunk's first halves, then every
// second half. The lanes of a row read consecutive chunks, so each of the
// two 16-byte loads takes consecutive 16-byte pieces; with whole 32-byte
// chunks side by side a quarter-warp's loads hit the same banks twice.
template <int K>
MONO_DEV int mono_staged_half(int c, int h) {
  return h * (K / 2) + 8 * c;
}

// The fma chain of one chunk: 16 bf16 values (two 16-byte halves, low
// halfword first) against its 16 weights, in order. Every bf16-token path
// sums a chunk through it, so their sums agree bit for bit.
MONO_DEV float mono_bf16_chunk_dot(mono_u32x4 a, mono_u32x4 b, const float (&wv)[16]) {
  const mono_u32 words[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 16; ++i)
    sum = mono_fma(mono_bf16_value((mono_u16)(words[i / 2] >> (16 * (i % 2)))), wv[i], sum);
  return sum;
}

// acc[t] += (x[t][16c .. 16c + 16) . wv) * scale for the staged tokens: the
// chunk's own fma chain, then one fma with its scale (a power of two, so
// the product is exact). x is read from shared memory with two 16-byte
// loads per token (mono_staged_half), or four where it is staged as f32
// (X32: no unpacking in the loop, for arches with shared memory to spare;
// one thread a row, so a warp's lanes read the same words).
template <int K, int TC, int X32>
MONO_DEV void mono_gemv_chunk(const float (&wv)[16], float scale, const void *xl, int c, int tcn,
                              float (&acc)[TC]) {
#pragma unroll
  for (int t = 0; t < TC; ++t) {
    if (t < tcn) {
      float sum = 0.0f;
      if (X32) {
        const mono_u32x4 *xr = (const mono_u32x4 *)((const float *)xl + t * K + 16 * c);
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const mono_u32x4 q = xr[v];
          sum = mono_fma(mono_as_float(q.x), wv[4 * v], sum);
          sum = mono_fma(mono_as_float(q.y), wv[4 * v + 1], sum);
          sum = mono_fma(mono_as_float(q.z), wv[4 * v + 2], sum);
          sum = mono_fma(mono_as_float(q.w), wv[4 * v + 3], sum);
        }
      } else {
        const mono_u16 *xt = (const mono_u16 *)xl + t * K;
        sum = mono_bf16_chunk_dot(*(const mono_u32x4 *)(xt + mono_staged_half<K>(c, 0)),
                                  *(const mono_u32x4 *)(xt + mono_staged_half<K>(c, 1)), wv);
      }
      acc[t] = mono_fma(sum, scale, acc[t]);
    }
  }
}

// A thread's weight slice of a gemv_rows. When it is small enough it stays
// in registers (RESIDENT) and the weights are read once. Otherwise chunks
// stream in groups of D, the next group's loads in flight while the current
// one is computed. Either way the first chunks (all, or the first group) are
// `held`: loaded by prefetch, which a task issues before it polls for its
// activations.
template <int N, int K, int WKIND>
struct mono_gemv_weights {
  static constexpr int TP = MONO_BLOCK / N;
  static constexpr int CHUNKS = K / 16;
  static constexpr int CPT = (CHUNKS + TP - 1) / TP;  // chunks per thread
  static constexpr bool RESIDENT = mono_gemv_resident(CPT, WKIND);
  static constexpr int D = mono_gemv_group(WKIND);  // chunks a streaming group
  static constexpr int HELD = RESIDENT ? CPT : (CPT < D ? CPT : D);
  mono_weight_chunk<K, WKIND> held[HELD];
  MONO_DEV void prefetch(const mono_u8 *w, const mono_u8 *ws, int wsCols, mono_i64 n0) {
    const int tid = mono_tid(), p = tid % TP;
    const mono_i64 row = n0 + tid / TP;
#pragma unroll
    for (int q = 0; q < HELD; ++q)
      if (p + q * TP < CHUNKS) held[q].load(w, ws, wsCols, row, p + q * TP);
  }
};

// A gemv_rows' result, COUNT values ([tokens][rows]) staged in shared
// memory, dealt to the threads as a tile: value s * MONO_BLOCK + tid to
// out[s] (mono_gemv_rows and mono_gemv_mma alike); the block then meets, so
// the shared memory can be reused.
template <int SO, int COUNT>
MONO_DEV void mono_gemv_deal(const float *staged, float (&out)[SO]) {
#pragma unroll
  for (int s = 0; s < SO; ++s) {
    const int i = s * MONO_BLOCK + mono_tid();
    if (i < COUNT) out[s] = staged[i];
  }
  mono_block_sync();
}

// Results of the tokens from `count` on, which a GEMV with a runtime count
// does not compute, are 0 in the staged results [TOKENS][N] (the block meets
// after, when there were any).
template <int N, int TOKENS>
MONO_DEV void mono_gemv_zero_past(float *staged, int count) {
  if (count >= TOKENS) return;
  for (int i = count * N + mono_tid(); i < TOKENS * N; i += MONO_BLOCK) staged[i] = 0.0f;
  mono_block_sync();
}

// One output row (N = 1) over bf16 tokens read straight from memory: a
// thread keeps all its weight chunks in registers and reads each token's
// chunks itself, a few tokens' loads in flight at once, so the whole step
// is one pass with one block reduction. Staging a token costs a memory
// latency, a barrier and a block reduction a pass, and the seam mixes
// (20480 f32 weights) stage one token a pass, so the staged path pays them
// once per token. Each chunk's fma chain
// (mono_bf16_chunk_dot), its fma into the thread's sum and the in-order
// sum of the threads' parts are mono_gemv_rows_run's, so the results are
// the same bit for bit. `partial` holds TOKENS * MONO_BLOCK
// words, `outL` the TOKENS results.
// Unscaled bf16 or f32 weights whose thread slice fits 80 registers (the
// mixes' 5 f32 chunks).
inline constexpr int MONO_ROW_DIRECT_WORDS = 80;
template <int K, int WKIND>
inline constexpr bool mono_gemv_row_direct_fits =
    (WKIND == 1 || WKIND == 2) && (K / 16 + MONO_BLOCK - 1) / MONO_BLOCK * 4 *
                                          mono_gemv_vectors(WKIND) <= MONO_ROW_DIRECT_WORDS;

template <int SO, int K, int TOKENS, int WKIND>
MONO_DEV void mono_gemv_row_direct(const mono_gemv_weights<1, K, WKIND> &weights,
                                   const mono_u8 *w, mono_i64 n0, const mono_u16 *x, mono_i64 t0,
                                   float (&out)[SO], float *partial, float *outL, int count) {
  typedef mono_gemv_weights<1, K, WKIND> slice_t;
  typedef mono_weight_chunk<K, WKIND> chunk_t;
  constexpr int CPT = slice_t::CPT, CHUNKS = slice_t::CHUNKS, HELD = slice_t::HELD;
  // Tokens whose loads are in flight together: as many registers as the
  // weights at most.
  constexpr int PER_TOKEN = 8 * CPT;
  constexpr int GROUP =
      PER_TOKEN >= MONO_ROW_DIRECT_WORDS ? 1 : MONO_ROW_DIRECT_WORDS / PER_TOKEN;
  const int tid = mono_tid();
  if (count > 0) {
    float wv[CPT][16];
#pragma unroll
    for (int q = 0; q < CPT; ++q) {
      const int c = tid + q * MONO_BLOCK;
      if (c < CHUNKS) {
        // The prefetched chunks by constant index: a variable one put
        // `held` in scratch on gfx950.
        if (q < HELD) {
          weights.held[q < HELD ? q : 0].decode(wv[q]);
        } else {
          chunk_t chunk;
          chunk.load(w, nullptr, 0, n0, c);
          chunk.decode(wv[q]);
        }
      }
    }
#pragma unroll 1
    for (int g0 = 0; g0 < count; g0 += GROUP) {
      mono_u32x4 xv[GROUP][CPT][2];
#pragma unroll
      for (int t = 0; t < GROUP; ++t)
#pragma unroll
        for (int q = 0; q < CPT; ++q) {
          const int c = tid + q * MONO_BLOCK;
          if (g0 + t < count && c < CHUNKS) {
            const mono_u32x4 *src = (const mono_u32x4 *)(x + (t0 + g0 + t) * K + 16 * c);
            xv[t][q][0] = src[0];
            xv[t][q][1] = src[1];
          }
        }
#pragma unroll
      for (int t = 0; t < GROUP; ++t) {
        if (g0 + t >= count) break;
        float acc = 0.0f;
#pragma unroll
        for (int q = 0; q < CPT; ++q) {
          if (tid + q * MONO_BLOCK < CHUNKS)
            acc = mono_fma(mono_bf16_chunk_dot(xv[t][q][0], xv[t][q][1], wv[q]), 1.0f, acc);
        }
        partial[(g0 + t) * MONO_BLOCK + tid] = acc;
      }
    }
    mono_block_sync();
    if (tid < count) {
      float s = 0.0f;
      for (int q = 0; q < MONO_BLOCK; ++q) s += partial[tid * MONO_BLOCK + q];
      outL[tid] = s;
    }
    mono_block_sync();
  }
  mono_gemv_zero_past<1, TOKENS>(outL, count);
  mono_gemv_deal<SO, TOKENS>(outL, out);
}

// With a runtime `count` (0 .. TOKENS, block-uniform): only the first
// `count` tokens are read and summed, the others' results are 0, and a count
// of 0 reads no weights past those `weights` holds.
template <int SO, int N, int K, int TOKENS, int TC, int WKIND, int XF32, int RING = 0,
          int X32 = 0>
MONO_DEV void mono_gemv_rows_run(const mono_gemv_weights<N, K, WKIND> &weights,
                                 const mono_u8 *w, const mono_u8 *ws, int wsCols, mono_i64 n0,
                                 const void *x, const mono_u8 *xs, mono_i64 t0, float (&out)[SO],
                                 float *lds, int count = TOKENS) {
  typedef mono_gemv_weights<N, K, WKIND> slice_t;
  constexpr int TP = slice_t::TP, CHUNKS = slice_t::CHUNKS, CPT = slice_t::CPT;
  constexpr bool RESIDENT = slice_t::RESIDENT;
  constexpr int SCALED = WKIND == 0 || WKIND == 3;
  constexpr int D = slice_t::D;
  constexpr int GROUPS = (CPT + D - 1) / D;
  typedef mono_weight_chunk<K, WKIND> chunk_t;
  // The staged tokens: TC rows of K bf16 (chunk halves apart:
  // mono_staged_half), or of K f32 (X32).
  constexpr int XWORDS = X32 ? TC * K : TC * K / 2;
  void *xl = lds;
  float *partial = lds + XWORDS;
  float *outL = partial + TC * MONO_BLOCK;
  // One row over bf16 tokens reads them directly; its TOKENS x MONO_BLOCK
  // partials take the place of the staged tokens and their partials.
  if constexpr (N == 1 && !SCALED && !XF32 && mono_gemv_row_direct_fits<K, WKIND> &&
                TOKENS * MONO_BLOCK <= XWORDS + TC * MONO_BLOCK) {
    mono_gemv_row_direct<SO, K, TOKENS, WKIND>(weights, w, n0, (const mono_u16 *)x, t0, out,
                                               lds, outL, count);
    return;
  }
  const int tid = mono_tid(), p = tid % TP;
  const mono_i64 row = n0 + tid / TP;
  const chunk_t *resident = weights.held;
  for (int tc0 = 0; tc0 < count; tc0 += TC) {
    const int tcn = count - tc0 < TC ? count - tc0 : TC;
    // Stage the tokens as bf16, 16 values a thread at a time: one 16-byte
    // code load (or two/four for bf16/f32), 32 bytes stored. A round's
    // pieces are all loaded before the first is stored: `lds` may alias
    // global memory as far as the compiler knows, so in a rolled loop of
    // load then store each load waits for the store before it, one memory
    // latency a piece.
    constexpr int LOADS = SCALED ? 1 : XF32 ? 4 : 2;  // 16-byte loads a piece
    constexpr int ROUNDS = XF32 ? 4 : 8;
    const int pieces = tcn * (K / 16);
#pragma unroll 1
    for (int i0 = tid; i0 < pieces; i0 += ROUNDS * MONO_BLOCK) {
      mono_u32x4 raw[ROUNDS][LOADS];
      mono_u8 scaleCode[ROUNDS];
#pragma unroll
      for (int r = 0; r < ROUNDS; ++r) {
        const int i = i0 + r * MONO_BLOCK;
        if (i >= pieces) break;
        const int t = i / (K / 16), k = (i % (K / 16)) * 16;
        const mono_i64 at = (t0 + tc0 + t) * K + k;
        const mono_u32x4 *src = SCALED ? (const mono_u32x4 *)((const mono_u8 *)x + at)
                                : XF32 ? (const mono_u32x4 *)((const float *)x + at)
                                       : (const mono_u32x4 *)((const mono_u16 *)x + at);
#pragma unroll
        for (int l = 0; l < LOADS; ++l) raw[r][l] = src[l];
        if (SCALED) scaleCode[r] = xs[(t0 + tc0 + t) * (K / 32) + k / 32];
      }
#pragma unroll
      for (int r = 0; r < ROUNDS; ++r) {
        const int i = i0 + r * MONO_BLOCK;
        if (i >= pieces) break;
        const int t = i / (K / 16), k = (i % (K / 16)) * 16;
        mono_u32 packed[8];
        if (SCALED) {
          const mono_u32x4 q = raw[r][0];
          const float scale = mono_e8m0_value(scaleCode[r]);
          const mono_u32 words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
          for (int h = 0; h < 8; ++h) {
            const mono_u32 lo = mono_bf16_bits(mono_e4m3_value((mono_u8)(words[h / 2] >> (16 * (h % 2)))) * scale);
            const mono_u32 hi = mono_bf16_bits(mono_e4m3_value((mono_u8)(words[h / 2] >> (16 * (h % 2) + 8))) * scale);
            packed[h] = lo | (hi << 16);
          }
        } else if (XF32) {
#pragma unroll
          for (int h = 0; h < 4; ++h) {
            const mono_u32x4 q = raw[r][h];
            packed[2 * h] = (mono_u32)mono_bf16_bits(mono_as_float(q.x)) | ((mono_u32)mono_bf16_bits(mono_as_float(q.y)) << 16);
            packed[2 * h + 1] = (mono_u32)mono_bf16_bits(mono_as_float(q.z)) | ((mono_u32)mono_bf16_bits(mono_as_float(q.w)) << 16);
          }
        } else {
          const mono_u32x4 a = raw[r][0], b = raw[r][LOADS - 1];
          const mono_u32 words[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
          for (int h = 0; h < 8; ++h) packed[h] = words[h];
        }
        if (X32) {
          mono_u32x4 *dst = (mono_u32x4 *)((float *)xl + t * K + k);
#pragma unroll
          for (int v = 0; v < 4; ++v)
            dst[v] = mono_u32x4{packed[2 * v] << 16, packed[2 * v] & 0xFFFF0000u,
                                packed[2 * v + 1] << 16, packed[2 * v + 1] & 0xFFFF0000u};
        } else {
          mono_u16 *xt = (mono_u16 *)xl + t * K;
          *(mono_u32x4 *)(xt + mono_staged_half<K>(k / 16, 0)) =
              mono_u32x4{packed[0], packed[1], packed[2], packed[3]};
          *(mono_u32x4 *)(xt + mono_staged_half<K>(k / 16, 1)) =
              mono_u32x4{packed[4], packed[5], packed[6], packed[7]};
        }
      }
    }
    mono_block_sync();
    float acc[TC];
#pragma unroll
    for (int t = 0; t < TC; ++t) acc[t] = 0.0f;
    float wv[16];
    if (RESIDENT) {
#pragma unroll
      for (int q = 0; q < CPT; ++q) {
        if (p + q * TP < CHUNKS) {
          resident[q].decode(wv);
          mono_gemv_chunk<K, TC, X32>(wv, resident[q].scale, xl, p + q * TP, tcn, acc);
        }
      }
    } else if constexpr (RING > 0) {
      // The ring: groups from g0 on are copied STAGES - 1 ahead; the first
      // group, when prefetch loaded it, is computed from registers meanwhile.
      typedef mono_weight_ring<K, WKIND, D, RING> ring_t;
      constexpr int STAGES = ring_t::STAGES;
      // After the gemv's own words, 16-byte aligned.
      const ring_t ring{(mono_u8 *)(lds + ((XWORDS + TC * MONO_BLOCK + TOKENS * N + 3) & ~3))};
      const int g0 = tc0 == 0 ? 1 : 0;
      auto issueGroup = [&](int g) {
        if (g < GROUPS) {
#pragma unroll
          for (int d = 0; d < D; ++d) {
            const int c = p + (g * D + d) * TP;
            if (c < CHUNKS) ring.issue(w, ws, wsCols, row, c, g % STAGES, d);
          }
        }
        ring_t::commit();  // empty past the end: every wait counts STAGES - 1 groups
      };
#pragma unroll 1
      for (int g = g0; g < g0 + STAGES - 1; ++g) issueGroup(g);
      if (g0 == 1) {
#pragma unroll
        for (int d = 0; d < D; ++d)
          if (d < slice_t::HELD && p + d * TP < CHUNKS) {
            weights.held[d].decode(wv);
            mono_gemv_chunk<K, TC, X32>(wv, weights.held[d].scale, xl, p + d * TP, tcn, acc);
          }
      }
#pragma unroll 1
      for (int g = g0; g < GROUPS; ++g) {
        issueGroup(g + STAGES - 1);  // into the stage group g - 1 left
        ring_t::template wait<STAGES - 1>();
#pragma unroll
        for (int d = 0; d < D; ++d) {
          const int c = p + (g * D + d) * TP;
          if (c < CHUNKS) {
            chunk_t chunk;
            ring.read(chunk, wsCols, row, c, g % STAGES, d);
            chunk.decode(wv);
            mono_gemv_chunk<K, TC, X32>(wv, chunk.scale, xl, c, tcn, acc);
          }
        }
      }
      ring_t::template wait<0>();
    } else {
      // The first group was loaded by prefetch; the next tokens' pass
      // reloads it.
      chunk_t current[D], next[D];
#pragma unroll
      for (int d = 0; d < D; ++d)
        if (p + d * TP < CHUNKS) {
          if (tc0 == 0 && d < slice_t::HELD)
            current[d] = weights.held[d];
          else
            current[d].load(w, ws, wsCols, row, p + d * TP);
        }
#pragma unroll 1
      for (int g = 0; g < GROUPS; ++g) {
        if (g + 1 < GROUPS) {
#pragma unroll
          for (int d = 0; d < D; ++d) {
            const int c = p + ((g + 1) * D + d) * TP;
            if (c < CHUNKS) next[d].load(w, ws, wsCols, row, c);
          }
        }
#pragma unroll
        for (int d = 0; d < D; ++d) {
          const int c = p + (g * D + d) * TP;
          if (c < CHUNKS) {
            current[d].decode(wv);
            mono_gemv_chunk<K, TC, X32>(wv, current[d].scale, xl, c, tcn, acc);
          }
        }
#pragma unroll
        for (int d = 0; d < D; ++d) current[d] = next[d];
      }
    }
#pragma unroll
    for (int t = 0; t < TC; ++t) partial[t * MONO_BLOCK + tid] = acc[t];
    mono_block_sync();
    for (int i = tid; i < tcn * N; i += MONO_BLOCK) {
      const int t = i / N, jj = i % N;
      float s = 0.0f;
      for (int q = 0; q < TP; ++q) s += partial[t * MONO_BLOCK + jj * TP + q];
      outL[(tc0 + t) * N + jj] = s;
    }
    mono_block_sync();
  }
  mono_gemv_zero_past<N, TOKENS>(outL, count);
  mono_gemv_deal<SO, TOKENS * N>(outL, out);
}

// The whole GEMV when nothing is waited for in between.
template <int SO, int N, int K, int TOKENS, int TC, int WKIND, int XF32, int RING = 0,
          int X32 = 0>
MONO_DEV void mono_gemv_rows(const mono_u8 *w, const mono_u8 *ws, int wsCols, mono_i64 n0,
                             const void *x, const mono_u8 *xs, mono_i64 t0, float (&out)[SO],
                             float *lds, int count = TOKENS) {
  mono_gemv_weights<N, K, WKIND> weights;
  if (count > 0) weights.prefetch(w, ws, wsCols, n0);
  mono_gemv_rows_run<SO, N, K, TOKENS, TC, WKIND, XF32, RING, X32>(weights, w, ws, wsCols, n0, x,
                                                                    xs, t0, out, lds, count);
}

// ---- mailboxes: (value, tag) pairs written with one 8-byte store ----
// The pair a flag holds once `task` has published in the step of `tag`.
MONO_DEV mono_u64 mono_flag_pair(mono_i64 task, mono_u32 tag) {
  return ((mono_u64)tag << 32) | (mono_u32)task;
}

// Publish: every thread waits for its stores and fences at device scope, the
// block meets, then one thread writes the pair (task, tag) with release.
// Where the arch's barrier is cumulative (MONO_BARRIER_IS_CUMULATIVE), the
// barrier and thread 0's release order every thread's stores already, and
// the fences per thread go; likewise after a wait's barrier. The barrier
// also orders the next task's reuse of shared memory, so no other one ends
// a publishing task: the block goes on while thread 0's release waits for
// the task's stores.
#ifndef MONO_BARRIER_IS_CUMULATIVE
#define MONO_BARRIER_IS_CUMULATIVE 0
#endif
MONO_DEV void mono_publish_flag(mono_u64 *flags, mono_i64 task, mono_u32 tag) {
  if (!MONO_BARRIER_IS_CUMULATIVE) mono_fence_release_device();
  mono_block_sync();
  if (mono_tid() == 0)
    mono_store_release_device_u64(&flags[task], mono_flag_pair(task, tag));
}

// A task that skips the rest of its stage (mono.skip_unless rest) publishes
// the flags of tasks first, first + stride, ... below end (stride 1 where
// tasks are claimed: any CTA may hold the first of them; else the grid, this
// CTA's own), spread over the block. Those tasks write nothing, so there is
// nothing for a release to order: relaxed stores, no barrier.
MONO_DEV void mono_publish_rest(mono_u64 *flags, mono_i64 first, mono_i64 end, mono_i64 stride,
                                mono_u32 tag) {
  for (mono_i64 task = first + mono_tid() * stride; task < end; task += MONO_BLOCK * stride)
    mono_store_relaxed_device_u64(&flags[task], mono_flag_pair(task, tag));
}

// ---- bounded polls ----
// A poll that has waited longer than the rank's budget gives up: the first
// poll of the rank to do so writes the wait-fault record (epoch_shape.h),
// and from then on every poll of the rank gives up at its first miss. A
// wait that gives up goes on as if its flags were set (the block keeps
// meeting at every barrier, so no thread leaves another waiting), and the
// launch runs to its end with outputs that mean nothing; the runtime reads
// the record and reports the wait. Only a poll that misses reaches here.
MONO_DEV bool mono_poll_gives_up(mono_u32 *epoch, mono_u64 start, int rank, int site,
                                 mono_i64 flag, mono_u32 tag, mono_u32 seen) {
  mono_u32 *record = epoch + mono_epoch_fault_word(MONO_GRID);
  if (mono_load_acquire_device(record + MONO_FAULT_STATE) != 0u)
    return true;
  const mono_u32 budget = mono_load_acquire_device(record + MONO_FAULT_BUDGET_US);
  const mono_u64 limit = 1000ull * (budget ? budget : MONO_DEFAULT_WAIT_BUDGET_US);
  if (mono_clock_ns() - start < limit)
    return false;
  if (mono_atomic_cas_device(record + MONO_FAULT_STATE, 0u, 1u) == 0u) {
    mono_store_relaxed_device(record + MONO_FAULT_RANK, (mono_u32)rank);
    mono_store_relaxed_device(record + MONO_FAULT_CTA, (mono_u32)mono_cta());
    mono_store_relaxed_device(record + MONO_FAULT_SITE, (mono_u32)site);
    mono_store_relaxed_device(record + MONO_FAULT_FLAG, (mono_u32)flag);
    mono_store_relaxed_device(record + MONO_FAULT_EXPECTED, tag);
    mono_store_relaxed_device(record + MONO_FAULT_SEEN, seen);
  }
  return true;
}

// Thread i polls flags first + i (+ k * MONO_BLOCK) until each holds the
// step's tag or the rank gives up. The clock starts at a flag's first miss,
// and the record and clock are read every MONO_POLLS_PER_CHECK polls only,
// so a flag that arrives is seen as soon as without a budget.
#define MONO_POLLS_PER_CHECK 32
// SYSTEM: peer flags, read at system scope.
template <int SYSTEM>
MONO_DEV mono_u32 mono_flag_tag(const mono_u64 *flag) {
  return (mono_u32)((SYSTEM ? mono_load_acquire_system_u64(flag)
                            : mono_load_acquire_device_u64(flag)) >> 32);
}
template <int SYSTEM>
MONO_DEV void mono_poll_flags(const mono_u64 *flags, mono_i64 first, mono_i64 count, mono_u32 tag,
                              mono_u32 *epoch, int rank, int site) {
  for (mono_i64 i = mono_tid(); i < count; i += MONO_BLOCK) {
    mono_u32 seen = mono_flag_tag<SYSTEM>(&flags[first + i]);
    if (seen == tag)
      continue;
    const mono_u64 start = mono_clock_ns();
    for (unsigned polls = 1;; ++polls) {
      mono_poll_pause();
      seen = mono_flag_tag<SYSTEM>(&flags[first + i]);
      if (seen == tag ||
          (polls % MONO_POLLS_PER_CHECK == 0 &&
           mono_poll_gives_up(epoch, start, rank, site, first + i, tag, seen)))
        break;
    }
  }
}

// Batched poll: every thread polls its share of the flags, then the block
// meets and every thread fences (acquire).
MONO_DEV void mono_wait_flags(const mono_u64 *flags, mono_i64 first, mono_i64 count, mono_u32 tag,
                              mono_u32 *epoch, int rank, int site) {
  mono_poll_flags<0>(flags, first, count, tag, epoch, rank, site);
  mono_block_sync();
  if (!MONO_BARRIER_IS_CUMULATIVE) mono_fence_acquire_device();
}

// ---- peer mailboxes (tensor parallelism), at system scope ----
// A peer store lands in the destination rank's buffer; the flag of the task
// goes to every rank once all its stores are complete.
MONO_DEV void mono_publish_peer_flag(mono_u8 *const *peers, int ranks, mono_i64 parityOffset,
                                     mono_i64 slotOffset, mono_i64 task, mono_u32 tag) {
  if (!MONO_BARRIER_IS_CUMULATIVE) mono_fence_release_system();
  mono_block_sync();
  if (mono_tid() == 0)
    for (int r = 0; r < ranks; ++r)
      mono_store_release_system_u64((mono_u64 *)(peers[r] + parityOffset + slotOffset) + task,
                                    mono_flag_pair(task, tag));
}

MONO_DEV void mono_wait_peer_flags(const mono_u64 *flags, mono_i64 first, mono_i64 count,
                                   mono_u32 tag, mono_u32 *epoch, int rank, int site) {
  mono_poll_flags<1>(flags, first, count, tag, epoch, rank, site);
  mono_block_sync();
  if (!MONO_BARRIER_IS_CUMULATIVE) mono_fence_acquire_system();
}

// ---- epoch end: every CTA marks its arrival; the last one moves e on ----
// Layout (see mono-plan-memory): [0] epoch e, [1] arrivals, [2 + cta] marks.
// [2 + MONO_GRID + s] the task counters of dynamic stages, a ring of 256:
// the launch ending step e zeroes step e + 32's four counters.
MONO_DEV void mono_epoch_end(mono_u32 *epoch, mono_u32 e, int advance) {
  mono_block_sync();
  if (mono_tid() == 0) {
    mono_store_relaxed_device(&epoch[2 + mono_cta()], e + 1u);
    if (advance && mono_atomic_add_device(&epoch[1], 1u) == (mono_u32)MONO_GRID - 1u) {
      for (mono_u32 j = 0; j < 4u; ++j)
        mono_store_relaxed_device(&epoch[2 + MONO_GRID + ((4u * (e + 32u) + j) & 255u)], 0u);
      mono_store_relaxed_device(&epoch[1], 0u);
      mono_store_release_device(&epoch[0], e + 1u);
    }
  }
}

// The next task of a dynamic stage for the whole block, which reads it from
// shared memory. Thread 0 claims one task ahead: the stage's first claim
// takes two consecutive tasks with one atomic, and each later one hands out
// the task held in `ahead` and claims the next, so the atomic's round trip
// overlaps the work on the task it hands out (a relaxed add: a claim
// orders nothing, and the counters are zeroed a launch boundary or more
// before any claim of theirs). A held task is always worked
// on before the block leaves the stage; the claims past the end are unused.
MONO_DEV mono_i64 mono_claim_task(mono_u32 *counter, mono_u32 *shared, mono_u32 &ahead, int first) {
  mono_block_sync();
  if (mono_tid() == 0) {
    if (first) {
      const mono_u32 two = mono_atomic_add_relaxed_device(counter, 2u);
      *shared = two;
      ahead = two + 1u;
    } else {
      *shared = ahead;
      ahead = mono_atomic_add_relaxed_device(counter, 1u);
    }
  }
  mono_block_sync();
  return (mono_i64)*shared;
}

// A task publish of a dynamic stage that also hands the block its next task
// (mono_claim_task's later claims, whose first barrier is the publish's):
// thread 0 hands over the task it holds and claims the next before it
// writes the flag, so the rest of the block starts that task while the
// release waits for this one's stores.
MONO_DEV mono_i64 mono_publish_and_claim(mono_u64 *flags, mono_i64 task, mono_u32 tag,
                                         mono_u32 *counter, mono_u32 *shared, mono_u32 &ahead) {
  if (!MONO_BARRIER_IS_CUMULATIVE) mono_fence_release_device();
  const mono_i64 next = mono_claim_task(counter, shared, ahead, 0);
  if (mono_tid() == 0)
    mono_store_release_device_u64(&flags[task], mono_flag_pair(task, tag));
  return next;
}
