// gfx950's scaled matrix instruction, modelled on the host (HostMfma.h), and
// the GEMV built on it (mono_gemv_mfma, gemv_mfma.h) run as one block of 4
// waves of 64 host threads (HostArch.h with MONO_HOST_WARP=64).
//
// The model is checked against a dense product of the dequantized operands
// with a different scale for every row (column) and k block, so that a k
// permutation or a scale read from the wrong lane changes the result; and a
// wrong packing of each kind must be caught by that comparison.
#include "monodc/formats/AiterShuffle.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Reference.h"

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
#include "gemv_mfma.h"
#include "MxGemvData.h"
// clang-format on

static_assert(MONO_HOST_WARP == 64, "built with 64-lane waves");

namespace fmts = monodc::formats;
using host_mfma::WaveOperands;

namespace {

constexpr int kE4m3 = host_mfma::kFormatE4m3, kE2m1 = host_mfma::kFormatE2m1;

/// One instruction's operands as matrices of codes: A [16][128], B [128][16]
/// (stored by column: b[j][k]), scales per row (column) and k block, and C.
struct Problem {
  int fa = kE4m3, fb = kE4m3;
  uint8_t a[16][128] = {}, b[16][128] = {};
  uint8_t sa[16][4] = {}, sb[16][4] = {};
  float c[16][16] = {};
};

uint8_t randomCode(int format, std::mt19937 &rng) {
  if (format == kE2m1)
    return uint8_t(rng() % 16);
  for (;;) {
    const uint8_t code = uint8_t(rng() % 256);
    if ((code & 0x7F) != 0x7F)  // not NaN
      return code;
  }
}

Problem randomProblem(int fa, int fb, std::mt19937 &rng, int scaleLo = 116, int scaleHi = 138) {
  Problem p;
  p.fa = fa;
  p.fb = fb;
  std::uniform_int_distribution<int> scale(scaleLo, scaleHi);
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 128; ++k) {
      p.a[i][k] = randomCode(fa, rng);
      p.b[i][k] = randomCode(fb, rng);
    }
  for (int i = 0; i < 16; ++i)
    for (int blk = 0; blk < 4; ++blk) {
      p.sa[i][blk] = uint8_t(scale(rng));
      p.sb[i][blk] = uint8_t(scale(rng));
    }
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto &row : p.c)
    for (float &v : row)
      v = std::ldexp(u(rng), int(rng() % 20) - 4);
  return p;
}

/// Ways to pack a Problem into registers: the documented layout, and the
/// mistakes the tests must catch.
enum class Packing {
  Documented,
  TransposedA,      // A's row and its k within a run of 16 (e4m3) / byte (e2m1) swapped
  NeighbourScaleA,  // A's scale of block b given to block b + 1's lanes
  NibblesSwapped,   // e2m1 with the even k in the high nibble
  Fp8OneRun,        // e4m3 as one run of 32 k a lane, k 32 g + p
};

/// Where operand value (index, k) goes: lane, byte, nibble. Written as the
/// inverse of the facts' forward formulas (the model uses the forward ones).
struct Where {
  int lane, byte, nibble;
};
Where place(int format, int index, int k, Packing packing, bool isA) {
  const bool transposed = isA && packing == Packing::TransposedA;
  if (format == kE4m3) {
    if (packing == Packing::Fp8OneRun)
      return {index + 16 * (k / 32), k % 32, 0};
    const int g = (k % 64) / 16, run = k / 64, q = k % 16;
    return transposed ? Where{q + 16 * g, 16 * run + index, 0} : Where{index + 16 * g, 16 * run + q, 0};
  }
  const int g = k / 32, byte = (k % 32) / 2;
  const int nibble = packing == Packing::NibblesSwapped ? 1 - k % 2 : k % 2;
  return transposed ? Where{byte + 16 * g, index, nibble} : Where{index + 16 * g, byte, nibble};
}

void putCode(uint32_t (&regs)[64][8], Where w, uint8_t code, int format) {
  uint32_t &reg = regs[w.lane][w.byte / 4];
  const int shift = 8 * (w.byte % 4) + (format == kE2m1 ? 4 * w.nibble : 0);
  const uint32_t mask = format == kE2m1 ? 0xFu : 0xFFu;
  reg = (reg & ~(mask << shift)) | (uint32_t(code) & mask) << shift;
}

