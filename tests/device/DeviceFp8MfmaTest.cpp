// gfx942's fp8 matrix instruction (v_mfma_f32_16x16x32_fp8_fp8, FNUZ codes,
// no scales), modelled on the host (HostMfma.h), the OCP -> FNUZ code maps
// of its GEMV block, and the block (mono_gemv_mfma's gfx942 form,
// gemv_mfma.h: one instruction a 32-k block, the E8M0 scales applied in
// software) on one block of 4 waves of 64 host threads (HostArch.h with
// MONO_HOST_WARP=64 and MONO_HOST_GFX942).
#include "monodc/formats/AiterShuffle.h"
#include "monodc/formats/ExactSum.h"
#include "monodc/formats/NumberFormats.h"

#include <gtest/gtest.h>

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
#include "gemv_mma.h"
#include "gemv_mfma.h"
#include "MxGemvData.h"
// clang-format on

static_assert(MONO_HOST_WARP == 64, "built with 64-lane waves");
#if !defined(MONO_HOST_GFX942)
#error "built with gfx942's arch layer (MONO_HOST_GFX942)"
#endif

namespace fmts = monodc::formats;
using host_mfma::fnuzValue;
using namespace mx_gemv;

namespace {

// ---- the code maps, over every code ----

TEST(Fp8Fnuz, OcpCodesReadAsFnuzAreHalfTheirValue) {
  // Landmarks of the FNUZ definition: 240 the largest, 2^-7 the smallest
  // normal, 2^-10 the smallest subnormal, 0x80 NaN.
  EXPECT_EQ(fnuzValue(0x7F), 240.0);
  EXPECT_EQ(fnuzValue(0x08), std::ldexp(1.0, -7));
  EXPECT_EQ(fnuzValue(0x01), std::ldexp(1.0, -10));
  EXPECT_TRUE(std::isnan(fnuzValue(0x80)));
  for (int c = 0; c < 256; ++c) {
    const double ocp = double(fmts::e4m3Value(uint8_t(c)));
    if (c == 0x80) {
      EXPECT_EQ(ocp, 0.0);
      EXPECT_TRUE(std::signbit(ocp));
    } else if (std::isnan(ocp)) {
      EXPECT_TRUE(c == 0x7F || c == 0xFF) << c;  // FNUZ reads these as +-240
    } else {
      EXPECT_EQ(fnuzValue(uint32_t(c)), ocp / 2) << c;
    }
  }
}

TEST(Fp8Fnuz, E4m3MapGivesHalfTheValueInEveryByte) {
  std::mt19937 rng(1);
  for (int c = 0; c < 256; ++c) {
    if (c == 0x7F || c == 0xFF)
      continue;  // OCP NaN: not a code the quantizers write
    for (int byte = 0; byte < 4; ++byte) {
      uint32_t word = rng();
      word = (word & ~(0xFFu << (8 * byte))) | (uint32_t(c) << (8 * byte));
      const uint32_t mapped = mono_e4m3_as_fnuz(word);
      for (int b = 0; b < 4; ++b) {
        const uint32_t in = (word >> (8 * b)) & 0xFFu, out = (mapped >> (8 * b)) & 0xFFu;
        if (in == 0x7F || in == 0xFF)
          continue;
        EXPECT_EQ(fnuzValue(out), double(fmts::e4m3Value(uint8_t(in))) / 2) << c << " " << b;
      }
      EXPECT_EQ((mapped >> (8 * byte)) & 0xFFu, c == 0x80 ? 0u : uint32_t(c));
    }
  }
}

TEST(Fp8Fnuz, E2m1MapGivesHalfTheValueAtEveryNibble) {
  std::mt19937 rng(2);
  for (int c = 0; c < 16; ++c)
    for (int at = 0; at < 8; ++at) {
      uint32_t word = rng();
      word = (word & ~(0xFu << (4 * at))) | (uint32_t(c) << (4 * at));
      uint32_t lo = 0, hi = 0;
      mono_e2m1x8_as_fnuz(word, lo, hi);
      for (int k = 0; k < 8; ++k) {
        const uint32_t code = (word >> (4 * k)) & 15u;
        const uint32_t byte = ((k < 4 ? lo : hi) >> (8 * (k % 4))) & 0xFFu;
        EXPECT_EQ(fnuzValue(byte), double(fmts::e2m1Value(uint8_t(code))) / 2) << c << " " << k;
        if (code == 8)
          EXPECT_EQ(byte, 0u);  // -0 is 0, not FNUZ's NaN
      }
    }
}

// ---- the instruction's model against a dense product ----

/// A [16][32] and B (by column: b[j][k]) as FNUZ codes, and C.
struct Problem {
  uint8_t a[16][32] = {}, b[16][32] = {};
  float c[16][16] = {};
};

uint8_t randomFnuz(std::mt19937 &rng) {
  for (;;)
    if (const uint8_t code = uint8_t(rng()); code != 0x80)
      return code;
}

Problem randomProblem(std::mt19937 &rng) {
  Problem p;
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 32; ++k) {
      p.a[i][k] = randomFnuz(rng);
      p.b[i][k] = randomFnuz(rng);
    }
  std::uniform_real_distribution<float> u(-8, 8);
  for (auto &row : p.c)
    for (float &c : row)
      c = u(rng);
  return p;
}

