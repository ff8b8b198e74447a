// MXFP8 scale codes and group quantization (docs/numerics.md section 2), both variants.
// Scale codes are hand-computed: c = ceil(log2(max(amax, floor) / 448)) + 127.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "monodc/formats/NumberFormats.h"

namespace monodc::formats {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr auto kStandard = Mxfp8Variant::Standard;
constexpr auto kRouted = Mxfp8Variant::Routed;

struct QuantizedGroup {
  std::array<uint8_t, 32> codes{};
  uint8_t scale = 0;
};

QuantizedGroup quantizeGroup(const std::array<float, 32>& values, Mxfp8Variant variant) {
  QuantizedGroup group;
  quantizeMxfp8(values.data(), values.size(), group.codes.data(), &group.scale, variant);
  return group;
}

TEST(Mxfp8ScaleCode, ExactPowersOfTwoKeepTheirExponent) {
  for (auto variant : {kStandard, kRouted}) {
    EXPECT_EQ(mxfp8ScaleCode(448.0f, variant), 127);
    EXPECT_EQ(mxfp8ScaleCode(896.0f, variant), 128);
    EXPECT_EQ(mxfp8ScaleCode(224.0f, variant), 126);
    EXPECT_EQ(mxfp8ScaleCode(448.0f * 0x1p-20f, variant), 107);
    EXPECT_EQ(mxfp8ScaleCode(448.0f * 0x1p100f, variant), 227);
    // One ulp past a power of two needs the next code.
    EXPECT_EQ(mxfp8ScaleCode(std::nextafter(448.0f, kInf), variant), 128);
    EXPECT_EQ(mxfp8ScaleCode(std::nextafter(224.0f, 0.0f), variant), 126);
    EXPECT_EQ(mxfp8ScaleCode(1.0f, variant), 119);  // log2(1/448) = -8.81
    EXPECT_EQ(mxfp8ScaleCode(3.0f, variant), 120);  // log2(3/448) = -7.22
  }
}

TEST(Mxfp8ScaleCode, StandardFloorsAtFltMinAndClampsToZero) {
  EXPECT_EQ(mxfp8ScaleCode(0.0f, kStandard), 0);
  EXPECT_EQ(mxfp8ScaleCode(1e-37f, kStandard), 0);
  EXPECT_EQ(mxfp8ScaleCode(0x1p-120f, kStandard), 0);  // ceil(-128.8) + 127 < 0
  // The quotient a / 448 reaches the f32 denormals here: 2^-126 keeps code 1,
  // 2^-127 (a denormal) gives 0, as the exact ceil(log2) says (a bit-field
  // ceil would say 1), and 2^-127 * (1 + 2^-10) needs code 1 again.
  EXPECT_EQ(mxfp8ScaleCode(448.0f * 0x1p-126f, kStandard), 1);
  EXPECT_EQ(mxfp8ScaleCode(448.0f * 0x1p-127f, kStandard), 0);
  EXPECT_EQ(mxfp8ScaleCode(448.4375f * 0x1p-127f, kStandard), 1);
  // One ulp above 448 * 2^-127 divides to a quotient that rounds back down to
  // 2^-127 among the denormals: the f32 division decides, code 0.
  EXPECT_EQ(mxfp8ScaleCode(std::nextafter(448.0f * 0x1p-127f, kInf), kStandard), 0);
}

TEST(Mxfp8ScaleCode, RoutedFloorsAt1e10) {
  // 1e-10 / 448 lies in (2^-43, 2^-42]: code 85 is the routed minimum, so the
  // clamp to 1 is never what decides.
  EXPECT_EQ(mxfp8ScaleCode(0.0f, kRouted), 85);
  EXPECT_EQ(mxfp8ScaleCode(1e-37f, kRouted), 85);
  EXPECT_EQ(mxfp8ScaleCode(1e-10f, kRouted), 85);
  EXPECT_EQ(mxfp8ScaleCode(448.0f * 0x1p-42f, kRouted), 85);
  EXPECT_EQ(mxfp8ScaleCode(std::nextafter(448.0f * 0x1p-42f, kInf), kRouted), 86);
}

TEST(Mxfp8ScaleCode, LargestCodes) {
  for (auto variant : {kStandard, kRouted}) {
    // FLT_MAX / 448 = 2^119.19: a finite amax never gets past 247.
    EXPECT_EQ(mxfp8ScaleCode(std::numeric_limits<float>::max(), variant), 247);
    EXPECT_EQ(mxfp8ScaleCode(kInf, variant), 254);
  }
}

TEST(Mxfp8ScaleCode, NaNAmaxTakesTheFloor) {
  EXPECT_EQ(mxfp8ScaleCode(kNaN, kStandard), 0);
  EXPECT_EQ(mxfp8ScaleCode(kNaN, kRouted), 85);
}

TEST(Mxfp8Quantize, PowerOfTwoAmaxGroup) {
  std::array<float, 32> values{};
  values[0] = 448.0f * 4;  // amax = 448 * 2^2 -> code 129, scale 4
  values[5] = -896.0f;     // -224 -> 0xF6
  values[9] = 1.0f;        // 0.25 -> 0x28
  values[31] = 3.0f;       // 0.75 -> 0x34
  const QuantizedGroup group = quantizeGroup(values, kStandard);
  EXPECT_EQ(group.scale, 129);
  EXPECT_EQ(group.codes[0], 0x7E);
  EXPECT_EQ(group.codes[5], 0xF6);
  EXPECT_EQ(group.codes[9], 0x28);
  EXPECT_EQ(group.codes[31], 0x34);
  EXPECT_EQ(group.codes[1], 0x00);
}

TEST(Mxfp8Quantize, ZeroGroup) {
  std::array<float, 32> values{};
  values[7] = -0.0f;
  const QuantizedGroup standard = quantizeGroup(values, kStandard);
  EXPECT_EQ(standard.scale, 0);
  EXPECT_EQ(standard.codes[0], 0x00);
  EXPECT_EQ(standard.codes[7], 0x80);
  const QuantizedGroup routed = quantizeGroup(values, kRouted);
  EXPECT_EQ(routed.scale, 85);
  EXPECT_EQ(routed.codes[0], 0x00);
}

TEST(Mxfp8Quantize, TinyGroup) {
  std::array<float, 32> values{};
  values[0] = 0x1p-120f;
  values[1] = -0x1p-121f;
  // Standard: code 0, so the values are scaled by 2^127: 128 -> 0x70, -64 -> 0xE8.
  const QuantizedGroup standard = quantizeGroup(values, kStandard);
  EXPECT_EQ(standard.scale, 0);
  EXPECT_EQ(standard.codes[0], 0x70);
  EXPECT_EQ(standard.codes[1], 0xE8);
  // Routed: code 85, scale 2^-42: the values vanish.
  const QuantizedGroup routed = quantizeGroup(values, kRouted);
  EXPECT_EQ(routed.scale, 85);
  EXPECT_EQ(routed.codes[0], 0x00);
  EXPECT_EQ(routed.codes[1], 0x80);
}

TEST(Mxfp8Quantize, HugeGroup) {
  std::array<float, 32> values{};
  values[0] = std::numeric_limits<float>::max();  // / 2^120 = 255.99998 -> 256
  values[1] = 1.0f;
  const QuantizedGroup group = quantizeGroup(values, kStandard);
  EXPECT_EQ(group.scale, 247);
  EXPECT_EQ(group.codes[0], 0x78);
  EXPECT_EQ(group.codes[1], 0x00);
}

TEST(Mxfp8Quantize, InfinityClampsTheCodeTo254) {
  std::array<float, 32> values{};
  values[0] = kInf;
  values[1] = -kInf;
  values[2] = 1e38f;  // * 2^-127 = 0.5877 -> 0.5625 = 0x31
  values[3] = 1.0f;
  for (auto variant : {kStandard, kRouted}) {
    const QuantizedGroup group = quantizeGroup(values, variant);
    EXPECT_EQ(group.scale, 254);
    EXPECT_EQ(group.codes[0], 0x7E);
    EXPECT_EQ(group.codes[1], 0xFE);
    EXPECT_EQ(group.codes[2], 0x31);
    EXPECT_EQ(group.codes[3], 0x00);
  }
}

TEST(Mxfp8Quantize, NaNIsLeftOutOfTheAmax) {
  std::array<float, 32> values{};
  values[0] = 448.0f;
  values[3] = kNaN;
  values[4] = -kNaN;
  values[5] = 1.0f;  // scale 1 -> 0x38
  const QuantizedGroup group = quantizeGroup(values, kStandard);
  EXPECT_EQ(group.scale, 127);
  EXPECT_EQ(group.codes[0], 0x7E);
  EXPECT_EQ(group.codes[3], 0x7F);
  EXPECT_EQ(group.codes[4], 0xFF);
  EXPECT_EQ(group.codes[5], 0x38);

  std::array<float, 32> allNaN;
  allNaN.fill(kNaN);
  const QuantizedGroup standard = quantizeGroup(allNaN, kStandard);
  EXPECT_EQ(standard.scale, 0);
  EXPECT_EQ(standard.codes[17], 0x7F);
  EXPECT_EQ(quantizeGroup(allNaN, kRouted).scale, 85);
}

TEST(Mxfp8Quantize, GroupsAreIndependent) {
  std::vector<float> values(96, 0.0f);
  values[0] = 448.0f;     // group 0: code 127
  values[40] = 1.0f;      // group 1: code 119, 1 * 2^8 = 256 -> 0x78
  values[95] = -0.125f;   // group 2: code 116, -0.125 * 2^11 = -256 -> 0xF8
  std::vector<uint8_t> codes(96), scales(3);
  quantizeMxfp8(values.data(), values.size(), codes.data(), scales.data(), kStandard);
  EXPECT_EQ(scales[0], 127);
  EXPECT_EQ(scales[1], 119);
  EXPECT_EQ(scales[2], 116);
  EXPECT_EQ(codes[0], 0x7E);
  EXPECT_EQ(codes[40], 0x78);
  EXPECT_EQ(codes[95], 0xF8);
}

TEST(Mxfp8Quantize, RejectsAPartialGroup) {
  std::vector<float> values(33, 1.0f);
  std::vector<uint8_t> codes(33), scales(2);
  EXPECT_THROW(quantizeMxfp8(values.data(), values.size(), codes.data(), scales.data(), kStandard),
               std::invalid_argument);
}

// Deterministic values over many magnitudes: dequantized q * 2^(c - 127) is
// within half an e4m3 step of v, and the group amax lands in (224, 448].
TEST(Mxfp8Quantize, DequantizedValuesAreWithinRounding) {
  uint32_t state = 12345;
  auto nextUniform = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<double>(state >> 8) / (1u << 24);  // [0, 1)
  };
  constexpr size_t kGroups = 64;
  std::vector<float> values(kGroups * 32);
  for (size_t g = 0; g < kGroups; ++g) {
    const int groupExponent = static_cast<int>(g) - 24;  // amax 2^-25 .. 2^39
    for (size_t i = 0; i < 32; ++i) {
      const double magnitude = std::ldexp(nextUniform(), groupExponent - static_cast<int>(i % 12));
      values[g * 32 + i] = static_cast<float>(nextUniform() < 0.5 ? -magnitude : magnitude);
    }
  }
  for (auto variant : {kStandard, kRouted}) {
    std::vector<uint8_t> codes(values.size()), scales(kGroups);
    quantizeMxfp8(values.data(), values.size(), codes.data(), scales.data(), variant);
    for (size_t g = 0; g < kGroups; ++g) {
      const int exponent = scales[g] - 127;
      double amax = 0.0;
      for (size_t i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(values[g * 32 + i]));
      const double scaledAmax = std::ldexp(amax, -exponent);
      EXPECT_GT(scaledAmax, 224.0) << g;
      EXPECT_LE(scaledAmax, 448.0) << g;
      for (size_t i = 0; i < 32; ++i) {
        const double v = values[g * 32 + i];
        const double dequantized = std::ldexp(static_cast<double>(e4m3Value(codes[g * 32 + i])), exponent);
        // Half a step: 2^-4 relative in the normals, 2^-10 absolute below 2^-6.
        const double bound = std::fmax(std::fabs(v) * 0x1p-4, std::ldexp(1.0, exponent - 10));
        EXPECT_LE(std::fabs(dequantized - v), bound) << g << " " << i;
      }
    }
  }
}

}  // namespace
}  // namespace monodc::formats
