// The device library's GEMV over a step's tokens (mono_gemv_rows), run as
// one block of host threads (HostArch.h), against a double-precision sum of
// the same dequantized operands: MXFP8 activations staged as bf16, weights
// e4m3 with 32 x 32 E8M0 blocks (a slice held in registers, and one
// streamed in groups) and MXFP4 in AITER's shuffled layouts (the routed
// experts' shape, one token and three). Each output within 2e-6 of the
// largest output magnitude: the device sums 16-value chunks in f32 fused
// multiply-adds, then the threads of a row in order. The tensor-core path
// (mono_gemv_mma, gemv_mma.h) runs on the host arch's emulation of sm_90's
// instruction, to the same bound.
#include "monodc/formats/AiterShuffle.h"
#include "monodc/formats/NumberFormats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

// clang-format off
#include "prelude.h"
#include "monodc/device/gemv_shape.h"
#include "monodc/device/epoch_shape.h"
#include "HostArch.h"
#include "generic.h"
#include "gemv_mma.h"
// clang-format on

namespace fmts = monodc::formats;

namespace {

/// Activations: MXFP8 codes [tokens][K] and E8M0 scales [tokens][K / 32].
struct Activations {
  std::vector<uint8_t> codes, scales;
  /// The value the device stages: bf16 of the dequantized code.
  double value(int token, int k, int K) const {
    const float v = fmts::e4m3Value(codes[size_t(token) * K + k]) *
                    fmts::e8m0Value(scales[size_t(token) * (K / 32) + k / 32]);
    return fmts::bf16Value(fmts::bf16Bits(v));
  }
};

Activations randomActivations(int tokens, int K, std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Activations a;
  for (int t = 0; t < tokens; ++t) {
    std::vector<float> row(K);
    for (float &v : row)
      v = u(rng);
    std::vector<uint8_t> codes(K), scales(K / 32);
    fmts::quantizeMxfp8(row.data(), K, codes.data(), scales.data(), fmts::Mxfp8Variant::Standard);
    a.codes.insert(a.codes.end(), codes.begin(), codes.end());
    a.scales.insert(a.scales.end(), scales.begin(), scales.end());
  }
  return a;
}

/// A weight in the device's layout and its dequantized values [N][K].
struct Weight {
  std::vector<uint8_t> bytes, scales;
  int scaleCols = 0;
  std::vector<double> values;
};

/// e4m3 codes [N][K], E8M0 scales [N / 32][K / 32] (one per 32 x 32 block).
Weight e4m3Weight(int N, int K, std::mt19937 &rng) {
  Weight w;
  w.scaleCols = K / 32;
  for (int i = 0; i < N * K; ++i)
    w.bytes.push_back(fmts::e4m3Bits(std::uniform_real_distribution<float>(-2, 2)(rng)));
  for (int i = 0; i < (N / 32 + (N % 32 != 0)) * (K / 32); ++i)
    w.scales.push_back(uint8_t(120 + rng() % 6));
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      w.values.push_back(fmts::e4m3Value(w.bytes[size_t(n) * K + k]) *
                         fmts::e8m0Value(w.scales[(n / 32) * w.scaleCols + k / 32]));
  return w;
}

/// MXFP4 [N][K] quantized from random values, packed, and shuffled (bytes
/// and scales) as AITER leaves them.
Weight mxfp4Weight(int N, int K, std::mt19937 &rng) {
  Weight w;
  std::vector<uint8_t> codes(size_t(N) * K), scales(size_t(N) * (K / 32));
  for (int n = 0; n < N; ++n) {
    std::vector<float> row(K);
    for (float &v : row)
      v = std::uniform_real_distribution<float>(-3, 3)(rng) * float(1 + n % 3);
    fmts::quantizeMxfp4(row.data(), K, codes.data() + size_t(n) * K,
                        scales.data() + size_t(n) * (K / 32));
  }
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      w.values.push_back(fmts::mxfp4Value(codes[size_t(n) * K + k],
                                          scales[size_t(n) * (K / 32) + k / 32]));
  w.bytes = fmts::shuffleWeight(fmts::packE2m1(codes, N, K), 1, N, K / 2);
  w.scales = fmts::shuffleScales(scales, N, K / 32);
  w.scaleCols = int(fmts::paddedScaleCols(K / 32));
  return w;
}

/// Bytes of one stage of a weight ring: D chunks a thread, each with its
/// scale word when the weight is scaled.
constexpr mono_u32x4 kNanWords{0x7FC00000u, 0x7FC00000u, 0x7FC00000u, 0x7FC00000u};

template <int N, int K, int WKIND>
constexpr int ringStageBytes() {
  constexpr int chunk = WKIND == 3 ? 8 : 16 * mono_weight_chunk<K, WKIND>::VECTORS;
  constexpr int scale = WKIND == 0 || WKIND == 3 ? 4 : 0;
  return mono_gemv_weights<N, K, WKIND>::D * MONO_BLOCK * (chunk + scale);
}

/// mono_gemv_rows on one block: outputs [TOKENS][N]; with RING bytes of
/// weight ring after its own shared memory (16-byte aligned), and the
/// tokens staged as f32 with X32.
template <int N, int K, int TOKENS, int TC, int WKIND, int RING = 0, int X32 = 0>
std::vector<float> deviceGemv(const Weight &w, const Activations &x, int count = TOKENS) {
  constexpr int SO = (TOKENS * N + MONO_BLOCK - 1) / MONO_BLOCK;
  constexpr int own = ((X32 ? TC * K : TC * K / 2) + TC * MONO_BLOCK + TOKENS * N + 3) & ~3;
  // Shared memory starts as NaN words, as a launch's holds what ran before.
  std::vector<mono_u32x4> lds((own * 4 + RING) / 16, kNanWords);
  std::vector<float> out(TOKENS * N);
  host_arch::runBlock([&] {
    float o[SO];
    mono_gemv_rows<SO, N, K, TOKENS, TC, WKIND, 0, RING, X32>(
        w.bytes.data(), w.scales.data(), w.scaleCols, 0, x.codes.data(), x.scales.data(), 0, o,
        reinterpret_cast<float *>(lds.data()), count);
    for (int s = 0; s < SO; ++s)
      if (s * MONO_BLOCK + mono_tid() < TOKENS * N)
        out[s * MONO_BLOCK + mono_tid()] = o[s];
  });
  return out;
}

/// The largest |device - exact| over the outputs, relative to the largest
/// exact output.
double worstRelativeError(const std::vector<float> &got, const Weight &w, const Activations &x,
                          int tokens, int N, int K) {
  std::vector<double> want(size_t(tokens) * N, 0.0);
  double scale = 0;
  for (int t = 0; t < tokens; ++t)
    for (int n = 0; n < N; ++n) {
      double s = 0;
      for (int k = 0; k < K; ++k)
        s += x.value(t, k, K) * w.values[size_t(n) * K + k];
      want[size_t(t) * N + n] = s;
      scale = std::max(scale, std::fabs(s));
    }
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    // A result never written (the shared memory's NaN poison) or not finite
    // fails outright: std::max would pass over a NaN.
    if (!std::isfinite(got[i]))
      return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / scale);
  }
  return worst;
}