enum class Packing { Documented, Transposed, KStrided };

/// Byte p of lane l: A[l % 16][8 (l / 16) + p] (the documented layout);
/// Transposed puts A[i][k] at (k, i) for k < 16 (a column-major load);
/// KStrided deals k over the lane groups (k = 4 p + l / 16).
void put(uint32_t (&regs)[64][2], int index, int k, uint8_t code, Packing packing) {
  int lane = index + 16 * (k / 8), p = k % 8;
  if (packing == Packing::Transposed && k < 16)
    lane = k + 16 * (index / 8), p = index % 8;
  if (packing == Packing::KStrided)
    lane = index + 16 * (k % 4), p = k / 4;
  regs[lane][p / 4] |= uint32_t(code) << (8 * (p % 4));
}

host_mfma::Fp8WaveOperands pack(const Problem &p, Packing packing = Packing::Documented) {
  host_mfma::Fp8WaveOperands w;
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 32; ++k) {
      put(w.a, i, k, p.a[i][k], packing);
      put(w.b, i, k, p.b[i][k], Packing::Documented);
    }
  for (int lane = 0; lane < 64; ++lane)
    for (int v = 0; v < 4; ++v)
      w.c[lane][v] = p.c[4 * (lane / 16) + v][lane % 16];
  return w;
}

/// The exact dense D[i][j], rounded once: products of 4-bit significands
/// over 2^-20 .. 2^15 and C in [-8, 8] sum exactly in long double.
float denseD(const Problem &p, int i, int j) {
  long double sum = p.c[i][j];
  for (int k = 0; k < 32; ++k)
    sum += (long double)fnuzValue(p.a[i][k]) * (long double)fnuzValue(p.b[j][k]);
  return float(sum);
}

int mismatches(const Problem &p, const host_mfma::WaveResult &d) {
  int bad = 0;
  for (int lane = 0; lane < 64; ++lane)
    for (int v = 0; v < 4; ++v)
      bad += !(d[size_t(lane)][size_t(v)] == denseD(p, 4 * (lane / 16) + v, lane % 16));
  return bad;
}

TEST(Fp8MfmaModel, MatchesTheDenseProduct) {
  std::mt19937 rng(3);
  for (int wave = 0; wave < 20; ++wave) {
    const Problem p = randomProblem(rng);
    EXPECT_EQ(mismatches(p, host_mfma::fp8Mfma(pack(p))), 0) << wave;
  }
}

TEST(Fp8MfmaModel, TransposedOperandIsCaught) {
  std::mt19937 rng(4);
  const Problem p = randomProblem(rng);
  EXPECT_GT(mismatches(p, host_mfma::fp8Mfma(pack(p, Packing::Transposed))), 200);
}

TEST(Fp8MfmaModel, KStridedOverLaneGroupsIsCaught) {
  std::mt19937 rng(5);
  const Problem p = randomProblem(rng);
  EXPECT_GT(mismatches(p, host_mfma::fp8Mfma(pack(p, Packing::KStrided))), 200);
}