WaveOperands pack(const Problem &p, Packing packing = Packing::Documented) {
  WaveOperands w;
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 128; ++k) {
      putCode(w.a, place(p.fa, i, k, packing, true), p.a[i][k], p.fa);
      putCode(w.b, place(p.fb, i, k, packing, false), p.b[i][k], p.fb);
    }
  for (int i = 0; i < 16; ++i)
    for (int blk = 0; blk < 4; ++blk) {
      const int aBlock = packing == Packing::NeighbourScaleA ? (blk + 1) % 4 : blk;
      // The other bytes of the words are noise the instruction must not read.
      w.scaleA[i + 16 * aBlock] = 0xA5C3E100u | p.sa[i][blk];
      w.scaleB[i + 16 * blk] = 0x5A3C1E00u | p.sb[i][blk];
    }
  for (int l = 0; l < 64; ++l)
    for (int v = 0; v < 4; ++v)
      w.c[l][v] = p.c[4 * (l / 16) + v][l % 16];
  return w;
}

double value(int format, uint8_t code) {
  return format == kE2m1 ? fmts::e2m1Value(code) : fmts::e4m3Value(code);
}

/// D = A . B + C with dequantized operands, in long double (exact for these
/// data unless terms cancel to below 2^-40 of their size), rounded once.
float denseD(const Problem &p, int i, int j) {
  long double sum = p.c[i][j];
  for (int k = 0; k < 128; ++k)
    sum += (long double)(value(p.fa, p.a[i][k]) * std::ldexp(1.0, p.sa[i][k / 32] - 127)) *
           (long double)(value(p.fb, p.b[j][k]) * std::ldexp(1.0, p.sb[j][k / 32] - 127));
  return float(sum);
}

/// Distance in f32 steps (ulps) between two finite floats of either sign.
int64_t ulpDistance(float x, float y) {
  auto key = [](float v) {
    const int32_t bits = std::bit_cast<int32_t>(v);
    return bits < 0 ? int64_t(INT32_MIN) - bits : int64_t(bits);
  };
  return std::llabs(key(x) - key(y));
}

struct Comparison {
  int exact = 0, withinUlp = 0, total = 0;
};
Comparison compareWithDense(const Problem &p, const host_mfma::WaveResult &d) {
  Comparison c;
  for (int l = 0; l < 64; ++l)
    for (int v = 0; v < 4; ++v) {
      const float want = denseD(p, 4 * (l / 16) + v, l % 16), got = d[size_t(l)][size_t(v)];
      ++c.total;
      c.exact += std::bit_cast<uint32_t>(want) == std::bit_cast<uint32_t>(got);
      c.withinUlp += std::isfinite(got) && ulpDistance(want, got) <= 1;
    }
  return c;
}

// ---- the model against the dense product ----

void expectModelMatchesDense(int fa, int fb, uint32_t seed) {
  std::mt19937 rng(seed);
  int exact = 0, total = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const Problem p = randomProblem(fa, fb, rng);
    const Comparison c = compareWithDense(p, host_mfma::scaledMfma(pack(p), fa, fb));
    EXPECT_EQ(c.withinUlp, c.total) << "trial " << trial;
    exact += c.exact;
    total += c.total;
  }
  // The model rounds the exact sum once; the long double sum differs from
  // it only where it was itself rounded before the last step.
  EXPECT_GE(exact, total * 999 / 1000) << exact << " of " << total << " bit-exact";
  ::testing::Test::RecordProperty("bitExact", std::to_string(exact) + " of " + std::to_string(total));
}

TEST(ScaledMfmaModel, Fp4TimesFp8MatchesDenseProduct) { expectModelMatchesDense(kE2m1, kE4m3, 1); }
TEST(ScaledMfmaModel, Fp8TimesFp8MatchesDenseProduct) { expectModelMatchesDense(kE4m3, kE4m3, 2); }
TEST(ScaledMfmaModel, Fp8TimesFp4MatchesDenseProduct) { expectModelMatchesDense(kE4m3, kE2m1, 3); }
TEST(ScaledMfmaModel, Fp4TimesFp4MatchesDenseProduct) { expectModelMatchesDense(kE2m1, kE2m1, 4); }

// ---- each packing mistake is caught ----

/// Fraction of a wave's 256 results more than one ulp from the dense product.
double mismatchedFraction(const Problem &p, Packing packing) {
  const Comparison c = compareWithDense(p, host_mfma::scaledMfma(pack(p, packing), p.fa, p.fb));
  return double(c.total - c.withinUlp) / c.total;
}

