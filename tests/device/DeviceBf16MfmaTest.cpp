// gfx950's v_mfma_f32_16x16x32_bf16 (the matrix instruction of the attention
// chunk, attend_mfma.h, and of bf16 GEMVs, gemv_mfma.h): its lane-exact host
// model (HostMfma.h) against a dense product, packing mistakes that must be
// caught, the host form of the device wrapper over 4 waves (HostArch.h with
// MONO_HOST_WARP=64), and mono_gemv_mfma's bf16 form on it.
//
// Operands are packed here from the layout facts written as placements
// (value (index, k) -> lane, register, half); the model reads them with its
// own forward formula, so the two agree only if both follow the facts.
#include "monodc/formats/ExactSum.h"
#include "monodc/formats/NumberFormats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

// clang-format off
#include "prelude.h"
#include "monodc/device/gemv_shape.h"
#include "monodc/device/epoch_shape.h"
#include "HostArch.h"
#include "generic.h"
#include "gemv_mfma.h"
// clang-format on

static_assert(MONO_HOST_WARP == 64, "built with 64-lane waves");

namespace fmts = monodc::formats;
using host_mfma::Bf16WaveOperands;

namespace {

/// A [16][32], B stored by column b[j][k] (B[k][j]), C [16][16], as bf16
/// bits (A, B) and f32 (C).
struct Problem {
  uint16_t a[16][32] = {}, b[16][32] = {};
  float c[16][16] = {};
};

/// bf16 values over 2^-10 .. 2^11 of both signs, so the products span 42
/// binades and the order of a sum matters (and long double still holds
/// every sum exactly).
uint16_t randomBf16(std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(1.0f, 2.0f);
  const float v = std::ldexp(u(rng), int(rng() % 21) - 10) * (rng() % 2 ? -1.0f : 1.0f);
  return fmts::bf16Bits(v);
}

Problem randomProblem(std::mt19937 &rng) {
  Problem p;
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 32; ++k) {
      p.a[i][k] = randomBf16(rng);
      p.b[i][k] = randomBf16(rng);
    }
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto &row : p.c)
    for (float &v : row)
      v = std::ldexp(u(rng), int(rng() % 30) - 10);
  return p;
}

enum class Packing {
  Documented,
  StridedK,      // k interleaved over the lane groups: k = g + 4 i
  HalvesSwapped, // the higher k of a pair in the low half
  Cdna3Layout,   // 16x16x16's layout twice: k 4 g + i, then 16 + 4 g + i
};

struct Where {
  int lane, reg, half;
};
/// Where operand value (index, k) of a 16 x K operand goes (K / 4 values a
/// lane). The mistakes are made on A only: the same k permutation on both
/// operands leaves every sum unchanged.
template <int K>
Where place(int index, int k, Packing packing, bool isA) {
  const int g = k / (K / 4), i = k % (K / 4);
  if (isA && packing == Packing::Cdna3Layout) {
    const int g3 = (k % 16) / 4, i3 = k % 4 + 4 * (k / 16);
    return {index + 16 * g3, i3 / 2, i3 % 2};
  }
  if (isA && packing == Packing::StridedK)
    return {index + 16 * (k % 4), (k / 4) / 2, (k / 4) % 2};
  const int half = isA && packing == Packing::HalvesSwapped ? 1 - i % 2 : i % 2;
  return {index + 16 * g, i / 2, half};
}

template <int Regs>
void put(uint32_t (&regs)[64][Regs], Where w, uint16_t bits) {
  uint32_t &reg = regs[w.lane][w.reg];
  const int shift = 16 * w.half;
  reg = (reg & ~(0xFFFFu << shift)) | uint32_t(bits) << shift;
}

/// The first K k of the problem in the registers of the 16x16xK form.
template <int K = 32>
host_mfma::Bf16Operands<K> pack(const Problem &p, Packing packing = Packing::Documented) {
  host_mfma::Bf16Operands<K> w;
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < K; ++k) {
      put(w.a, place<K>(i, k, packing, true), p.a[i][k]);
      put(w.b, place<K>(i, k, packing, false), p.b[i][k]);
    }
  for (int l = 0; l < 64; ++l)
    for (int v = 0; v < 4; ++v)
      w.c[l][v] = p.c[4 * (l / 16) + v][l % 16];
  return w;
}

/// D = A . B + C over the first K k in long double (its 64-bit significand
/// holds these sums exactly), rounded once.
template <int K = 32>
float denseD(const Problem &p, int i, int j) {
  long double sum = p.c[i][j];
  for (int k = 0; k < K; ++k)
    sum += (long double)fmts::bf16Value(p.a[i][k]) * (long double)fmts::bf16Value(p.b[j][k]);
  return float(sum);
}