constexpr double kBound = 2e-6;

/// worstRelativeError of mono_gemv_rows on this shape (the shape given once).
template <int N, int K, int TOKENS, int TC, int WKIND, int RING = 0, int X32 = 0>
double rowsError(const Weight &w, const Activations &x) {
  return worstRelativeError(deviceGemv<N, K, TOKENS, TC, WKIND, RING, X32>(w, x), w, x, TOKENS, N,
                            K);
}

TEST(DeviceGemvRows, E4m3SliceHeldInRegisters) {
  // 16 rows of 2048: 8 chunks a thread, resident.
  static_assert(mono_gemv_weights<16, 2048, 0>::RESIDENT);
  std::mt19937 rng(1);
  const Weight w = e4m3Weight(16, 2048, rng);
  const Activations x = randomActivations(6, 2048, rng);
  EXPECT_LT((rowsError<16, 2048, 6, 6, 0>(w, x)), kBound);
}

TEST(DeviceGemvRows, E4m3SliceStreamedInGroups) {
  // 16 rows of 4096: 16 chunks a thread, streamed four at a time, two
  // passes of three tokens (the held first group reloaded on the second).
  static_assert(!mono_gemv_weights<16, 4096, 0>::RESIDENT);
  std::mt19937 rng(2);
  const Weight w = e4m3Weight(16, 4096, rng);
  const Activations x = randomActivations(6, 4096, rng);
  EXPECT_LT((rowsError<16, 4096, 6, 3, 0>(w, x)), kBound);
}