TEST(ScaledMfmaModel, TransposedAIsCaught) {
  std::mt19937 rng(11);
  EXPECT_GT(mismatchedFraction(randomProblem(kE4m3, kE4m3, rng), Packing::TransposedA), 0.9);
  EXPECT_GT(mismatchedFraction(randomProblem(kE2m1, kE4m3, rng), Packing::TransposedA), 0.9);
}

TEST(ScaledMfmaModel, ScaleOfTheNeighbouringBlockIsCaught) {
  std::mt19937 rng(12);
  EXPECT_GT(mismatchedFraction(randomProblem(kE2m1, kE4m3, rng), Packing::NeighbourScaleA), 0.9);
  EXPECT_GT(mismatchedFraction(randomProblem(kE4m3, kE4m3, rng), Packing::NeighbourScaleA), 0.9);
}

TEST(ScaledMfmaModel, SwappedFp4NibblesAreCaught) {
  std::mt19937 rng(13);
  EXPECT_GT(mismatchedFraction(randomProblem(kE2m1, kE4m3, rng), Packing::NibblesSwapped), 0.9);
}

TEST(ScaledMfmaModel, Fp8AsOneRunOf32IsCaught) {
  std::mt19937 rng(14);
  // Both operands packed the same wrong way: k 16..31 and 64..79 trade
  // places, so only their blocks' scales (and fp4's own layout) tell.
  EXPECT_GT(mismatchedFraction(randomProblem(kE4m3, kE4m3, rng), Packing::Fp8OneRun), 0.9);
  // fp4 A against a one-run fp8 B: the k order differs outright.
  EXPECT_GT(mismatchedFraction(randomProblem(kE2m1, kE4m3, rng), Packing::Fp8OneRun), 0.9);
  // Why per-block scales are needed: with one scale everywhere, the same
  // wrong packing on both sides is a k permutation the sum cannot see.
  const Problem uniform = randomProblem(kE4m3, kE4m3, rng, 127, 127);
  EXPECT_EQ(mismatchedFraction(uniform, Packing::Fp8OneRun), 0.0);
}

// ---- the arithmetic the model assumes ----

TEST(ScaledMfmaModel, ExactSumIsRoundedOnce) {
  // C = 1 plus products 2^-24 (block 0) and 2^-60 (block 1): exactly past
  // the midpoint between 1 and 1 + 2^-23, so the sum rounds up; summing in
  // double first would land on the midpoint and round to 1.
  Problem p;
  p.a[0][0] = p.b[0][0] = 0x38;    // e4m3 1.0
  p.a[0][32] = p.b[0][32] = 0x38;
  for (int i = 0; i < 16; ++i)
    for (int blk = 0; blk < 4; ++blk)
      p.sa[i][blk] = p.sb[i][blk] = 127;
  p.sa[0][0] = p.sb[0][0] = 127 - 12;
  p.sa[0][1] = p.sb[0][1] = 127 - 30;
  p.c[0][0] = 1.0f;
  const host_mfma::WaveResult d = host_mfma::scaledMfma(pack(p), kE4m3, kE4m3);
  EXPECT_EQ(d[0][0], std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -60), 1.0 + std::ldexp(1.0, -24));
}

TEST(ScaledMfmaModel, ScaleCodesZeroAndNaN) {
  Problem p;
  p.a[3][5] = p.b[7][5] = 0x38;  // 1.0 at row 3, column 7, block 0
  for (int i = 0; i < 16; ++i)
    for (int blk = 0; blk < 4; ++blk)
      p.sa[i][blk] = p.sb[i][blk] = 127;
  p.sa[3][0] = 0;   // 2^-127
  p.sb[7][0] = 150;  // 2^23: the product is 2^-104
  WaveOperands w = pack(p);
  // D[3][7] is lane 7 + 16 (3 / 4) = 7, value 3.
  EXPECT_EQ(host_mfma::scaledMfma(w, kE4m3, kE4m3)[7][3], std::ldexp(1.0f, -104));
  w.scaleB[7] = 0xFF;
  const host_mfma::WaveResult d = host_mfma::scaledMfma(w, kE4m3, kE4m3);
  for (int v = 0; v < 4; ++v)
    EXPECT_TRUE(std::isnan(d[7][size_t(v)])) << v;  // column 7, rows 0..3
  EXPECT_EQ(d[8][0], 0.0f);
}