/// How many of the wave's 256 results equal the dense product bit for bit.
template <int K = 32>
int exactResults(const Problem &p, const host_mfma::WaveResult &d) {
  int exact = 0;
  for (int l = 0; l < 64; ++l)
    for (int v = 0; v < 4; ++v)
      exact += std::bit_cast<uint32_t>(denseD<K>(p, 4 * (l / 16) + v, l % 16)) ==
               std::bit_cast<uint32_t>(d[size_t(l)][size_t(v)]);
  return exact;
}

TEST(Bf16MfmaModel, MatchesTheDenseProduct) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    const Problem p = randomProblem(rng);
    EXPECT_EQ(exactResults(p, host_mfma::bf16Mfma(pack(p))), 256) << "trial " << trial;
  }
}

// Each packing mistake moves most results: the check can fail.
TEST(Bf16MfmaModel, PackingMistakesAreCaught) {
  std::mt19937 rng(12);
  for (Packing wrong : {Packing::StridedK, Packing::HalvesSwapped, Packing::Cdna3Layout}) {
    const Problem p = randomProblem(rng);
    EXPECT_LT(exactResults(p, host_mfma::bf16Mfma(pack(p, wrong))), 64) << int(wrong);
  }
}

// One rounding of the exact sum: C = 1 and products 2^-24 each (half an f32
// step of 1) give 1 + 32 2^-24 = 1 + 2^-19 exactly, where adding them one
// at a time in f32 would leave 1 (each ties to even).
TEST(Bf16MfmaModel, RoundsTheExactSumOnce) {
  Problem p;
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 32; ++k) {
      p.a[i][k] = fmts::bf16Bits(std::ldexp(1.0f, -12));
      p.b[i][k] = fmts::bf16Bits(std::ldexp(1.0f, -12));
    }
  for (auto &row : p.c)
    for (float &v : row)
      v = 1.0f;
  const host_mfma::WaveResult d = host_mfma::bf16Mfma(pack(p));
  for (int l = 0; l < 64; ++l)
    for (int v = 0; v < 4; ++v)
      ASSERT_EQ(d[size_t(l)][size_t(v)], 1.0f + std::ldexp(1.0f, -19)) << l << " " << v;
}

TEST(Bf16MfmaModel, NonFiniteTermsGiveTheirIeeeSum) {
  Problem p;
  p.a[0][0] = fmts::bf16Bits(INFINITY);
  p.b[0][0] = fmts::bf16Bits(1.0f);
  p.c[1][0] = NAN;
  const host_mfma::WaveResult d = host_mfma::bf16Mfma(pack(p));
  EXPECT_EQ(d[0][0], INFINITY);   // D[0][0]: lane 0, value 0
  EXPECT_TRUE(std::isnan(d[0][1]));  // D[1][0]: lane 0, value 1
  EXPECT_TRUE(std::isnan(d[1][0]));  // D[0][1]: infinity x B[0][1] = 0
  EXPECT_EQ(d[1][2], 0.0f);          // D[2][1]: no infinity in row 2
}

/// The wrapper's host form on one wave per problem.
void runWrapper(const Bf16WaveOperands (&operands)[4], float (&got)[4][64][4]) {
  host_arch::runBlock([&] {
    const int tid = mono_tid(), w = tid / 64, lane = tid % 64;
    float c[4];
    for (int v = 0; v < 4; ++v)
      c[v] = operands[w].c[lane][v];
    mono_mfma_bf16_16x16x32(operands[w].a[lane], operands[w].b[lane], c);
    for (int v = 0; v < 4; ++v)
      got[w][lane][v] = c[v];
  });
}

/// D[i][j] of the 32-k step: one rounding of the exact sum (the 16x16x32
/// model, MatchesTheDenseProduct), or on gfx942 formats'
/// bf16MfmaStepAsHalves (the simulator's model) over the same products.
float stepD(const Problem &p, int i, int j) {
#if defined(MONO_HOST_GFX942)
  double products[32];
  for (int k = 0; k < 32; ++k)
    products[k] = double(fmts::bf16Value(p.a[i][k])) * double(fmts::bf16Value(p.b[j][k]));
  return fmts::bf16MfmaStepAsHalves(p.c[i][j], products);
#else
  return denseD(p, i, j);
#endif
}

