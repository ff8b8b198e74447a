// Small hand-checked cases of the CPU reference: every expected value below is
// worked out on paper from docs/numerics.md, not produced by the code under test.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Moe.h"
#include "monodc/reference/Reference.h"

namespace monodc::reference {
namespace {

using formats::Mxfp8Variant;

// ---------------------------------------------------------------- roundDoubleToBf16

TEST(RoundDoubleToBf16, RoundsOnce) {
  // Just above the tie between 1 and 1 + 2^-7. Through f32 first, the 2^-30
  // would be lost and the tie would then go to the even 1.0.
  EXPECT_EQ(roundDoubleToBf16(1.0 + 0x1p-8 + 0x1p-30), 1.0078125f);
  EXPECT_EQ(roundDoubleToBf16(1.0 + 0x1p-8), 1.0f);  // exact tie: even
  EXPECT_EQ(roundDoubleToBf16(1.0 + 0x1p-8 - 0x1p-30), 1.0f);
  EXPECT_EQ(roundDoubleToBf16(-(1.0 + 0x1p-8 + 0x1p-30)), -1.0078125f);
}

TEST(RoundDoubleToBf16, Specials) {
  EXPECT_TRUE(std::isnan(roundDoubleToBf16(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(roundDoubleToBf16(1e300), std::numeric_limits<float>::infinity());
  EXPECT_EQ(roundDoubleToBf16(-std::numeric_limits<double>::infinity()),
            -std::numeric_limits<float>::infinity());
  const float negativeZero = roundDoubleToBf16(-1e-300);
  EXPECT_EQ(negativeZero, 0.0f);
  EXPECT_TRUE(std::signbit(negativeZero));
  EXPECT_EQ(roundDoubleToBf16(0x1.8p-133), 0x1p-132f);  // denormal tie -> even
}

// ---------------------------------------------------------------- rmsNorm

TEST(RmsNorm, ConstantRow) {
  // mean(2^2) = 4, rsqrt = 0.5: every output is exactly the weight.
  const std::vector<float> x(64, 2.0f);
  EXPECT_EQ(rmsNorm(x, 1, 64, std::vector<float>(64, 1.0f), 1e-20),
            std::vector<float>(64, 1.0f));
  EXPECT_EQ(rmsNorm(x, 1, 64, std::vector<float>(64, 1.5f), 1e-20),
            std::vector<float>(64, 1.5f));
}

TEST(RmsNorm, RowsAreNormalizedSeparatelyAndRoundedToBf16) {
  // Row 1: mean of squares (9 + 16) / 2 = 12.5, rsqrt = 0.2828427...;
  // 3 * that = 0.8485 -> 217.22 / 256 -> 0.84765625;
  // 4 * that * 1 = 1.1314 -> 144.82 / 128 -> 1.1328125.
  const std::vector<float> x = {2.0f, 2.0f, 3.0f, 4.0f};
  const std::vector<float> y = rmsNorm(x, 2, 2, {1.0f, 1.0f}, 1e-20);
  EXPECT_EQ(y, (std::vector<float>{1.0f, 1.0f, 0.84765625f, 1.1328125f}));
  // Weights scale before the one rounding: 6 r = 1.6971 -> 1.6953125;
  // -2 r = -0.5657 -> -0.56640625.
  const std::vector<float> weighted = rmsNorm({3.0f, 4.0f}, 1, 2, {2.0f, -0.5f}, 1e-20);
  EXPECT_EQ(weighted, (std::vector<float>{1.6953125f, -0.56640625f}));
}

TEST(RmsNorm, EpsIsInsideTheRoot) {
  // x^2 = 1e-20 = eps: the root sees 2e-20, so y = 1 / sqrt(2) -> 0.70703125.
  const std::vector<float> y = rmsNorm({1e-10f, -1e-10f}, 1, 2, {1.0f, 1.0f}, 1e-20);
  EXPECT_EQ(y, (std::vector<float>{0.70703125f, -0.70703125f}));
  EXPECT_EQ(rmsNorm({0.0f, 0.0f}, 1, 2, {1.0f, 1.0f}, 1e-20), (std::vector<float>{0.0f, 0.0f}));
}

TEST(RmsNorm, RejectsBadShapes) {
  EXPECT_THROW(rmsNorm({1.0f, 2.0f, 3.0f}, 1, 2, {1.0f, 1.0f}, 1e-20), std::invalid_argument);
  EXPECT_THROW(rmsNorm({1.0f, 2.0f}, 1, 2, {1.0f}, 1e-20), std::invalid_argument);
}

// ---------------------------------------------------------------- quantizeMxfp8Rows

TEST(QuantizeMxfp8Rows, ScalesAreRowMajorPerGroup) {
  std::vector<float> x(2 * 64, 0.0f);
  x[0] = 448.0f;            // row 0 group 0: code 127
  x[33] = 1.0f;             // row 0 group 1: code 119, 256 -> 0x78
  x[64 + 63] = -0.125f;     // row 1 group 1: code 116, -256 -> 0xF8
  const Mxfp8Tensor standard = quantizeMxfp8Rows(x, 2, 64, Mxfp8Variant::Standard);
  EXPECT_EQ(standard.rows, 2);
  EXPECT_EQ(standard.cols, 64);
  EXPECT_EQ(standard.scales, (std::vector<uint8_t>{127, 119, 0, 116}));
  EXPECT_EQ(standard.codes[0], 0x7E);
  EXPECT_EQ(standard.codes[33], 0x78);
  EXPECT_EQ(standard.codes[127], 0xF8);
  EXPECT_EQ(standard.codes[64], 0x00);
  const Mxfp8Tensor routed = quantizeMxfp8Rows(x, 2, 64, Mxfp8Variant::Routed);
  EXPECT_EQ(routed.scales, (std::vector<uint8_t>{127, 119, 85, 116}));
  EXPECT_THROW(quantizeMxfp8Rows(std::vector<float>(48), 1, 48, Mxfp8Variant::Standard),
               std::invalid_argument);
}

// ---------------------------------------------------------------- quantizeBlockE4m3

uint8_t patternCode(int row, int col) {
  const int magnitude = (row * 5 + col * 3) % 0x7E;  // never the NaN code
  return static_cast<uint8_t>(magnitude | ((row + col) % 2 ? 0x80 : 0x00));
}

TEST(QuantizeBlockE4m3, RepresentableValuesRoundTripExactly) {
  // 64 x 64 = 2 x 2 blocks, each of e4m3 values times the block's power of two
  // (2^0, 2^-3, 2^3; the last block all zero), with 448 * factor at its corner
  // so that the block's code is 127 + log2(factor).
  constexpr int kN = 64, kK = 64;
  const float factors[2][2] = {{1.0f, 0.125f}, {8.0f, 0.0f}};
  std::vector<float> w(kN * kK);
  std::vector<uint8_t> expectedCodes(kN * kK);
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kK; ++j) {
      const float factor = factors[i / 32][j / 32];
      const bool corner = i % 32 == 0 && j % 32 == 0;
      const uint8_t code = factor == 0.0f ? 0x00 : corner ? 0x7E : patternCode(i, j);
      expectedCodes[i * kK + j] = code;
      w[i * kK + j] = factor == 0.0f ? 0.0f : formats::e4m3Value(code) * factor;
    }
  }
  const BlockScaledE4m3 q = quantizeBlockE4m3(w, kN, kK);
  EXPECT_EQ(q.n, kN);
  EXPECT_EQ(q.k, kK);
  EXPECT_EQ(q.scales, (std::vector<uint8_t>{127, 124, 130, 0}));
  EXPECT_EQ(q.codes, expectedCodes);
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kK; ++j)
      ASSERT_EQ(formats::e4m3Value(q.codes[i * kK + j]) *
                    formats::e8m0Value(q.scales[(i / 32) * 2 + j / 32]),
                w[i * kK + j])
          << i << " " << j;
}

TEST(QuantizeBlockE4m3, RejectsPartialBlocks) {
  EXPECT_THROW(quantizeBlockE4m3(std::vector<float>(32 * 48), 32, 48), std::invalid_argument);
  EXPECT_THROW(quantizeBlockE4m3(std::vector<float>(10), 32, 32), std::invalid_argument);
}

// ---------------------------------------------------------------- gemvMxfp8xE4m3

TEST(GemvMxfp8xE4m3, TwoHotRowPicksWeightColumns) {
  // x = 1 at k = 3 (group 0) and 3 at k = 40 (group 1); w[j][3] = (j % 8 + 1) / 4,
  // w[j][40] = -1. Every value is exact after quantization (block codes 120 and
  // 119, x codes 119 and 120), so out[j] = (j % 8 + 1) / 4 - 3 exactly.
  constexpr int kN = 32, kK = 64;
  std::vector<float> x(kK, 0.0f);
  x[3] = 1.0f;
  x[40] = 3.0f;
  std::vector<float> w(kN * kK, 0.0f);
  for (int j = 0; j < kN; ++j) {
    w[j * kK + 3] = static_cast<float>(j % 8 + 1) * 0.25f;
    w[j * kK + 40] = -1.0f;
  }
  const std::vector<float> out = gemvMxfp8xE4m3(quantizeMxfp8Rows(x, 1, kK, Mxfp8Variant::Standard),
                                                quantizeBlockE4m3(w, kN, kK));
  ASSERT_EQ(out.size(), static_cast<size_t>(kN));
  for (int j = 0; j < kN; ++j) EXPECT_EQ(out[j], static_cast<float>(j % 8 + 1) * 0.25f - 3.0f) << j;
  EXPECT_EQ(out[0], -2.75f);
  EXPECT_EQ(out[7], -1.0f);
}

TEST(GemvMxfp8xE4m3, SumIsRoundedOnceToBf16) {
  // x = [1, 1, 0...]; even rows of w = [1, 3 * 2^-9], odd rows = [1, 2^-8].
  // Even: 1.005859375 is 0.75 of a bf16 step past 1 -> 1.0078125.
  // Odd: 1 + 2^-8 is a tie -> the even 1.0.
  constexpr int kN = 64, kK = 32;
  std::vector<float> x(kK, 0.0f);
  x[0] = x[1] = 1.0f;
  std::vector<float> w(kN * kK, 0.0f);
  for (int j = 0; j < kN; ++j) {
    w[j * kK + 0] = 1.0f;
    w[j * kK + 1] = j % 2 == 0 ? 3 * 0x1p-9f : 0x1p-8f;
  }
  // Two rows of x, the second negated.
  std::vector<float> rows = x;
  for (float v : x) rows.push_back(-v);
  const std::vector<float> out =
      gemvMxfp8xE4m3(quantizeMxfp8Rows(rows, 2, kK, Mxfp8Variant::Standard),
                     quantizeBlockE4m3(w, kN, kK));
  ASSERT_EQ(out.size(), static_cast<size_t>(2 * kN));
  for (int j = 0; j < kN; ++j) {
    const float expected = j % 2 == 0 ? 1.0078125f : 1.0f;
    EXPECT_EQ(out[j], expected) << j;
    EXPECT_EQ(out[kN + j], -expected) << j;
  }
}

TEST(GemvMxfp8xE4m3, ActivationQuantizationIsPartOfTheResult) {
  // x = 1000 alone: code 129 (1000 / 448 = 2.23 -> 2^2), 1000 / 4 = 250 ->
  // e4m3 256 (step 16), dequantized 1024; times w = 1 gives 1024.
  constexpr int kN = 32, kK = 32;
  std::vector<float> x(kK, 0.0f);
  x[5] = 1000.0f;
  std::vector<float> w(kN * kK, 0.0f);
  for (int j = 0; j < kN; ++j) w[j * kK + 5] = 1.0f;
  const Mxfp8Tensor xq = quantizeMxfp8Rows(x, 1, kK, Mxfp8Variant::Standard);
  EXPECT_EQ(xq.scales[0], 129);
  const std::vector<float> out = gemvMxfp8xE4m3(xq, quantizeBlockE4m3(w, kN, kK));
  EXPECT_EQ(out, std::vector<float>(kN, 1024.0f));
}

TEST(GemvMxfp8xE4m3, RejectsMismatchedK) {
  const Mxfp8Tensor x = quantizeMxfp8Rows(std::vector<float>(64), 1, 64, Mxfp8Variant::Standard);
  const BlockScaledE4m3 w = quantizeBlockE4m3(std::vector<float>(32 * 32), 32, 32);
  EXPECT_THROW(gemvMxfp8xE4m3(x, w), std::invalid_argument);
}

// ---------------------------------------------------------------- routed experts

// A tiny routed expert: H = 32, I = 32, x = e_0. Every weight sits in column 0
// of its row (w13) or is chosen so that d picks out h; all are exact in MXFP4.
constexpr int kHidden = 32, kInter = 32;

// The w13 row of gate row i and of up row i (16-row tiles, gate first).
int gateRowOf(int i) { return (i / 16) * 32 + i % 16; }
int upRowOf(int i) { return gateRowOf(i) + 16; }

std::vector<float> handW13(int experts = 1) {
  std::vector<float> w(size_t(experts) * 2 * kInter * kHidden, 0.0f);
  for (int e = 0; e < experts; ++e) {
    auto set = [&](int row, float v) { w[(size_t(e) * 2 * kInter + row) * kHidden] = v; };
    set(gateRowOf(0), 2.0f);
    set(upRowOf(0), 1.0f);
    set(gateRowOf(1), 12.0f);
    set(upRowOf(1), 1.0f);
    set(gateRowOf(2), 1.0f);
    set(upRowOf(2), -24.0f);
    set(gateRowOf(3), -3.0f);
    set(upRowOf(3), 2.0f);
    set(gateRowOf(20), 4.0f);
    set(upRowOf(20), 0.5f);  // the second tile pair
  }
  return w;
}

std::vector<float> handW2() {
  std::vector<float> w(size_t(kHidden) * kInter, 0.0f);
  w[0 * kInter + 0] = 1.0f;
  w[1 * kInter + 1] = 1.0f;
  for (int i = 0; i < kInter; ++i) w[2 * kInter + i] = 1.0f;
  w[3 * kInter + 3] = -2.0f;
  w[4 * kInter + 20] = 0.5f;
  return w;
}

std::vector<float> unitX() {
  std::vector<float> x(kHidden, 0.0f);
  x[0] = 1.0f;  // MXFP8r: code 119, 256 -> exactly 1
  return x;
}

TEST(RoutedExpert, HandComputedHiddenAndDown) {
  const Mxfp4Weights w13 = quantizeMxfp4Weights(handW13(), 1, 2 * kInter, kHidden);
  const Mxfp4Weights w2 = quantizeMxfp4Weights(handW2(), 1, kHidden, kInter);
  const RoutedExpertOutput out = routedExpert(unitX(), w13, w2, 0, 10.0);
  // h = bf16(g' sigmoid(g') clamp(u)):
  //   g = 2, u = 1:    1.76159 -> 1.7578125 (225 / 128)
  //   g = 12 -> 10:    9.99955 -> 10 (unclamped it would be 12)
  //   u = -24 -> -10:  -7.31059 -> -7.3125 (unclamped -17.5)
  //   g = -3, u = 2:   -0.284555 -> -0.28515625 (no lower clamp on g)
  //   g = 4, u = 0.5:  1.96403 -> 1.9609375
  std::vector<float> hidden(kInter, 0.0f);
  hidden[0] = 1.7578125f;
  hidden[1] = 10.0f;
  hidden[2] = -7.3125f;
  hidden[3] = -0.28515625f;
  hidden[20] = 1.9609375f;
  EXPECT_EQ(out.hidden, hidden);
  // MXFP8r(h): amax 10 -> code 122 (x 32): 56.25 -> 56, 320, -234 -> -240,
  // -9.125 -> -9, 62.75 -> 64, i.e. 1.75, 10, -7.5, -0.28125, 2.
  // d = [1.75, 10, sum = 5.96875, -2 * -0.28125, 0.5 * 2, 0...].
  std::vector<float> down(kHidden, 0.0f);
  down[0] = 1.75f;
  down[1] = 10.0f;
  down[2] = 5.96875f;
  down[3] = 0.5625f;
  down[4] = 1.0f;
  EXPECT_EQ(out.down, down);
}

TEST(RoutedExpert, GateAndUpAreInterleavedIn16RowTiles) {
  // Swapping each gate tile with its up tile makes g = 0.5, u = 4 at i = 20:
  // 0.5 sigmoid(0.5) 4 = 1.24492 -> 1.2421875 instead of 1.9609375.
  const std::vector<float> plain = handW13();
  std::vector<float> swapped(plain.size());
  for (int row = 0; row < 2 * kInter; ++row) {
    const int partner = (row / 16) % 2 == 0 ? row + 16 : row - 16;
    std::copy_n(plain.begin() + size_t(partner) * kHidden, kHidden,
                swapped.begin() + size_t(row) * kHidden);
  }
  const Mxfp4Weights w2 = quantizeMxfp4Weights(handW2(), 1, kHidden, kInter);
  const RoutedExpertOutput right =
      routedExpert(unitX(), quantizeMxfp4Weights(plain, 1, 2 * kInter, kHidden), w2, 0, 10.0);
  const RoutedExpertOutput wrong =
      routedExpert(unitX(), quantizeMxfp4Weights(swapped, 1, 2 * kInter, kHidden), w2, 0, 10.0);
  EXPECT_EQ(right.hidden[20], 1.9609375f);
  EXPECT_EQ(wrong.hidden[20], 1.2421875f);
  EXPECT_NE(right.down, wrong.down);
}

TEST(RoutedExpert, UsesTheRoutedMxfp8Flavour) {
  // x = 2^-130 alone. Standard MXFP8 (code 0) would keep it, giving g = 2^-129
  // and h = 2^-130; the routed floor (code 85) flushes it to 0, so h = 0.
  std::vector<float> x(kHidden, 0.0f);
  x[0] = 0x1p-130f;
  const RoutedExpertOutput out =
      routedExpert(x, quantizeMxfp4Weights(handW13(), 1, 2 * kInter, kHidden),
                   quantizeMxfp4Weights(handW2(), 1, kHidden, kInter), 0, 10.0);
  EXPECT_EQ(out.hidden, std::vector<float>(kInter, 0.0f));
}

TEST(RoutedExperts, WeightsSharedAndRounding) {
  // d = [1.75, 10, 5.96875, 0.5625, 1, 0...] times 1.5, each product rounded
  // to bf16 (8.953125 -> 8.9375), then + 0.25 from the shared expert.
  const Mxfp4Weights w13 = quantizeMxfp4Weights(handW13(), 1, 2 * kInter, kHidden);
  const Mxfp4Weights w2 = quantizeMxfp4Weights(handW2(), 1, kHidden, kInter);
  Routing routing;
  routing.indices = {0};
  routing.weights = {1.5f};
  const std::vector<float> out =
      routedExperts(unitX(), 1, routing, w13, w2, std::vector<float>(kHidden, 0.25f), 10.0);
  std::vector<float> expected(kHidden, 0.25f);
  expected[0] = 2.875f;
  expected[1] = 15.25f;
  expected[2] = 9.1875f;
  expected[3] = 1.09375f;
  expected[4] = 1.75f;
  EXPECT_EQ(out, expected);
}

TEST(RoutedExperts, SumsInF32InPickOrder) {
  // One expert with h_0 = 1.9609375 (g = 4, u = 0.5), MXFP8r -> 2, and
  // w2[0][0] = 128: d_0 = 256, picked four times with weights 1, 2^-8, 2^-24,
  // 2^-24, so o = 256, 1, 2^-16, 2^-16. Summed in f32 in that order: 257,
  // 257 + 2^-16 is a tie -> 257, twice; bf16(257) is a tie -> 256. In the
  // reverse order: 2^-15, 1 + 2^-15, 257 + 2^-15 exactly -> bf16 258. (The
  // bf16 chain it replaced gives 256 both ways.)
  std::vector<float> w13Values(size_t(2) * kInter * kHidden, 0.0f);
  std::vector<float> w2Values(size_t(kHidden) * kInter, 0.0f);
  w13Values[size_t(gateRowOf(0)) * kHidden] = 4.0f;
  w13Values[size_t(upRowOf(0)) * kHidden] = 0.5f;
  w2Values[0] = 128.0f;
  const Mxfp4Weights w13 = quantizeMxfp4Weights(w13Values, 1, 2 * kInter, kHidden);
  const Mxfp4Weights w2 = quantizeMxfp4Weights(w2Values, 1, kHidden, kInter);
  std::vector<float> x = unitX();
  x.insert(x.end(), x.begin(), x.end());  // two tokens, the same x
  Routing routing;
  routing.indices = std::vector<int>(8, 0);
  routing.weights = {1.0f, 0x1p-8f, 0x1p-24f, 0x1p-24f, 0x1p-24f, 0x1p-24f, 0x1p-8f, 1.0f};
  const std::vector<float> out =
      routedExperts(x, 2, routing, w13, w2, std::vector<float>(2 * kHidden, 0.0f), 10.0);
  std::vector<float> expected(2 * kHidden, 0.0f);
  expected[0] = 256.0f;
  expected[kHidden] = 258.0f;
  EXPECT_EQ(out, expected);
}

TEST(RoutedExperts, RejectsBadShapes) {
  const Mxfp4Weights w13 = quantizeMxfp4Weights(handW13(), 1, 2 * kInter, kHidden);
  const Mxfp4Weights w2 = quantizeMxfp4Weights(handW2(), 1, kHidden, kInter);
  EXPECT_THROW(routedExpert(unitX(), w13, w2, 1, 10.0), std::invalid_argument);
  EXPECT_THROW(routedExpert(std::vector<float>(64), w13, w2, 0, 10.0), std::invalid_argument);
  EXPECT_THROW(routedExpert(unitX(), w2, w2, 0, 10.0), std::invalid_argument);
  Routing routing;
  routing.indices = {0, 0};
  routing.weights = {1.0f};
  EXPECT_THROW(routedExperts(unitX(), 1, routing, w13, w2, std::vector<float>(kHidden), 10.0),
               std::invalid_argument);
  EXPECT_THROW(quantizeMxfp4Weights(std::vector<float>(48), 1, 1, 48), std::invalid_argument);
}

TEST(QuantizeMxfp4Weights, ScalesArePerRowPer32) {
  // Two experts of 2 x 64: expert 1 row 1 group 1 holds 12 (code 128, 6).
  std::vector<float> w(2 * 2 * 64, 0.0f);
  w[(1 * 2 + 1) * 64 + 40] = 12.0f;
  const Mxfp4Weights q = quantizeMxfp4Weights(w, 2, 2, 64);
  EXPECT_EQ(q.experts, 2);
  EXPECT_EQ(q.n, 2);
  EXPECT_EQ(q.k, 64);
  EXPECT_EQ(q.scales, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 128}));
  EXPECT_EQ(q.codes[(1 * 2 + 1) * 64 + 40], 0x7);
}

}  // namespace
}  // namespace monodc::reference
