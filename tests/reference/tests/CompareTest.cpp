// compare() and the stage bounds of docs/numerics.md section 6 (relative error <= 1e-2,
// cosine >= 0.9999), including cases that must fail: a bound that cannot fail
// proves nothing.
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Reference.h"

namespace monodc::reference {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// bf16 values in [-1, 1), from a fixed LCG.
std::vector<float> bf16Pattern(size_t count) {
  std::vector<float> values(count);
  uint32_t state = 2024;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = formats::roundToBf16(static_cast<float>(state >> 8) / (1u << 23) - 1.0f);
  }
  return values;
}

std::vector<float> scaledToBf16(const std::vector<float>& values, float factor) {
  std::vector<float> scaled;
  for (float v : values) scaled.push_back(formats::roundToBf16(v * factor));
  return scaled;
}

TEST(Compare, IdenticalVectors) {
  const std::vector<float> want = bf16Pattern(256);
  const Comparison c = compare(want, want);
  EXPECT_EQ(c.maxAbsError, 0.0);
  EXPECT_EQ(c.relativeError, 0.0);
  EXPECT_NEAR(c.cosine, 1.0, 1e-12);
  EXPECT_FALSE(c.nonFinite);
  EXPECT_TRUE(withinStageBounds(c));
}

TEST(Compare, HandComputedStatistics) {
  const Comparison c = compare({1.0f, 2.0f, 3.0f}, {1.0f, 2.0f, 4.0f});
  EXPECT_EQ(c.maxAbsError, 1.0);
  EXPECT_EQ(c.maxAbsRef, 4.0);
  EXPECT_EQ(c.relativeError, 0.25);
  EXPECT_NEAR(c.cosine, 0.99146013398, 1e-10);  // 17 / sqrt(14 * 21)
  EXPECT_FALSE(withinStageBounds(c));
}

TEST(Compare, ThreePercentScalingFails) {
  // A uniform 3% scale keeps the direction (the cosine still passes), so the
  // relative-error bound is what must catch it.
  const std::vector<float> want = bf16Pattern(1024);
  const Comparison c = compare(scaledToBf16(want, 1.03f), want);
  EXPECT_GT(c.relativeError, 0.025);
  EXPECT_LT(c.relativeError, 0.035);
  EXPECT_GT(c.cosine, 0.9999);
  EXPECT_FALSE(withinStageBounds(c));
  // So does 3% down.
  EXPECT_FALSE(withinStageBounds(compare(scaledToBf16(want, 0.97f), want)));
}

TEST(Compare, HalfPercentScalingPasses) {
  const std::vector<float> want = bf16Pattern(1024);
  const Comparison c = compare(scaledToBf16(want, 1.005f), want);
  EXPECT_LT(c.relativeError, 1e-2);
  EXPECT_TRUE(withinStageBounds(c));
}

TEST(Compare, RelativeBoundIsInclusive) {
  const Comparison c = compare({101.0f}, {100.0f});
  EXPECT_EQ(c.relativeError, 0.01);
  EXPECT_TRUE(withinStageBounds(c));
  EXPECT_FALSE(withinStageBounds(compare({101.25f}, {100.0f})));
}

TEST(Compare, CosineFailsOnSpreadError) {
  // One large value and 999 zeros, each off by 0.009: relative error 0.009
  // passes, but the error's energy drops the cosine to 0.96.
  std::vector<float> want(1000, 0.0f);
  want[0] = 1.0f;
  std::vector<float> got;
  for (float v : want) got.push_back(v + 0.009f);
  const Comparison c = compare(got, want);
  EXPECT_NEAR(c.relativeError, 0.009, 1e-6);
  EXPECT_NEAR(c.cosine, 0.96248, 1e-4);
  EXPECT_FALSE(withinStageBounds(c));
}

TEST(Compare, NonFiniteValuesFail) {
  const Comparison nanGot = compare({kNaN, 2.0f}, {1.0f, 2.0f});
  EXPECT_TRUE(nanGot.nonFinite);
  EXPECT_EQ(nanGot.maxAbsError, 0.0);  // the finite pair matches
  EXPECT_FALSE(withinStageBounds(nanGot));
  const Comparison infWant = compare({1.0f, 2.0f}, {1.0f, kInf});
  EXPECT_TRUE(infWant.nonFinite);
  EXPECT_FALSE(withinStageBounds(infWant));
}

TEST(Compare, ZeroVectors) {
  const Comparison bothZero = compare({0.0f, 0.0f}, {0.0f, -0.0f});
  EXPECT_EQ(bothZero.relativeError, 0.0);
  EXPECT_EQ(bothZero.cosine, 1.0);
  EXPECT_TRUE(withinStageBounds(bothZero));
  const Comparison gotZero = compare({0.0f, 0.0f}, {1.0f, 0.0f});
  EXPECT_EQ(gotZero.relativeError, 1.0);
  EXPECT_EQ(gotZero.cosine, 0.0);
  EXPECT_FALSE(withinStageBounds(gotZero));
  const Comparison wantZero = compare({1e-30f, 0.0f}, {0.0f, 0.0f});
  EXPECT_TRUE(std::isinf(wantZero.relativeError));
  EXPECT_FALSE(withinStageBounds(wantZero));
}

TEST(Compare, RejectsDifferentSizes) {
  EXPECT_THROW(compare({1.0f}, {1.0f, 2.0f}), std::invalid_argument);
}

}  // namespace
}  // namespace monodc::reference