// The device wrapper's host form (on gfx942 two 16x16x16 instructions fed
// the 16x16x32 form's registers): four waves, each with its own problem,
// give the step's results bit for bit.
TEST(Bf16MfmaWrapper, FourWavesGiveTheStepsResults) {
  std::mt19937 rng(13);
  Problem problems[4];
  Bf16WaveOperands operands[4];
  for (int w = 0; w < 4; ++w) {
    problems[w] = randomProblem(rng);
    operands[w] = pack(problems[w]);
  }
  float got[4][64][4];
  runWrapper(operands, got);
  for (int w = 0; w < 4; ++w)
    for (int l = 0; l < 64; ++l)
      for (int v = 0; v < 4; ++v)
        ASSERT_EQ(std::bit_cast<uint32_t>(got[w][l][v]),
                  std::bit_cast<uint32_t>(stepD(problems[w], 4 * (l / 16) + v, l % 16)))
            << "wave " << w << " lane " << l << " value " << v;
}

#if defined(MONO_HOST_GFX942)
// ---- gfx942: the 16x16x16 instruction and the step made of two ----

TEST(Bf16x16MfmaModel, MatchesTheDenseProduct) {
  std::mt19937 rng(14);
  for (int trial = 0; trial < 20; ++trial) {
    const Problem p = randomProblem(rng);
    EXPECT_EQ(exactResults<16>(p, host_mfma::bf16Mfma(pack<16>(p))), 256) << "trial " << trial;
  }
}

// A packed with k interleaved over the lane groups moves most results.
TEST(Bf16x16MfmaModel, StridedKIsCaught) {
  std::mt19937 rng(15);
  const Problem p = randomProblem(rng);
  EXPECT_LT(exactResults<16>(p, host_mfma::bf16Mfma(pack<16>(p, Packing::StridedK))), 64);
}

// Two roundings, not one: C = 1 with one product of 2^-24 in each half
// (k 0 and k 4) stays 1 (each half ties to even), where the 16x16x32 form
// gives 1 + 2^-23. A wrapper that summed the halves the other way round
// (k 0-15, then 16-31) would give 1 + 2^-23 too: it fails here.
TEST(Bf16MfmaGfx942Wrapper, RoundsEachHalfOnce) {
  Problem p;
  for (auto &row : p.c)
    for (float &v : row)
      v = 1.0f;
  for (int i = 0; i < 16; ++i) {
    p.a[i][0] = p.a[i][4] = fmts::bf16Bits(std::ldexp(1.0f, -12));
    p.b[i][0] = p.b[i][4] = fmts::bf16Bits(std::ldexp(1.0f, -12));
  }
  Bf16WaveOperands operands[4] = {pack(p), pack(p), pack(p), pack(p)};
  float got[4][64][4];
  runWrapper(operands, got);
  EXPECT_EQ(got[0][0][0], 1.0f);
  EXPECT_EQ(denseD(p, 0, 0), 1.0f + std::ldexp(1.0f, -23));
  for (int l = 0; l < 64; ++l)
    for (int v = 0; v < 4; ++v)
      ASSERT_EQ(got[0][l][v], stepD(p, 4 * (l / 16) + v, l % 16));
}
#endif

// ---- mono_gemv_mfma over bf16 (the router's GEMV on gfx950) ----

/// bf16 bits of random values over a few binades.
std::vector<uint16_t> randomBf16Values(size_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<uint16_t> v(n);
  for (uint16_t &b : v)
    b = fmts::bf16Bits(std::ldexp(u(rng), int(rng() % 7) - 3));
  return v;
}

/// The GEMV on one block of 4 waves: result [token][row] for rows
/// n0 .. n0 + N of a [rows][K] weight and tokens t0 .. t0 + TOKENS.
template <int N, int K, int TOKENS>
std::vector<float> deviceGemv(const std::vector<uint16_t> &w, const std::vector<uint16_t> &x,
                              int count = TOKENS, int n0 = 0, int t0 = 0) {
  constexpr int SO = (TOKENS * N + MONO_BLOCK - 1) / MONO_BLOCK;
  std::vector<float> lds(mono_gemv_mfma_shared_bytes(N, TOKENS, MONO_BLOCK) / 4 + 1);
  std::vector<float> out(TOKENS * N);
  host_arch::runBlock([&] {
    float o[SO];
    mono_gemv_mfma<SO, N, K, TOKENS, 1>((const mono_u8 *)w.data(), nullptr, 0, n0, x.data(),
                                        nullptr, t0, o, lds.data(), count);
    for (int s = 0; s < SO; ++s)
      if (s * MONO_BLOCK + mono_tid() < TOKENS * N)
        out[size_t(s * MONO_BLOCK + mono_tid())] = o[s];
  });
  return out;
}

