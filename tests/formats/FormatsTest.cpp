// Exact tests of the scalar formats: bf16, e4m3, e2m1, E8M0. Expected values
// are written out by hand; the exhaustive loops check round trips and
// invariants that a wrong encoder or decoder breaks.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "monodc/formats/NumberFormats.h"

namespace monodc::formats {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

uint32_t bitsOf(float v) { return std::bit_cast<uint32_t>(v); }

// ---------------------------------------------------------------- bf16

TEST(Bf16, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto pattern = static_cast<uint16_t>(bits);
    const float value = bf16Value(pattern);
    ASSERT_EQ(bitsOf(value), bits << 16) << std::hex << bits;
    const bool isNaN = (bits & 0x7F80) == 0x7F80 && (bits & 0x7F) != 0;
    if (isNaN) {
      ASSERT_TRUE(std::isnan(value));
      ASSERT_EQ(bf16Bits(value), (bits & 0x8000) | 0x7FC0) << std::hex << bits;
    } else {
      ASSERT_EQ(bf16Bits(value), pattern) << std::hex << bits;
    }
  }
}

TEST(Bf16, KnownValues) {
  EXPECT_EQ(bf16Bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16Bits(-2.0f), 0xC000);
  EXPECT_EQ(bf16Bits(0.0f), 0x0000);
  EXPECT_EQ(bf16Bits(-0.0f), 0x8000);
  EXPECT_EQ(bf16Value(0x4049), 3.140625f);
  EXPECT_EQ(roundToBf16(3.14159265f), 3.140625f);
}

TEST(Bf16, RoundsToNearestEven) {
  // 1 + 2^-8 is halfway between 1 (0x3F80) and 1 + 2^-7 (0x3F81): even wins.
  EXPECT_EQ(bf16Bits(1.0f + 0x1p-8f), 0x3F80);
  // 1 + 3 * 2^-8 is halfway between 0x3F81 and 0x3F82: even wins, upward.
  EXPECT_EQ(bf16Bits(1.0f + 3 * 0x1p-8f), 0x3F82);
  // Just past a tie goes to the nearer value.
  EXPECT_EQ(bf16Bits(std::nextafter(1.0f + 0x1p-8f, 2.0f)), 0x3F81);
  EXPECT_EQ(bf16Bits(std::nextafter(1.0f + 3 * 0x1p-8f, 0.0f)), 0x3F81);
  EXPECT_EQ(bf16Bits(-(1.0f + 0x1p-8f)), 0xBF80);
  // Denormals round the same way: 2^-133 is the smallest bf16 denormal.
  EXPECT_EQ(bf16Bits(0x1p-134f), 0x0000);
  EXPECT_EQ(bf16Bits(0x1.8p-133f), 0x0002);
}

TEST(Bf16, InfinityAndNaN) {
  EXPECT_EQ(bf16Bits(kInf), 0x7F80);
  EXPECT_EQ(bf16Bits(-kInf), 0xFF80);
  // FLT_MAX is past the midpoint between bf16's max (0x7F7F) and 2^128.
  EXPECT_EQ(bf16Bits(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(bf16Bits(bf16Value(0x7F7F)), 0x7F7F);
  EXPECT_EQ(bf16Bits(kNaN), 0x7FC0);
  EXPECT_EQ(bf16Bits(-kNaN), 0xFFC0);
  // A payload that truncation would turn into inf (0x7F80) still gives NaN.
  EXPECT_EQ(bf16Bits(std::bit_cast<float>(0x7F800001u)), 0x7FC0);
  EXPECT_EQ(bf16Bits(std::bit_cast<float>(0xFFFFFFFFu)), 0xFFC0);
}

// ---------------------------------------------------------------- e4m3

TEST(E4m3, KnownCodes) {
  EXPECT_EQ(e4m3Value(0x00), 0.0f);
  EXPECT_EQ(e4m3Value(0x01), 0x1p-9f);  // smallest subnormal
  EXPECT_EQ(e4m3Value(0x07), 7 * 0x1p-9f);
  EXPECT_EQ(e4m3Value(0x08), 0x1p-6f);  // smallest normal
  EXPECT_EQ(e4m3Value(0x38), 1.0f);
  EXPECT_EQ(e4m3Value(0x3C), 1.5f);
  EXPECT_EQ(e4m3Value(0x76), 224.0f);
  EXPECT_EQ(e4m3Value(0x78), 256.0f);
  EXPECT_EQ(e4m3Value(0x7E), 448.0f);
  EXPECT_EQ(e4m3Value(0xFE), -448.0f);
  EXPECT_EQ(e4m3Value(0xB8), -1.0f);
  EXPECT_TRUE(std::isnan(e4m3Value(0x7F)));
  EXPECT_TRUE(std::isnan(e4m3Value(0xFF)));
  EXPECT_EQ(bitsOf(e4m3Value(0x80)), 0x80000000u);  // -0
}

TEST(E4m3, EveryCodeRoundTripsAndIsOrdered) {
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7F) == 0x7F) continue;  // NaN
    const float value = e4m3Value(static_cast<uint8_t>(code));
    ASSERT_EQ(e4m3Bits(value), code) << code;
    ASSERT_EQ(roundToE4m3(value), value) << code;
    ASSERT_EQ(e4m3Value(static_cast<uint8_t>(code ^ 0x80)), -value) << code;
  }
  for (int code = 0; code < 0x7E; ++code)
    ASSERT_LT(e4m3Value(static_cast<uint8_t>(code)), e4m3Value(static_cast<uint8_t>(code + 1)))
        << code;
}