TEST(ScaledMfmaModel, RefusesWhatItDoesNotModel) {
  const WaveOperands w;
  for (int format : {1, 2, 3, 5})
    EXPECT_THROW(host_mfma::scaledMfma(w, format, kE4m3), std::invalid_argument) << format;
  EXPECT_THROW(host_mfma::scaledMfma(w, kE4m3, 2), std::invalid_argument);
  EXPECT_THROW(host_mfma::scaledMfma(w, kE4m3, kE4m3, 1, 0), std::invalid_argument);
}

// ---- the host form of the wrapper, four waves at once ----

TEST(ScaledMfmaWrapper, HostWavesGiveTheModelsResults) {
  std::mt19937 rng(21);
  std::vector<Problem> problems;
  std::vector<WaveOperands> operands;
  for (int wave = 0; wave < MONO_BLOCK / 64; ++wave) {
    problems.push_back(randomProblem(wave % 2 ? kE4m3 : kE2m1, kE4m3, rng));
    operands.push_back(pack(problems.back()));
  }
  std::vector<std::array<float, 4>> got(MONO_BLOCK);
  host_arch::runBlock([&] {
    const int wave = mono_tid() / 64, lane = mono_tid() % 64;
    const WaveOperands &w = operands[size_t(wave)];
    float c[4];
    for (int v = 0; v < 4; ++v)
      c[v] = w.c[lane][v];
    if (wave % 2)
      mono_mfma_scale_16x16x128<0, 0>(w.a[lane], w.b[lane], c, int(w.scaleA[lane]), int(w.scaleB[lane]));
    else
      mono_mfma_scale_16x16x128<4, 0>(w.a[lane], w.b[lane], c, int(w.scaleA[lane]), int(w.scaleB[lane]));
    for (int v = 0; v < 4; ++v)
      got[size_t(mono_tid())][size_t(v)] = c[v];
  });
  for (int wave = 0; wave < MONO_BLOCK / 64; ++wave) {
    const Problem &p = problems[size_t(wave)];
    const host_mfma::WaveResult want = host_mfma::scaledMfma(operands[size_t(wave)], p.fa, p.fb);
    for (int lane = 0; lane < 64; ++lane)
      EXPECT_EQ(got[size_t(64 * wave + lane)], want[size_t(lane)]) << wave << " " << lane;
  }
}

// ---- mono_gemv_mfma on one block of 4 waves (MxGemvData.h) ----

using namespace mx_gemv;

/// One shape for both weight kinds, at a full count and at a shorter one.
template <int N, int K, int TOKENS>
void expectGemvShape(uint32_t seed) {
  static_assert(mono_gemv_mfma_fits(N, K, 0, MONO_BLOCK) && mono_gemv_mfma_fits(N, K, 3, MONO_BLOCK));
  std::mt19937 rng(seed);
  const Tokens x = randomTokens(TOKENS, K, rng);
  const Weight e = e4m3Weight(N, K, rng), m = mxfp4Weight(N, K, rng);
  for (int count : {TOKENS, TOKENS - 1 - TOKENS / 3}) {
    if (count < 0)
      continue;
    const auto [gotE, gotM] = gemvBothKindsWithinBound<N, K, TOKENS>(x, e, m, count);
    for (size_t i = size_t(count) * N; i < gotE.size(); ++i) {
      ASSERT_EQ(gotE[i], 0.0f) << i;
      ASSERT_EQ(gotM[i], 0.0f) << i;
    }
  }
}

// 16 rows: one tile, its steps split over the 4 waves; 64: a tile a wave;
// 256: 4 tiles a wave. 48 tokens are 3 tiles of 16.
TEST(DeviceGemvMfma, Rows16K256) {
  expectGemvShape<16, 256, 1>(31);
  expectGemvShape<16, 256, 6>(32);
  expectGemvShape<16, 256, 16>(33);
  expectGemvShape<16, 256, 48>(34);
}
TEST(DeviceGemvMfma, Rows16K5120) {
  expectGemvShape<16, 5120, 1>(35);
  expectGemvShape<16, 5120, 6>(36);
  expectGemvShape<16, 5120, 16>(37);
  expectGemvShape<16, 5120, 48>(38);
}
TEST(DeviceGemvMfma, Rows64K256) {
  expectGemvShape<64, 256, 1>(41);
  expectGemvShape<64, 256, 6>(42);
  expectGemvShape<64, 256, 16>(43);
  expectGemvShape<64, 256, 48>(44);
}
TEST(DeviceGemvMfma, Rows64K5120) {
  expectGemvShape<64, 5120, 1>(45);
  expectGemvShape<64, 5120, 6>(46);
  expectGemvShape<64, 5120, 16>(47);
  expectGemvShape<64, 5120, 48>(48);
}
TEST(DeviceGemvMfma, Rows256K256) {
  expectGemvShape<256, 256, 1>(51);
  expectGemvShape<256, 256, 6>(52);
  expectGemvShape<256, 256, 16>(53);
  expectGemvShape<256, 256, 48>(54);
}
TEST(DeviceGemvMfma, Rows256K5120) {
  expectGemvShape<256, 5120, 1>(55);
  expectGemvShape<256, 5120, 6>(56);
  expectGemvShape<256, 5120, 16>(57);
  expectGemvShape<256, 5120, 48>(58);
}