/// The order the device sums in, written from gemv_mfma.h's description
/// (the simulator mirrors the same): per row and token, each wave's share of
/// the 32-k steps, each step the accumulator and 32 exact products rounded
/// once (on gfx942 two halves, each rounded once: bf16MfmaStepAsHalves,
/// pinned by RoundsEachHalfOnce), then the waves' sums in order in f32.
float orderedSum(const std::vector<uint16_t> &w, const std::vector<uint16_t> &x, int K, int row,
                 int token, int split) {
  const int steps = K / 32;
  float sum = 0.0f;
  for (int p = 0; p < split; ++p) {
    float acc = 0.0f;
    for (int s = p * steps / split; s < (p + 1) * steps / split; ++s) {
#if defined(MONO_HOST_GFX942)
      double products[32];
      for (int k = 0; k < 32; ++k)
        products[k] = double(fmts::bf16Value(w[size_t(row) * K + 32 * s + k])) *
                      double(fmts::bf16Value(x[size_t(token) * K + 32 * s + k]));
      acc = fmts::bf16MfmaStepAsHalves(acc, products);
#else
      fmts::ExactSum step;
      step.add(acc);
      for (int k = 32 * s; k < 32 * s + 32; ++k)
        step.add(double(fmts::bf16Value(w[size_t(row) * K + k])) *
                 double(fmts::bf16Value(x[size_t(token) * K + k])));
      acc = step.toFloat();  // the values are finite
#endif
    }
    sum = split == 1 ? acc : sum + acc;
  }
  return sum;
}

/// Largest |device - double sum| over the largest |double sum|.
template <int N, int K, int TOKENS>
double worstRelativeError(const std::vector<float> &got, const std::vector<uint16_t> &w,
                          const std::vector<uint16_t> &x, int count) {
  double worst = 0, largest = 0;
  std::vector<double> want(static_cast<size_t>(TOKENS * N), 0.0);
  for (int t = 0; t < count; ++t)
    for (int n = 0; n < N; ++n) {
      double sum = 0;
      for (int k = 0; k < K; ++k)
        sum += double(fmts::bf16Value(w[size_t(n) * K + k])) * double(fmts::bf16Value(x[size_t(t) * K + k]));
      want[size_t(t) * N + n] = sum;
      largest = std::max(largest, std::fabs(sum));
    }
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
  return worst / largest;
}

template <int N, int K, int TOKENS>
void expectGemvMatches(uint32_t seed, int count = TOKENS) {
  std::mt19937 rng(seed);
  const std::vector<uint16_t> w = randomBf16Values(size_t(N) * K, rng);
  const std::vector<uint16_t> x = randomBf16Values(size_t(TOKENS) * K, rng);
  const std::vector<float> got = deviceGemv<N, K, TOKENS>(w, x, count);
  EXPECT_LT((worstRelativeError<N, K, TOKENS>(got, w, x, count)), 1e-5);
  // Bit for bit the order the simulator mirrors; tokens past count are 0.
  const int split = mono_gemv_mfma_split(N, MONO_BLOCK);
  for (int t = 0; t < TOKENS; ++t)
    for (int n = 0; n < N; ++n)
      ASSERT_EQ(got[size_t(t) * N + n], t < count ? orderedSum(w, x, K, n, t, split) : 0.0f)
          << "row " << n << " token " << t;
}

// The router's shape (16 rows a task, k 5120) at 6 tokens and at a count
// below it; 64 rows (a tile a wave) over 48 tokens (3 token tiles).
TEST(DeviceGemvBf16Mfma, Rows16K5120Tokens6) { expectGemvMatches<16, 5120, 6>(21); }
TEST(DeviceGemvBf16Mfma, Rows16K5120Count4) { expectGemvMatches<16, 5120, 6>(22, 4); }
TEST(DeviceGemvBf16Mfma, Rows64K256Tokens48) { expectGemvMatches<64, 256, 48>(23); }

// The check can fail: one token value 3% off in the reference's input
// moves that token's outputs past the bound.
TEST(DeviceGemvBf16Mfma, OneValueThreePercentOffFailsTheBound) {
  std::mt19937 rng(24);
  std::vector<uint16_t> w = randomBf16Values(16 * 5120, rng), x = randomBf16Values(6 * 5120, rng);
  // A dominant value, so 3% of it shows.
  x[3 * 5120 + 77] = fmts::bf16Bits(64.0f);
  w[5 * 5120 + 77] = fmts::bf16Bits(64.0f);
  const std::vector<float> got = deviceGemv<16, 5120, 6>(w, x);
  EXPECT_LT((worstRelativeError<16, 5120, 6>(got, w, x, 6)), 1e-5);
  x[3 * 5120 + 77] = fmts::bf16Bits(64.0f * 1.03f);
  EXPECT_GT((worstRelativeError<16, 5120, 6>(got, w, x, 6)), 1e-3);
}

} // namespace