TEST(DeviceGemvRows, Mxfp4InAiterLayoutsForOneAndThreeTokens) {
  std::mt19937 rng(3);
  const Weight w = mxfp4Weight(32, 1024, rng);
  const Activations one = randomActivations(1, 1024, rng), three = randomActivations(3, 1024, rng);
  EXPECT_LT((rowsError<32, 1024, 1, 1, 3>(w, one)), kBound);
  EXPECT_LT((rowsError<32, 1024, 3, 3, 3>(w, three)), kBound);
}

// Weights streamed through a ring of shared memory by asynchronous copies
// (the host arch copies only when a thread waits, as cp.async may) give the
// register path's results bit for bit: the same chunks in the same order;
// so do tokens staged as f32 (X32) instead of bf16.
TEST(DeviceGemvRows, RingStreamsTheSameSumsAsRegisters) {
  std::mt19937 rng(5);
  // routed.ug's shape: 64 MXFP4 rows of 5120, one token, 10 groups.
  const Weight m = mxfp4Weight(64, 5120, rng);
  const Activations one = randomActivations(1, 5120, rng);
  const std::vector<float> viaRegisters = deviceGemv<64, 5120, 1, 1, 3>(m, one);
  const std::vector<float> viaRing =
      deviceGemv<64, 5120, 1, 1, 3, 4 * ringStageBytes<64, 5120, 3>()>(m, one);
  EXPECT_EQ(viaRing, viaRegisters);
  EXPECT_LT(worstRelativeError(viaRing, m, one, 1, 64, 5120), kBound);
  // e4m3 in two passes of three tokens: the second pass streams every
  // group through the ring, the first one too; three stages.
  const Weight e = e4m3Weight(16, 4096, rng);
  const Activations six = randomActivations(6, 4096, rng);
  const std::vector<float> ringE4m3 =
      deviceGemv<16, 4096, 6, 3, 0, 3 * ringStageBytes<16, 4096, 0>()>(e, six);
  EXPECT_EQ(ringE4m3, (deviceGemv<16, 4096, 6, 3, 0>(e, six)));
  EXPECT_LT(worstRelativeError(ringE4m3, e, six, 6, 16, 4096), kBound);
  // As sm_90 runs it: the ring, with the tokens staged as f32.
  EXPECT_EQ((deviceGemv<64, 5120, 1, 1, 3, 4 * ringStageBytes<64, 5120, 3>(), 1>(m, one)),
            viaRegisters);
  EXPECT_EQ((deviceGemv<16, 4096, 6, 3, 0, 3 * ringStageBytes<16, 4096, 0>(), 1>(e, six)),
            ringE4m3);
  // A wrong scale is seen through the ring too.
  Weight doubled = m;
  ++doubled.scales[7];
  EXPECT_NE((deviceGemv<64, 5120, 1, 1, 3, 4 * ringStageBytes<64, 5120, 3>()>(doubled, one)),
            viaRegisters);
}