// Steps in flight: 128 weight bytes a lane with one token tile; with more,
// no more than 64 registers a lane of loads a group.
TEST(DeviceGemvMfma, DepthKeepsAGroupsLoadsWithin64Registers) {
  EXPECT_EQ(mono_gemv_mfma_depth(32, 4096, 6, 0, 256), 4);   // wo_a rows 6
  EXPECT_EQ(mono_gemv_mfma_depth(32, 4096, 48, 0, 256), 2);  // wo_a rows 48: 3 token tiles
  EXPECT_EQ(mono_gemv_mfma_depth(16, 5120, 6, 1, 256), 8);   // router rows 6
  EXPECT_EQ(mono_gemv_mfma_depth(16, 5120, 48, 1, 256), 4);  // router rows 48
  EXPECT_EQ(mono_gemv_mfma_depth(64, 5120, 16, 3, 256), 8);  // one token tile: 128 weight bytes
  for (int rows : {16, 32, 64, 128, 256})
    for (int tokens : {1, 6, 16, 17, 33, 48})
      for (int kind : {0, 1, 3}) {
        const int depth = mono_gemv_mfma_depth(rows, 5120, tokens, kind, 256);
        const int weightWords = mono_gemv_mfma_tiles_a_wave(rows, 256) * (kind == 0 ? 8 : 4);
        const int tokenWords = mono_gemv_mfma_pass_tiles(rows, tokens, 256) * (kind == 1 ? 4 : 8);
        EXPECT_GE(depth, 1);
        if (depth > 1) {
          if (tokenWords > (kind == 1 ? 4 : 8))
            EXPECT_LE(depth * (weightWords + tokenWords), 64) << rows << " " << tokens << " " << kind;
          EXPECT_LE(depth * weightWords, 32) << rows << " " << tokens << " " << kind;
        }
      }
}

TEST(DeviceGemvMfma, SliceOfALargerWeightAndLaterTokens) { expectSliceOfALargerWeight(61); }

TEST(DeviceGemvMfma, CountZeroGivesZeros) { expectCountZeroGivesZeros(62); }

// The comparison can see a scale that is 3% off: E8M0 cannot hold such a
// scale, so the reference takes one block's weight values 3% larger where
// that block dominates its row's sums; the device's (right) result then
// fails the stage bound against it.
TEST(DeviceGemvMfma, ScaleThreePercentOffFailsTheStageBound) {
  std::mt19937 rng(63);
  const Tokens x = randomTokens(6, 256, rng);
  Weight m = mxfp4Weight(64, 256, rng);
  // Row 5, block 2 made dominant: its scale 2^12 times larger.
  const size_t at = fmts::shuffledScaleOffset(5, 2, size_t(m.scaleCols));
  m.scales[at] = uint8_t(m.scales[at] + 12);
  for (int k = 64; k < 96; ++k)
    m.values[size_t(5) * 256 + k] *= 4096.0;
  const std::vector<float> got = deviceGemv<64, 256, 6, kMxfp4Weights>(m, x);
  const std::vector<float> right = cpuGemv(m, x, 6, 64, 256, 6);
  EXPECT_LT(relativeError(got, right), kMfmaBound);
  EXPECT_TRUE(monodc::reference::withinStageBounds(monodc::reference::compare(got, right)));
  Weight off = m;
  for (int k = 64; k < 96; ++k)
    off.values[size_t(5) * 256 + k] *= 1.03;
  const monodc::reference::Comparison c =
      monodc::reference::compare(got, cpuGemv(off, x, 6, 64, 256, 6));
  EXPECT_GT(c.relativeError, 1e-2);
  EXPECT_FALSE(monodc::reference::withinStageBounds(c));
}

} // namespace