TEST(E4m3, MidpointsGoToTheEvenCode) {
  for (int code = 0; code < 0x7E; ++code) {
    const float low = e4m3Value(static_cast<uint8_t>(code));
    const float high = e4m3Value(static_cast<uint8_t>(code + 1));
    const float midpoint = (low + high) / 2;  // exact: one more bit than e4m3
    const int even = code % 2 == 0 ? code : code + 1;
    ASSERT_EQ(e4m3Bits(midpoint), even) << code;
    ASSERT_EQ(e4m3Bits(-midpoint), even | 0x80) << code;
    ASSERT_EQ(e4m3Bits(std::nextafter(midpoint, 0.0f)), code) << code;
    ASSERT_EQ(e4m3Bits(std::nextafter(midpoint, kInf)), code + 1) << code;
  }
  // The same rule written out: 1.0625 lies between 1 (0x38) and 1.125 (0x39),
  // 1.1875 between 1.125 (0x39) and 1.25 (0x3A).
  EXPECT_EQ(e4m3Bits(1.0625f), 0x38);
  EXPECT_EQ(e4m3Bits(1.1875f), 0x3A);
  // Step 16 in [128, 256), 32 in [256, 448].
  EXPECT_EQ(e4m3Bits(240.0f), 0x77);
  EXPECT_EQ(e4m3Bits(232.0f), 0x76);  // 224 (0x76) | 240 (0x77)
  EXPECT_EQ(e4m3Bits(248.0f), 0x78);  // 240 (0x77) | 256 (0x78)
  EXPECT_EQ(e4m3Bits(400.0f), 0x7C);  // 384 (0x7C) | 416 (0x7D)
  EXPECT_EQ(e4m3Bits(432.0f), 0x7E);  // 416 (0x7D) | 448 (0x7E)
}

TEST(E4m3, Saturates) {
  EXPECT_EQ(e4m3Bits(448.0f), 0x7E);
  EXPECT_EQ(e4m3Bits(449.0f), 0x7E);
  EXPECT_EQ(e4m3Bits(464.0f), 0x7E);  // the tie 448 | 480 goes to the even 448
  EXPECT_EQ(e4m3Bits(470.0f), 0x7E);  // nearer 480, which would be the NaN code
  EXPECT_EQ(e4m3Bits(1e6f), 0x7E);
  EXPECT_EQ(e4m3Bits(std::numeric_limits<float>::max()), 0x7E);
  EXPECT_EQ(e4m3Bits(kInf), 0x7E);
  EXPECT_EQ(e4m3Bits(-449.0f), 0xFE);
  EXPECT_EQ(e4m3Bits(-kInf), 0xFE);
  EXPECT_EQ(roundToE4m3(1e6f), 448.0f);
  EXPECT_EQ(roundToE4m3(-kInf), -448.0f);
}

TEST(E4m3, Subnormals) {
  EXPECT_EQ(e4m3Bits(0x1p-9f), 0x01);
  EXPECT_EQ(e4m3Bits(0x1p-10f), 0x00);  // halfway 0 / 2^-9 -> 0 (even)
  EXPECT_EQ(e4m3Bits(std::nextafter(0x1p-10f, 1.0f)), 0x01);
  EXPECT_EQ(e4m3Bits(3 * 0x1p-10f), 0x02);  // halfway 2^-9 / 2^-8 -> 0x02
  EXPECT_EQ(e4m3Bits(5 * 0x1p-10f), 0x02);  // halfway 0x02 / 0x03 -> 0x02
  EXPECT_EQ(e4m3Bits(7 * 0x1p-9f), 0x07);
  EXPECT_EQ(e4m3Bits(7.5f * 0x1p-9f), 0x08);  // halfway 0x07 / 2^-6 -> 0x08
  EXPECT_EQ(e4m3Bits(1e-30f), 0x00);
  EXPECT_EQ(e4m3Bits(-1e-30f), 0x80);
  EXPECT_EQ(e4m3Bits(std::numeric_limits<float>::denorm_min()), 0x00);
  EXPECT_EQ(e4m3Bits(-0.0f), 0x80);
}

TEST(E4m3, NaNKeepsItsSign) {
  EXPECT_EQ(e4m3Bits(kNaN), 0x7F);
  EXPECT_EQ(e4m3Bits(-kNaN), 0xFF);
  EXPECT_TRUE(std::isnan(roundToE4m3(kNaN)));
}