/// One row of f32 weights [K] over bf16 tokens [tokens][K], summed as the
/// device does it: per thread p the chunks p, p + MONO_BLOCK, ... each in its
/// own fma chain joining the thread's sum by an fma with scale 1, then the
/// threads' sums in order.
std::vector<float> rowSumsInDeviceOrder(const std::vector<float> &w,
                                        const std::vector<uint16_t> &x, int tokens, int K) {
  std::vector<float> out(tokens);
  for (int t = 0; t < tokens; ++t) {
    float sum = 0.0f;
    for (int p = 0; p < MONO_BLOCK; ++p) {
      float acc = 0.0f;
      for (int c = p; c < K / 16; c += MONO_BLOCK) {
        float chunk = 0.0f;
        for (int i = 0; i < 16; ++i)
          chunk = std::fma(fmts::bf16Value(x[size_t(t) * K + 16 * c + i]), w[16 * c + i], chunk);
        acc = std::fma(chunk, 1.0f, acc);
      }
      sum += acc;
    }
    out[t] = sum;
  }
  return out;
}

/// mono_gemv_rows of one f32 row over bf16 tokens (the seam mix's shape):
/// the outputs [TOKENS].
template <int K, int TOKENS, int TC>
std::vector<float> deviceRow(const std::vector<float> &w, const std::vector<uint16_t> &x,
                             int count) {
  constexpr int own = (TC * K / 2 + TC * MONO_BLOCK + TOKENS + 3) & ~3;
  std::vector<mono_u32x4> lds(own / 4, kNanWords);
  std::vector<float> out(TOKENS);
  host_arch::runBlock([&] {
    float o[1];
    mono_gemv_rows<1, 1, K, TOKENS, TC, 2, 0>(reinterpret_cast<const mono_u8 *>(w.data()),
                                             nullptr, 0, 0, x.data(), nullptr, 0, o,
                                             reinterpret_cast<float *>(lds.data()), count);
    if (mono_tid() < TOKENS)
      out[mono_tid()] = o[0];
  });
  return out;
}

// A one-row GEMV over bf16 tokens (the seam mixes: 20480 f32 weights, 6
// tokens) reads its tokens straight from memory, all in one pass
// (mono_gemv_row_direct), and gives the sums of the staged path bit for
// bit: the same chains in the same order. Tokens past a runtime count are
// not read (NaN there) and give 0; a weight off by 3% is seen.
TEST(DeviceGemvRows, OneRowReadsItsTokensDirectlyWithTheSameSums) {
  constexpr int K = 20480, TOKENS = 6;
  static_assert(mono_gemv_row_direct_fits<K, 2>);
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(K);
  for (float &v : w)
    v = u(rng);
  std::vector<uint16_t> x(size_t(TOKENS) * K);
  for (uint16_t &v : x)
    v = fmts::bf16Bits(u(rng));
  const std::vector<float> want = rowSumsInDeviceOrder(w, x, TOKENS, K);
  EXPECT_EQ((deviceRow<K, TOKENS, 1>(w, x, TOKENS)), want);
  double scale = 0, worst = 0;
  for (int t = 0; t < TOKENS; ++t) {
    double exact = 0;
    for (int k = 0; k < K; ++k)
      exact += double(fmts::bf16Value(x[size_t(t) * K + k])) * w[k];
    scale = std::max(scale, std::fabs(exact));
    worst = std::max(worst, std::fabs(exact - want[t]));
  }
  EXPECT_LT(worst / scale, kBound);
  // A count of 4: NaN tokens past it are not read, their outputs 0.
  std::vector<uint16_t> poisoned = x;
  std::fill(poisoned.begin() + size_t(4) * K, poisoned.end(), uint16_t(0x7FC0));
  const std::vector<float> four = deviceRow<K, TOKENS, 1>(w, poisoned, 4);
  EXPECT_EQ(std::vector<float>(four.begin(), four.begin() + 4),
            std::vector<float>(want.begin(), want.begin() + 4));
  EXPECT_EQ(four[4], 0.0f);
  EXPECT_EQ(four[5], 0.0f);
  // The check can fail: one weight 3% off changes every token's sum.
  std::vector<float> off = w;
  off[16 * 300 + 5] *= 1.03f;
  const std::vector<float> wrong = deviceRow<K, TOKENS, 1>(off, x, TOKENS);
  for (int t = 0; t < TOKENS; ++t)
    EXPECT_NE(wrong[t], want[t]) << "token " << t;
}