// C = 2^24 (ulp 2) plus 32 products of 2^-4: one rounding of the exact sum
// gives 2^24 + 2; rounding after each product would stay at 2^24.
TEST(Fp8MfmaModel, ExactSumIsRoundedOnce) {
  Problem p;
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 32; ++k)
      p.a[i][k] = p.b[i][k] = 0x30;  // 2^-2
  for (auto &row : p.c)
    for (float &c : row)
      c = 16777216.0f;
  const host_mfma::WaveResult d = host_mfma::fp8Mfma(pack(p));
  EXPECT_EQ(d[0][0], 16777218.0f);
}

// An OCP -0 (0x80) left unmapped is FNUZ's NaN: its row of D is NaN; mapped
// (mono_e4m3_as_fnuz) it is 0.
TEST(Fp8MfmaModel, UnmappedNegativeZeroGivesNaN) {
  std::mt19937 rng(6);
  Problem p = randomProblem(rng);
  p.a[5][9] = 0x80;
  const host_mfma::WaveResult bad = host_mfma::fp8Mfma(pack(p));
  for (int lane = 0; lane < 64; ++lane)
    for (int v = 0; v < 4; ++v)
      EXPECT_EQ(std::isnan(bad[size_t(lane)][size_t(v)]), 4 * (lane / 16) + v == 5) << lane;
  p.a[5][9] = uint8_t(mono_e4m3_as_fnuz(0x80u));
  EXPECT_EQ(p.a[5][9], 0);
  EXPECT_EQ(mismatches(p, host_mfma::fp8Mfma(pack(p))), 0);
}

TEST(Fp8MfmaWrapper, HostWavesGiveTheModelsResults) {
  std::mt19937 rng(7);
  std::vector<Problem> problems;
  std::vector<host_mfma::Fp8WaveOperands> operands;
  for (int wave = 0; wave < MONO_BLOCK / 64; ++wave) {
    problems.push_back(randomProblem(rng));
    operands.push_back(pack(problems.back()));
    for (auto &c : operands.back().c)
      for (float &v : c)
        v = 0.0f;  // the wrapper's C is 0
  }
  std::vector<std::array<float, 4>> got(MONO_BLOCK);
  host_arch::runBlock([&] {
    const host_mfma::Fp8WaveOperands &w = operands[size_t(mono_tid() / 64)];
    const int lane = mono_tid() % 64;
    float d[4];
    mono_mfma_fp8_16x16x32(w.a[lane], w.b[lane], d);
    for (int v = 0; v < 4; ++v)
      got[size_t(mono_tid())][size_t(v)] = d[v];
  });
  for (int wave = 0; wave < MONO_BLOCK / 64; ++wave) {
    const host_mfma::WaveResult want = host_mfma::fp8Mfma(operands[size_t(wave)]);
    for (int lane = 0; lane < 64; ++lane)
      EXPECT_EQ(got[size_t(64 * wave + lane)], want[size_t(lane)]) << wave << " " << lane;
  }
}

// ---- mono_gemv_mfma's gfx942 form on one block of 4 waves ----

/// The block's numbers in the order the simulator runs them: per output,
/// each wave's share of the steps, block by block (fmts::fp8MfmaBlockStep),
/// then the waves' sums in order.
std::vector<float> blockStepGemv(const Weight &w, const Tokens &x, int tokens, int N, int K,
                                 int count) {
  const int split = mono_gemv_mfma_split(N, MONO_BLOCK), steps = K / 128;
  std::vector<float> out(size_t(tokens) * N, 0.0f);
  for (int t = 0; t < count; ++t)
    for (int n = 0; n < N; ++n) {
      float sum = 0.0f;
      for (int p = 0; p < split; ++p) {
        float acc = 0.0f;
        for (int b = 4 * (p * steps / split); b < 4 * ((p + 1) * steps / split); ++b) {
          // The block's codes (values / scale) and its two scales.
          const double ws = w.blockScale(n, b), xsc = double(fmts::e8m0Value(x.scales[size_t(t) * (K / 32) + b]));
          double exact = 0;
          for (int k = 32 * b; k < 32 * b + 32; ++k)
            exact += (w.values[size_t(n) * K + k] / ws) * (x.value(t, k, K) / xsc);
          acc = fmts::fp8MfmaBlockStep(acc, exact, ws * xsc);
        }
        sum = split == 1 ? acc : sum + acc;
      }
      out[size_t(t) * N + n] = sum;
    }
  return out;
}

