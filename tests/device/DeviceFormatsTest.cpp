// The device library's number formats (runtime/device/generic.h), compiled
// for the host through HostArch.h, against the formats library: the
// encoders over every f32 whose low 8 bits are 0x00, 0x01, 0x7F, 0x80 or
// 0xFF (every rounding boundary of bf16 and e4m3 is in that set), the
// decoders over every code. The GPU runs the same source; only these
// scalar functions are exercised here.
#include "monodc/formats/NumberFormats.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <random>

// clang-format off
#include "prelude.h"
#include "monodc/device/gemv_shape.h"
#include "monodc/device/epoch_shape.h"
#include "HostArch.h"
#include "generic.h"
// clang-format on

namespace formats = monodc::formats;

namespace {

/// f32 inputs a sweep visits: all high 24 bits with a few low bytes.
template <class Visit>
void forSweepInputs(Visit visit) {
  for (uint32_t high = 0; high < (1u << 24); ++high)
    for (uint32_t low : {0x00u, 0x01u, 0x7Fu, 0x80u, 0xFFu})
      visit(std::bit_cast<float>((high << 8) | low));
}

/// Inputs of the sweep on which two encoders give different codes (NaN
/// inputs included: both make a NaN canonical and keep its sign).
uint64_t encoderMismatches(const std::function<uint32_t(float)> &device,
                           const std::function<uint32_t(float)> &reference) {
  uint64_t mismatches = 0;
  forSweepInputs([&](float v) { mismatches += device(v) != reference(v); });
  return mismatches;
}

/// Two decoded values agree: two NaNs do; zeros must agree in sign.
bool sameValue(float a, float b) {
  return (a != a && b != b) || std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

/// Codes below `codes` on which two decoders give different values.
uint64_t decoderMismatches(int codes, const std::function<float(uint8_t)> &device,
                           const std::function<float(uint8_t)> &reference) {
  uint64_t mismatches = 0;
  for (int c = 0; c < codes; ++c)
    mismatches += !sameValue(device(uint8_t(c)), reference(uint8_t(c)));
  return mismatches;
}

TEST(DeviceFormats, Bf16EncoderMatchesTheFormatsLibrary) {
  EXPECT_EQ(encoderMismatches([](float v) { return uint32_t(mono_bf16_bits(v)); },
                              [](float v) { return uint32_t(formats::bf16Bits(v)); }),
            0u);
}

TEST(DeviceFormats, E4m3EncoderMatchesTheFormatsLibrary) {
  EXPECT_EQ(encoderMismatches([](float v) { return uint32_t(mono_e4m3_bits(v)); },
                              [](float v) { return uint32_t(formats::e4m3Bits(v)); }),
            0u);
}

TEST(DeviceFormats, DecodersMatchTheFormatsLibraryOnEveryCode) {
  EXPECT_EQ(decoderMismatches(256, mono_e4m3_value, formats::e4m3Value), 0u);
  EXPECT_EQ(decoderMismatches(16, mono_e2m1_value, formats::e2m1Value), 0u);
  EXPECT_EQ(decoderMismatches(256, mono_e8m0_value, formats::e8m0Value), 0u);
  // The tensor-core GEMVs' decoder of a code held in a word: 0 (a denormal)
  // and 255 (NaN) included; without its bit 22 it would lose both.
  EXPECT_EQ(decoderMismatches(256, [](uint8_t c) { return mono_e8m0_word_value(c); },
                              formats::e8m0Value),
            0u);
  EXPECT_EQ(decoderMismatches(
                256, [](uint8_t c) { return std::bit_cast<float>(uint32_t(c) << 23); },
                formats::e8m0Value),
            2u);
}

// Values that `decode` (two codes in bits 0..7 and 16..23 -> two floats,
// as mono_e8m0x2_values) gives differently from the formats library, over
// every pair of codes.
template <typename Decode>
size_t e8m0PairMismatches(Decode decode) {
  size_t mismatches = 0;
  for (uint32_t lo = 0; lo < 256; ++lo)
    for (uint32_t hi = 0; hi < 256; ++hi) {
      float values[2];
      decode(lo | (hi << 16), values[0], values[1]);
      mismatches += !sameValue(values[0], formats::e8m0Value(uint8_t(lo)));
      mismatches += !sameValue(values[1], formats::e8m0Value(uint8_t(hi)));
    }
  return mismatches;
}

TEST(DeviceFormats, PairsOfScalesDecodeExactlyAsBf16) {
  EXPECT_EQ(e8m0PairMismatches(mono_e8m0x2_values), 0u);  // 0 and 255 included
  // Each of its two bf16 steps on code << 7 is needed: without the max
  // code 0 is 0, without the fma code 255 is an infinity (256 pairs a half).
  auto asFloats = [](mono_u32 pair, float &lo, float &hi) {
    lo = std::bit_cast<float>(pair << 16);
    hi = std::bit_cast<float>(pair & 0xFFFF0000u);
  };
  EXPECT_EQ(e8m0PairMismatches([&](mono_u32 codes, float &lo, float &hi) {
              asFloats(mono_bf16x2_fma(codes << 7, 0u, codes << 7), lo, hi);
            }),
            2u * 256u);
  EXPECT_EQ(e8m0PairMismatches([&](mono_u32 codes, float &lo, float &hi) {
              asFloats(mono_bf16x2_max(codes << 7, 0x00400040u), lo, hi);
            }),
            2u * 256u);
}

// Values of packed e2m1 words decoded by `decode` (8 codes a word) that
// differ from the formats library: every code at every position, in random
// words.
template <typename Decode>
size_t packedE2m1Mismatches(Decode decode) {
  std::mt19937 rng(7);
  size_t mismatches = 0;
  for (int n = 0; n < (1 << 18); ++n) {
    const uint32_t w = n < 16 ? uint32_t(n) * 0x11111111u : uint32_t(rng());
    float v[8];
    decode(w, v);
    for (int i = 0; i < 8; ++i)
      mismatches += std::bit_cast<uint32_t>(v[i]) !=
                    std::bit_cast<uint32_t>(formats::e2m1Value(uint8_t(w >> (4 * i))));
  }
  return mismatches;
}

// The routed weights' decoder, eight codes through byte permutes.
TEST(DeviceFormats, PackedE2m1DecoderMatchesOnEveryCodeAndPosition) {
  EXPECT_EQ(packedE2m1Mismatches([](uint32_t w, float *v) { mono_e2m1x8_values(w, v); }), 0u);
  // ... and the comparison fails when the sign bits are lost.
  EXPECT_GT(packedE2m1Mismatches(
                [](uint32_t w, float *v) { mono_e2m1x8_values(w & 0x77777777u, v); }),
            0u);
}

// The weights' branch-free e4m3 decoder: exact on every code but the two
// NaN codes, which weights never hold.
TEST(DeviceFormats, FastE4m3DecoderMatchesOnEveryCodeButNaN) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F)
      continue;
    EXPECT_EQ(std::bit_cast<uint32_t>(mono_e4m3_fast(uint32_t(c))),
              std::bit_cast<uint32_t>(formats::e4m3Value(uint8_t(c))))
        << "code " << c;
  }
}

// The checks can fail: a bf16 encoder that truncates, an e4m3 encoder that
// sends large values to NaN instead of saturating, and an e2m1 decoder that
// forgets the 2^126 are caught.
TEST(DeviceFormats, TheComparisonsCatchWrongFormats) {
  EXPECT_GT(encoderMismatches([](float v) { return std::bit_cast<uint32_t>(v) >> 16; },
                              [](float v) { return uint32_t(formats::bf16Bits(v)); }),
            0u);
  EXPECT_GT(encoderMismatches(
                [](float v) { return v > 448.0f ? 0x7Fu : uint32_t(mono_e4m3_bits(v)); },
                [](float v) { return uint32_t(formats::e4m3Bits(v)); }),
            0u);
  EXPECT_GT(decoderMismatches(16,
                              [](uint8_t c) {
                                return mono_as_float(((uint32_t)(c & 7u) << 22) |
                                                     ((uint32_t)(c & 8u) << 28));
                              },
                              formats::e2m1Value),
            0u);
}

} // namespace