// The comparison can fail: one weight block's scale a step up (that block
// doubled) and the MXFP4 weight read unshuffled are both caught.
TEST(DeviceGemvRows, AWrongScaleOrLayoutIsCaught) {
  std::mt19937 rng(4);
  Weight w = e4m3Weight(16, 2048, rng);
  const Activations x = randomActivations(6, 2048, rng);
  Weight doubled = w;
  ++doubled.scales[3];
  EXPECT_GT(worstRelativeError(deviceGemv<16, 2048, 6, 6, 0>(doubled, x), w, x, 6, 16, 2048),
            100 * kBound);
  Weight m = mxfp4Weight(32, 1024, rng);
  const Activations one = randomActivations(1, 1024, rng);
  Weight unshuffled = m;
  unshuffled.bytes = fmts::unshuffleWeight(m.bytes, 1, 32, 512);
  EXPECT_GT(worstRelativeError(deviceGemv<32, 1024, 1, 1, 3>(unshuffled, one), m, one, 1, 32, 1024),
            100 * kBound);
}

// The scale word the MXFP4 tensor-core path reads (mono_aiter_scale_word)
// holds, for columns base + d, a row's scale and its twin's (16 rows on)
// where mono_aiter_scale_offset puts them: the low half for d % 8 < 4.
TEST(DeviceAiterLayout, AScaleWordHoldsARowAndItsTwin) {
  constexpr int cols = 40;
  int checked = 0;
  for (int row = 0; row < 256; ++row) {
    if (row % 32 >= 16)
      continue;
    for (unsigned base = 0; base < cols; base += 8)
      for (int d = 0; d < 16 && base + d < cols; ++d) {
        const int64_t word = mono_aiter_scale_row(row, cols) + mono_aiter_scale_word(base, d);
        const int64_t half = d % 8 >= 4 ? 2 : 0;
        EXPECT_EQ(word % 4, 0);
        EXPECT_EQ(word + half, mono_aiter_scale_offset(row, int(base) + d, cols)) << row << " " << d;
        EXPECT_EQ(word + half + 1, mono_aiter_scale_offset(row + 16, int(base) + d, cols));
        ++checked;
      }
  }
  EXPECT_EQ(checked, 128 * (4 * 16 + 8));  // bases 0, 8, 16, 24 take 16 steps, 32 takes 8
}

/// mono_gemv_mma on one block, in the shared memory gemv_shape.h gives it.
template <int N, int K, int TOKENS, int WKIND>
std::vector<float> deviceGemvMma(const Weight &w, const Activations &x, int count = TOKENS) {
  constexpr int SO = (TOKENS * N + MONO_BLOCK - 1) / MONO_BLOCK;
  constexpr int PT = mono_gemv_mma_pass_tokens(N, K, TOKENS, WKIND, MONO_BLOCK);
  std::vector<mono_u32x4> lds(
      (mono_gemv_mma_shared_bytes(N, K, TOKENS, WKIND, MONO_BLOCK) + 15) / 16, kNanWords);
  std::vector<float> out(TOKENS * N);
  host_arch::runBlock([&] {
    float o[SO];
    mono_gemv_mma<SO, N, K, TOKENS, PT, WKIND>(w.bytes.data(), w.scales.data(), w.scaleCols, 0,
                                                x.codes.data(), x.scales.data(), 0, o,
                                                reinterpret_cast<float *>(lds.data()), count);
    for (int s = 0; s < SO; ++s)
      if (s * MONO_BLOCK + mono_tid() < TOKENS * N)
        out[s * MONO_BLOCK + mono_tid()] = o[s];
  });
  return out;
}

/// worstRelativeError of mono_gemv_mma on this shape (the shape given once).
template <int N, int K, int TOKENS, int WKIND>
double mmaError(const Weight &w, const Activations &x) {
  return worstRelativeError(deviceGemvMma<N, K, TOKENS, WKIND>(w, x), w, x, TOKENS, N, K);
}