// ---------------------------------------------------------------- e2m1

TEST(E2m1, EveryCode) {
  const float expected[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                              -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  for (int code = 0; code < 16; ++code) {
    const float value = e2m1Value(static_cast<uint8_t>(code));
    ASSERT_EQ(bitsOf(value), bitsOf(expected[code])) << code;
    ASSERT_EQ(e2m1Bits(value), code) << code;
    ASSERT_EQ(e2m1Value(static_cast<uint8_t>(code | 0xF0)), value) << "high bits ignored";
  }
}

TEST(E2m1, TiesGoToTheEvenCode) {
  EXPECT_EQ(e2m1Bits(0.25f), 0);  // 0 | 0.5
  EXPECT_EQ(e2m1Bits(0.75f), 2);  // 0.5 | 1
  EXPECT_EQ(e2m1Bits(1.25f), 2);  // 1 | 1.5
  EXPECT_EQ(e2m1Bits(1.75f), 4);  // 1.5 | 2
  EXPECT_EQ(e2m1Bits(2.5f), 4);   // 2 | 3
  EXPECT_EQ(e2m1Bits(3.5f), 6);   // 3 | 4
  EXPECT_EQ(e2m1Bits(5.0f), 6);   // 4 | 6
  EXPECT_EQ(e2m1Bits(-0.75f), 10);
  EXPECT_EQ(e2m1Bits(-5.0f), 14);
  // Off the ties: nearest.
  EXPECT_EQ(e2m1Bits(std::nextafter(0.25f, 1.0f)), 1);
  EXPECT_EQ(e2m1Bits(std::nextafter(0.75f, 0.0f)), 1);
  EXPECT_EQ(e2m1Bits(std::nextafter(1.25f, 2.0f)), 3);
  EXPECT_EQ(e2m1Bits(std::nextafter(1.75f, 0.0f)), 3);
  EXPECT_EQ(e2m1Bits(std::nextafter(2.5f, 3.0f)), 5);
  EXPECT_EQ(e2m1Bits(std::nextafter(3.5f, 0.0f)), 5);
  EXPECT_EQ(e2m1Bits(std::nextafter(5.0f, 6.0f)), 7);
  EXPECT_EQ(e2m1Bits(2.9f), 5);
  EXPECT_EQ(roundToE2m1(1.3f), 1.5f);
}

TEST(E2m1, SaturatesAndHandlesSpecials) {
  EXPECT_EQ(e2m1Bits(6.0f), 7);
  EXPECT_EQ(e2m1Bits(7.0f), 7);
  EXPECT_EQ(e2m1Bits(1e9f), 7);
  EXPECT_EQ(e2m1Bits(kInf), 7);
  EXPECT_EQ(e2m1Bits(-kInf), 15);
  EXPECT_EQ(e2m1Bits(-0.1f), 8);  // -0
  EXPECT_EQ(e2m1Bits(kNaN), 0);   // documented: no NaN in FP4
  EXPECT_EQ(e2m1Bits(-kNaN), 0);
}

// ---------------------------------------------------------------- E8M0

TEST(E8m0, EveryCode) {
  EXPECT_EQ(bitsOf(e8m0Value(0)), 0x00400000u);  // 2^-127, a denormal
  EXPECT_EQ(e8m0Value(1), 0x1p-126f);
  EXPECT_EQ(e8m0Value(127), 1.0f);
  EXPECT_EQ(e8m0Value(130), 8.0f);
  EXPECT_EQ(bitsOf(e8m0Value(254)), 0x7F000000u);  // 2^127
  EXPECT_TRUE(std::isnan(e8m0Value(255)));
  for (int code = 0; code < 255; ++code) {
    const float value = e8m0Value(static_cast<uint8_t>(code));
    ASSERT_EQ(value, std::ldexp(1.0f, code - 127)) << code;
    ASSERT_EQ(e8m0Bits(value), code) << code;
  }
}

TEST(E8m0, BitsOfOtherValues) {
  EXPECT_EQ(e8m0Bits(3.0f), 128);   // floor(log2 3) = 1
  EXPECT_EQ(e8m0Bits(0.75f), 126);  // floor(log2 0.75) = -1
  EXPECT_EQ(e8m0Bits(std::nextafter(2.0f, 0.0f)), 127);
  EXPECT_EQ(e8m0Bits(-4.0f), 129);  // the sign is ignored
  EXPECT_EQ(e8m0Bits(0.0f), 0);
  EXPECT_EQ(e8m0Bits(0x1p-140f), 0);  // below 2^-127: clamped
  EXPECT_EQ(e8m0Bits(std::numeric_limits<float>::max()), 254);
  EXPECT_EQ(e8m0Bits(kInf), 254);
  EXPECT_EQ(e8m0Bits(kNaN), 255);
}

}  // namespace
}  // namespace monodc::formats