template <int N, int K, int TOKENS>
void expectGemvShape(uint32_t seed) {
  std::mt19937 rng(seed);
  const Tokens x = randomTokens(TOKENS, K, rng);
  const Weight e = e4m3Weight(N, K, rng), m = mxfp4Weight(N, K, rng);
  for (int count : {TOKENS, TOKENS - 1 - TOKENS / 3}) {
    if (count < 0)
      continue;
    const auto [gotE, gotM] = gemvBothKindsWithinBound<N, K, TOKENS>(x, e, m, count);
    EXPECT_EQ(gotE, blockStepGemv(e, x, TOKENS, N, K, count)) << "e4m3 bit for bit";
    EXPECT_EQ(gotM, blockStepGemv(m, x, TOKENS, N, K, count)) << "mxfp4 bit for bit";
  }
}

TEST(DeviceGemvFp8Mfma, Rows16) {
  expectGemvShape<16, 512, 1>(31);
  expectGemvShape<16, 5120, 6>(32);
  expectGemvShape<16, 512, 48>(33);
}
TEST(DeviceGemvFp8Mfma, Rows64) {
  expectGemvShape<64, 5120, 6>(41);
  expectGemvShape<64, 256, 16>(42);
  expectGemvShape<64, 512, 48>(43);
}
TEST(DeviceGemvFp8Mfma, Rows256) {
  expectGemvShape<256, 256, 1>(51);
  expectGemvShape<256, 1024, 6>(52);
  expectGemvShape<256, 256, 48>(53);
}

// The tokens' quantizer writes -0 (0x80) for tiny negatives; the block maps
// them (an unmapped one would be NaN, Fp8MfmaModel.UnmappedNegativeZeroGivesNaN).
TEST(DeviceGemvFp8Mfma, NegativeZeroTokensAreMapped) {
  std::mt19937 rng(61);
  Tokens x = randomTokens(6, 1024, rng);
  for (size_t i = 0; i < x.codes.size(); i += 7)
    x.codes[i] = 0x80;
  const Weight e = e4m3Weight(64, 1024, rng);
  const std::vector<float> got = deviceGemv<64, 1024, 6, kE4m3Weights>(e, x);
  EXPECT_LT(relativeError(got, cpuGemv(e, x, 6, 64, 1024, 6)), kMfmaBound);
}

TEST(DeviceGemvFp8Mfma, SliceOfALargerWeightAndLaterTokens) { expectSliceOfALargerWeight(62); }

// What the bound sees: a block scaled by its neighbour's scale, and fp4
// nibbles swapped in the weights, each fail it.
TEST(DeviceGemvFp8Mfma, NeighbouringBlocksScaleFailsTheBound) {
  std::mt19937 rng(63);
  const Tokens x = randomTokens(6, 512, rng);
  const Weight m = mxfp4Weight(64, 512, rng);
  const std::vector<float> got = deviceGemv<64, 512, 6, kMxfp4Weights>(m, x);
  EXPECT_LT(relativeError(got, cpuGemv(m, x, 6, 64, 512, 6)), kMfmaBound);
  Weight shifted = m;  // block b scaled as block b ^ 1 of its row
  for (int n = 0; n < 64; ++n)
    for (int k = 0; k < 512; ++k)
      shifted.values[size_t(n) * 512 + k] =
          m.values[size_t(n) * 512 + k] / m.blockScale(n, k / 32) * m.blockScale(n, (k / 32) ^ 1);
  EXPECT_GT(relativeError(got, cpuGemv(shifted, x, 6, 64, 512, 6)), 1e-2);
}

TEST(DeviceGemvFp8Mfma, SwappedFp4NibblesFailTheBound) {
  std::mt19937 rng(64);
  const Tokens x = randomTokens(6, 512, rng);
  Weight m = mxfp4Weight(64, 512, rng);
  for (uint8_t &b : m.bytes)
    b = uint8_t((b >> 4) | (b << 4));
  EXPECT_GT(relativeError((deviceGemv<64, 512, 6, kMxfp4Weights>(m, x)), cpuGemv(m, x, 6, 64, 512, 6)),
            1e-2);
}

TEST(DeviceGemvFp8Mfma, CountZeroGivesZeros) { expectCountZeroGivesZeros(65); }

} // namespace