/// A split's blocks a chunk of staged tokens, and the chunks of a pass.
constexpr int chunkBlocks(int N, int K, int tokens, int kind) {
  return mono_gemv_mma_chunk_blocks(N, K, tokens, kind, MONO_BLOCK);
}
constexpr int chunks(int N, int K, int tokens, int kind) {
  return mono_gemv_mma_chunks(N, K, tokens, kind, MONO_BLOCK);
}

// The shapes of the dsv41 launches: the routed experts' one-token MXFP4
// GEMVs (routed.ug: 4 tiles, each split over 2 warps; routed.down: 2 tiles
// a warp, 36 blocks), routed.ug's slot, e4m3 ones of 6 tokens with 36
// blocks split over 8 warps unevenly, and the wide ones: 48 tokens over 64
// rows (a pass, 8 chunks), over 16 (passes of 22, 2 chunks).
TEST(DeviceGemvMma, MatchesTheExactSumsOfTheLaunchShapes) {
  std::mt19937 rng(6);
  const Weight ug = mxfp4Weight(64, 5120, rng), down = mxfp4Weight(256, 1152, rng);
  const Activations one5120 = randomActivations(1, 5120, rng), one1152 = randomActivations(1, 1152, rng);
  EXPECT_LT((mmaError<64, 5120, 1, 3>(ug, one5120)), kBound);
  EXPECT_LT((mmaError<256, 1152, 1, 3>(down, one1152)), kBound);
  // MXFP4 tiles pair over 32 rows, and split warps start on a scale word.
  static_assert(!mono_gemv_mma_fits(16, 1024, 3, 256) && mono_gemv_mma_fits(16, 1024, 0, 256));
  static_assert(!mono_gemv_mma_fits(32, 1056, 3, 256) && mono_gemv_mma_fits(32, 2048, 3, 256));
  // routed.ug's slot (8 tokens of 5120): staged whole, one chunk; the codes
  // go to f16 directly, the tokens staged in their pair order.
  static_assert(mono_gemv_mma_pass_tokens(128, 5120, 8, 3, MONO_BLOCK) == 8 &&
                chunks(128, 5120, 8, 3) == 1);
  const Weight slot = mxfp4Weight(128, 5120, rng);
  const Activations eight = randomActivations(8, 5120, rng);
  EXPECT_LT((mmaError<128, 5120, 8, 3>(slot, eight)), kBound);
  // MXFP4 of several tiles of tokens (9: two), and a tile's 32 blocks split
  // over 4 warps (8 each: a scale word's blocks c and c + 4 each).
  const Weight pairs = mxfp4Weight(128, 1024, rng), split4 = mxfp4Weight(32, 1024, rng);
  const Activations nine = randomActivations(9, 1024, rng), three = randomActivations(3, 1024, rng);
  EXPECT_LT((mmaError<128, 1024, 9, 3>(pairs, nine)), kBound);
  EXPECT_LT((mmaError<32, 1024, 3, 3>(split4, three)), kBound);
  const Weight shared = e4m3Weight(16, 1152, rng), wide = e4m3Weight(16, 4096, rng);
  const Activations six = randomActivations(6, 1152, rng), many = randomActivations(48, 4096, rng);
  EXPECT_LT((mmaError<16, 1152, 6, 0>(shared, six)), kBound);
  // 48 tokens where a pass has room for 22: three passes either way, of 16
  // (whole tiles) rather than 22, 22 and 4; 44 tokens, two passes of 22
  // (24 would not fit).
  static_assert(mono_gemv_mma_pass_tokens(16, 4096, 48, 0, MONO_BLOCK) == 16 &&
                chunkBlocks(16, 4096, 48, 0) == 8 && chunks(16, 4096, 48, 0) == 2);
  static_assert(mono_gemv_mma_pass_tokens(16, 4096, 44, 0, MONO_BLOCK) == 22);
  EXPECT_LT((mmaError<16, 4096, 48, 0>(wide, many)), kBound);
  const Activations fortyFour = randomActivations(44, 4096, rng);
  EXPECT_LT((mmaError<16, 4096, 44, 0>(wide, fortyFour)), kBound);
  // 32-row tasks of 48 tokens (wo_a and the shared gate_up on a grid of
  // 132): two passes of 24, not 43 and 5.
  static_assert(mono_gemv_mma_pass_tokens(32, 4096, 48, 0, MONO_BLOCK) == 24);
  const Weight wo_aTask = e4m3Weight(32, 4096, rng);
  EXPECT_LT((mmaError<32, 4096, 48, 0>(wo_aTask, many)), kBound);
  static_assert(mono_gemv_mma_pass_tokens(64, 4096, 48, 0, MONO_BLOCK) == 48 &&
                chunks(64, 4096, 48, 0) == 8);
  const Weight wideRows = e4m3Weight(64, 4096, rng);
  EXPECT_LT((mmaError<64, 4096, 48, 0>(wideRows, many)), kBound);
  // 128-row tasks (scaledGemvRowsPerTask: wo_b, wq_b and the shared down on a grid
  // of 66), of 6 tokens and of 48.
  const Weight wideTask = e4m3Weight(128, 4096, rng), query = e4m3Weight(128, 1280, rng),
               downTask = e4m3Weight(128, 1152, rng);
  const Activations six4096 = randomActivations(6, 4096, rng);
  const Activations many1280 = randomActivations(48, 1280, rng);
  const Activations many1152 = randomActivations(48, 1152, rng);
  EXPECT_LT((mmaError<128, 4096, 6, 0>(wideTask, six4096)), kBound);
  EXPECT_LT((mmaError<128, 4096, 48, 0>(wideTask, many)), kBound);
  EXPECT_LT((mmaError<128, 1280, 48, 0>(query, many1280)), kBound);
  EXPECT_LT((mmaError<128, 1152, 48, 0>(downTask, many1152)), kBound);
  // Chunks over splits of unequal length: 135 blocks over 4 warps (33, 34,
  // 34, 34), chunks of 8, the last of 1 or 2.
  static_assert(chunkBlocks(32, 4320, 48, 0) == 8 && chunks(32, 4320, 48, 0) == 5);
  const Weight uneven = e4m3Weight(32, 4320, rng);
  const Activations many4320 = randomActivations(48, 4320, rng);
  EXPECT_LT((mmaError<32, 4320, 48, 0>(uneven, many4320)), kBound);
}

// The comparison can fail on this path too: one MXFP4 row block's scale a
// step up, one e4m3 block's, and the MXFP4 weight read unshuffled.
TEST(DeviceGemvMma, AWrongScaleOrLayoutIsCaught) {
  std::mt19937 rng(7);
  const Weight m = mxfp4Weight(64, 1024, rng);
  const Activations one = randomActivations(1, 1024, rng);
  Weight doubled = m;
  ++doubled.scales[9];
  EXPECT_GT(worstRelativeError(deviceGemvMma<64, 1024, 1, 3>(doubled, one), m, one, 1, 64, 1024),
            100 * kBound);
  Weight unshuffled = m;
  unshuffled.bytes = fmts::unshuffleWeight(m.bytes, 1, 64, 512);
  EXPECT_GT(worstRelativeError(deviceGemvMma<64, 1024, 1, 3>(unshuffled, one), m, one, 1, 64, 1024),
            100 * kBound);
  const Weight e = e4m3Weight(32, 1024, rng);
  const Activations six = randomActivations(6, 1024, rng);
  Weight eDoubled = e;
  ++eDoubled.scales[5];
  EXPECT_GT(worstRelativeError(deviceGemvMma<32, 1024, 6, 0>(eDoubled, six), e, six, 6, 32, 1024),
            100 * kBound);
  // The last chunk of a split, and one token's scale there (the tokens are
  // staged a chunk at a time: a chunk staged from the wrong k shows).
  const Weight wide = e4m3Weight(64, 4096, rng);
  const Activations many = randomActivations(48, 4096, rng);
  Weight lastChunk = wide;
  ++lastChunk.scales[wide.scaleCols + 127];  // rows 32..63, k block 127
  EXPECT_GT(worstRelativeError(deviceGemvMma<64, 4096, 48, 0>(lastChunk, many), wide, many, 48, 64,
                               4096),
            100 * kBound);
  Activations tokenScale = many;
  ++tokenScale.scales[47 * 128 + 70];  // token 47, block 70 (split 1's first chunk)
  EXPECT_GT(worstRelativeError(deviceGemvMma<64, 4096, 48, 0>(wide, tokenScale), wide, many, 48,
                               64, 4096),
            100 * kBound);
}

/// The first `count` tokens' outputs within the bound of their exact sums,
/// and every later token's exactly 0.
void expectCountedTokens(const std::vector<float> &got, const Weight &w, const Activations &x,
                         int count, int tokens, int N, int K) {
  if (count > 0) {
    const std::vector<float> head(got.begin(), got.begin() + size_t(count) * N);
    EXPECT_LT(worstRelativeError(head, w, x, count, N, K), kBound) << "count " << count;
  }
  for (size_t i = size_t(count) * N; i < size_t(tokens) * N; ++i)
    ASSERT_EQ(got[i], 0.0f) << "count " << count << ", token " << i / N << " row " << i % N;
}

/// Activations with no memory behind them: a GEMV of count 0 must not read.
Activations noActivations() { return {}; }
Weight noWeight(int scaleCols) {
  Weight w;
  w.scaleCols = scaleCols;
  return w;
}

// A runtime count (the union's expert groups: fewer tokens than the tile
// holds, or none): the counted tokens' sums, zeros past them, and with a
// count of 0 no weight or token read (empty vectors: a read would fault).
// The token rows past the count hold NaN codes, which a sum over them shows.
TEST(DeviceGemvCount, SumsTheCountedTokensOnEveryPath) {
  std::mt19937 rng(8);
  auto poisonPast = [](Activations x, int count, int K) {
    std::fill(x.codes.begin() + size_t(count) * K, x.codes.end(), uint8_t(0x7F));  // e4m3 NaN
    return x;
  };
  // CUDA cores: streamed e4m3 in passes of 3 (count 4: a pass and one
  // token), and MXFP4.
  const Weight e = e4m3Weight(16, 4096, rng);
  const Activations six = randomActivations(6, 4096, rng);
  for (int count : {6, 4, 1})
    expectCountedTokens(deviceGemv<16, 4096, 6, 3, 0>(e, poisonPast(six, count, 4096), count), e,
                        six, count, 6, 16, 4096);
  const Weight m = mxfp4Weight(32, 1024, rng);
  const Activations three = randomActivations(3, 1024, rng);
  expectCountedTokens(deviceGemv<32, 1024, 3, 3, 3>(m, poisonPast(three, 2, 1024), 2), m, three,
                      2, 3, 32, 1024);
  // Tensor cores: MXFP4 over an 8-token tile and e4m3 over 48 tokens in
  // passes of 22 (count 30: a pass and 8 tokens).
  const Weight mm = mxfp4Weight(128, 1024, rng);
  const Activations eight = randomActivations(8, 1024, rng);
  for (int count : {8, 5, 1})
    expectCountedTokens(deviceGemvMma<128, 1024, 8, 3>(mm, poisonPast(eight, count, 1024), count),
                        mm, eight, count, 8, 128, 1024);
  const Weight wide = e4m3Weight(16, 4096, rng);
  const Activations many = randomActivations(48, 4096, rng);
  expectCountedTokens(deviceGemvMma<16, 4096, 48, 0>(wide, poisonPast(many, 30, 4096), 30), wide,
                      many, 30, 48, 16, 4096);
  // Count 0: nothing read, every result 0.
  expectCountedTokens(deviceGemv<16, 4096, 6, 3, 0>(noWeight(e.scaleCols), noActivations(), 0), e,
                      six, 0, 6, 16, 4096);
  expectCountedTokens(deviceGemvMma<128, 1024, 8, 3>(noWeight(mm.scaleCols), noActivations(), 0),
                      mm, eight, 0, 8, 128, 1024);
}

} // namespace
