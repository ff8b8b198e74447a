// e2m1 packing, the MXFP4 test-data quantizer and AITER's weight and scale
// shuffles (docs/numerics.md section 2). The shuffles are byte moves, so every check is
// exact. Hand-checked offsets come from the view/permute definition on paper:
//   weight (e, n = 16 g + r, kb = 32 j + 16 h + t) -> e N Kb + 16 g Kb + 512 j +
//     256 h + 16 r + t;
//   scale (row = 32 a + 16 b + c, col = 8 d + 4 e + f) -> 32 a C + 256 d + 64 f +
//     4 c + 2 e + b (C the padded column count).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "monodc/formats/AiterShuffle.h"
#include "monodc/formats/NumberFormats.h"

namespace monodc::formats {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<uint8_t> randomBytes(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(count);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

// Runs f and returns the std::invalid_argument message ("" when none is thrown).
std::string invalidArgumentMessage(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

using WeightOffset = std::function<size_t(size_t, size_t, size_t, size_t, size_t)>;

// How many bytes of src [experts][rows][rowBytes] are not where offset says
// they are in shuffled.
size_t weightMismatches(const std::vector<uint8_t>& shuffled, const std::vector<uint8_t>& src,
                        size_t experts, size_t rows, size_t rowBytes, const WeightOffset& offset) {
  size_t mismatches = 0;
  for (size_t e = 0; e < experts; ++e)
    for (size_t n = 0; n < rows; ++n)
      for (size_t kb = 0; kb < rowBytes; ++kb)
        if (shuffled.at(offset(e, n, kb, rows, rowBytes)) != src[(e * rows + n) * rowBytes + kb])
          ++mismatches;
  return mismatches;
}

size_t scaleMismatches(const std::vector<uint8_t>& shuffled, const std::vector<uint8_t>& src,
                       size_t rows, size_t cols) {
  size_t mismatches = 0;
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c)
      if (shuffled.at(shuffledScaleOffset(r, c, paddedScaleCols(cols))) != src[r * cols + c])
        ++mismatches;
  return mismatches;
}

// ---------------------------------------------------------------- e2m1 packing

TEST(E2m1Pack, LowNibbleHoldsTheLowerIndex) {
  EXPECT_EQ(packE2m1({0x1, 0x2, 0xF, 0x3, 0x0, 0x8}, 1, 6),
            (std::vector<uint8_t>{0x21, 0x3F, 0x80}));
  EXPECT_EQ(packE2m1({0x11, 0xF2}, 1, 2), (std::vector<uint8_t>{0x21}));  // high bits ignored
  EXPECT_EQ(unpackE2m1({0xA5, 0x70}, 2, 2), (std::vector<uint8_t>{0x5, 0xA, 0x0, 0x7}));
}

TEST(E2m1Pack, RoundTripsEveryCode) {
  std::vector<uint8_t> codes = randomBytes(7 * 64, 1);
  for (auto& c : codes) c &= 0xF;
  const std::vector<uint8_t> bytes = packE2m1(codes, 7, 64);
  ASSERT_EQ(bytes.size(), 7u * 32);
  EXPECT_EQ(unpackE2m1(bytes, 7, 64), codes);
  const std::vector<uint8_t> all = randomBytes(300, 2);
  EXPECT_EQ(packE2m1(unpackE2m1(all, 10, 60), 10, 60), all);
}

TEST(E2m1Pack, RejectsBadShapes) {
  EXPECT_NE(invalidArgumentMessage([] { packE2m1({1, 2, 3}, 1, 3); }).find("cols = 3"),
            std::string::npos);
  EXPECT_THROW(packE2m1({1, 2, 3, 4}, 1, 2), std::invalid_argument);
  EXPECT_THROW(unpackE2m1({1, 2}, 1, 2), std::invalid_argument);
  EXPECT_THROW(unpackE2m1({1}, 1, 3), std::invalid_argument);
}

// ---------------------------------------------------------------- MXFP4

TEST(Mxfp4ScaleCode, SmallestCodeThatFitsSix) {
  EXPECT_EQ(mxfp4ScaleCode(6.0f), 127);
  EXPECT_EQ(mxfp4ScaleCode(std::nextafter(6.0f, kInf)), 128);
  EXPECT_EQ(mxfp4ScaleCode(4.0f), 127);   // 4 fits, 8 would not
  EXPECT_EQ(mxfp4ScaleCode(3.0f), 126);   // 3 * 2 = 6
  EXPECT_EQ(mxfp4ScaleCode(std::nextafter(3.0f, kInf)), 127);
  EXPECT_EQ(mxfp4ScaleCode(1.0f), 125);   // 1 * 4 = 4; * 8 would pass 6
  EXPECT_EQ(mxfp4ScaleCode(0.75f), 124);  // 0.75 * 8 = 6
  EXPECT_EQ(mxfp4ScaleCode(12.0f), 128);
  EXPECT_EQ(mxfp4ScaleCode(24.0f), 129);
  EXPECT_EQ(mxfp4ScaleCode(0.0f), 0);
  EXPECT_EQ(mxfp4ScaleCode(0x1p-140f), 0);  // would need a code below 0
  EXPECT_EQ(mxfp4ScaleCode(std::numeric_limits<float>::max()), 253);
  EXPECT_EQ(mxfp4ScaleCode(kInf), 254);
}

TEST(QuantizeMxfp4, GridValuesRoundTripExactly) {
  // Group 0: the 16 e2m1 values (twice) times 2^-3, amax 6 * 2^-3 -> code 124.
  // Group 1: all zero -> code 0, codes 0 (and 8 for -0).
  std::vector<float> values(64, 0.0f);
  for (size_t i = 0; i < 32; ++i) values[i] = e2m1Value(static_cast<uint8_t>(i % 16)) * 0.125f;
  values[40] = -0.0f;
  std::vector<uint8_t> codes(64), scales(2);
  quantizeMxfp4(values.data(), 64, codes.data(), scales.data());
  EXPECT_EQ(scales, (std::vector<uint8_t>{124, 0}));
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(codes[i], i % 16) << i;
  EXPECT_EQ(codes[40], 8);
  EXPECT_EQ(codes[41], 0);
  for (size_t i = 0; i < 64; ++i)
    EXPECT_EQ(mxfp4Value(codes[i], scales[i / 32]), values[i]) << i;
}

TEST(QuantizeMxfp4, RandomGroupsUseTheRuleAndAreExactOnDequantization) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(32 * 64);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = normal(rng) * std::ldexp(1.0f, static_cast<int>(i / 32) % 40 - 20);
  std::vector<uint8_t> codes(values.size()), scales(values.size() / 32);
  quantizeMxfp4(values.data(), values.size(), codes.data(), scales.data());
  for (size_t g = 0; g < scales.size(); ++g) {
    const float amax = mxGroupAmax(values.data() + 32 * g, 32);
    const int shift = 127 - scales[g];
    // The scaled amax lands in (3, 6]: the largest code is used, nothing clips.
    EXPECT_GT(std::ldexp(amax, shift), 3.0f) << g;
    EXPECT_LE(std::ldexp(amax, shift), 6.0f) << g;
    for (size_t i = 32 * g; i < 32 * (g + 1); ++i) {
      ASSERT_EQ(codes[i], e2m1Bits(std::ldexp(values[i], shift))) << i;
      ASSERT_EQ(mxfp4Value(codes[i], scales[g]),
                static_cast<float>(static_cast<double>(e2m1Value(codes[i])) *
                                   std::ldexp(1.0, scales[g] - 127)))
          << i;
    }
  }
}

TEST(QuantizeMxfp4, ValuesAndRefusal) {
  EXPECT_EQ(mxfp4Value(0x7, 127), 6.0f);
  EXPECT_EQ(mxfp4Value(0xF, 130), -48.0f);
  EXPECT_EQ(mxfp4Value(0x1, 0), 0x1p-128f);
  EXPECT_TRUE(std::isnan(mxfp4Value(0x2, 255)));
  std::vector<float> values(48);
  std::vector<uint8_t> codes(48), scales(2);
  EXPECT_NE(invalidArgumentMessage([&] {
              quantizeMxfp4(values.data(), 48, codes.data(), scales.data());
            }).find("n = 48"),
            std::string::npos);
}

// ---------------------------------------------------------------- weight shuffle

struct WeightShape {
  size_t experts, rows, rowBytes;
};
const std::vector<WeightShape> kWeightShapes = {
    {1, 16, 32}, {2, 32, 64}, {3, 48, 96}, {1, 80, 320}, {2, 1280 / 8, 2560 / 8}};

TEST(ShuffleWeight, RoundTripsExactly) {
  uint32_t seed = 10;
  for (const WeightShape& s : kWeightShapes) {
    const std::vector<uint8_t> src = randomBytes(s.experts * s.rows * s.rowBytes, seed++);
    const std::vector<uint8_t> shuffled = shuffleWeight(src, s.experts, s.rows, s.rowBytes);
    EXPECT_NE(shuffled, src) << s.rows << " x " << s.rowBytes;
    EXPECT_EQ(unshuffleWeight(shuffled, s.experts, s.rows, s.rowBytes), src)
        << s.rows << " x " << s.rowBytes;
  }
}

TEST(ShuffleWeight, DeploymentShapesRoundTrip) {
  // w13 of TP4 (2 I = 1280 rows, H = 5120 -> 2560 bytes) and w2 (5120 rows of
  // I = 640 -> 320 bytes), one expert each.
  for (const WeightShape& s : {WeightShape{1, 1280, 2560}, WeightShape{1, 5120, 320}}) {
    const std::vector<uint8_t> src = randomBytes(s.rows * s.rowBytes, 20);
    const std::vector<uint8_t> shuffled = shuffleWeight(src, 1, s.rows, s.rowBytes);
    EXPECT_EQ(weightMismatches(shuffled, src, 1, s.rows, s.rowBytes, shuffledWeightOffset), 0u);
    EXPECT_EQ(unshuffleWeight(shuffled, 1, s.rows, s.rowBytes), src);
  }
}

TEST(ShuffleWeight, ClosedFormOffsetsAgreeEverywhereAndCoverEachByteOnce) {
  uint32_t seed = 30;
  for (const WeightShape& s : kWeightShapes) {
    const std::vector<uint8_t> src = randomBytes(s.experts * s.rows * s.rowBytes, seed++);
    const std::vector<uint8_t> shuffled = shuffleWeight(src, s.experts, s.rows, s.rowBytes);
    EXPECT_EQ(weightMismatches(shuffled, src, s.experts, s.rows, s.rowBytes, shuffledWeightOffset),
              0u);
    std::vector<int> hits(src.size(), 0);
    for (size_t e = 0; e < s.experts; ++e)
      for (size_t n = 0; n < s.rows; ++n)
        for (size_t kb = 0; kb < s.rowBytes; ++kb)
          ++hits.at(shuffledWeightOffset(e, n, kb, s.rows, s.rowBytes));
    EXPECT_EQ(hits, std::vector<int>(src.size(), 1));
  }
}

TEST(ShuffleWeight, HandCheckedOffsets) {
  // E = 2, N = 32, Kb = 64 (2048 bytes an expert).
  EXPECT_EQ(shuffledWeightOffset(0, 0, 15, 32, 64), 15u);    // row 0 keeps bytes 0..15 first
  EXPECT_EQ(shuffledWeightOffset(0, 1, 0, 32, 64), 16u);     // then row 1's first 16 bytes
  EXPECT_EQ(shuffledWeightOffset(0, 0, 16, 32, 64), 256u);   // second half after 16 rows
  EXPECT_EQ(shuffledWeightOffset(0, 0, 32, 32, 64), 512u);   // next K block after 2 halves
  EXPECT_EQ(shuffledWeightOffset(0, 15, 63, 32, 64), 1023u); // last byte of row group 0
  EXPECT_EQ(shuffledWeightOffset(0, 16, 0, 32, 64), 1024u);  // row group 1
  EXPECT_EQ(shuffledWeightOffset(1, 17, 40, 32, 64), 3608u); // 2048 + 1024 + 512 + 16 + 8
  EXPECT_EQ(shuffledWeightOffset(1, 31, 0, 32, 64), 3312u);  // 2048 + 1024 + 15 * 16

  // The same positions through the whole-array shuffle: mark five source
  // bytes, everything else zero.
  std::vector<uint8_t> src(2 * 32 * 64, 0);
  auto at = [&](size_t e, size_t n, size_t kb) -> uint8_t& { return src[(e * 32 + n) * 64 + kb]; };
  at(0, 0, 15) = 1;
  at(0, 1, 0) = 2;
  at(0, 0, 16) = 3;
  at(1, 17, 40) = 4;
  at(1, 31, 0) = 5;
  std::vector<uint8_t> expected(src.size(), 0);
  expected[15] = 1;
  expected[16] = 2;
  expected[256] = 3;
  expected[3608] = 4;
  expected[3312] = 5;
  EXPECT_EQ(shuffleWeight(src, 2, 32, 64), expected);

  // One tile (N = 16, Kb = 32): destination 256 h + 16 r + t holds source
  // row r byte 16 h + t; with src[i] = i mod 256:
  std::vector<uint8_t> tile(512);
  for (size_t i = 0; i < tile.size(); ++i) tile[i] = static_cast<uint8_t>(i);
  const std::vector<uint8_t> shuffledTile = shuffleWeight(tile, 1, 16, 32);
  EXPECT_EQ(shuffledTile[17], 33);   // row 1 byte 1
  EXPECT_EQ(shuffledTile[256], 16);  // row 0 byte 16
  EXPECT_EQ(shuffledTile[272], 48);  // row 1 byte 16
  EXPECT_EQ(shuffledTile[511], 255); // row 15 byte 31 = 511 mod 256
}

TEST(ShuffleWeight, RejectsShapesThatAreNotWholeTiles) {
  const auto message = [](size_t rows, size_t rowBytes) {
    return invalidArgumentMessage([&] {
      shuffleWeight(std::vector<uint8_t>(rows * rowBytes), 1, rows, rowBytes);
    });
  };
  EXPECT_NE(message(8, 32).find("N = 8"), std::string::npos);
  EXPECT_NE(message(24, 32).find("N = 24"), std::string::npos);
  EXPECT_NE(message(16, 16).find("Kb = 16"), std::string::npos);
  EXPECT_NE(message(16, 48).find("Kb = 48"), std::string::npos);
  EXPECT_THROW(unshuffleWeight(std::vector<uint8_t>(16 * 40), 1, 16, 40), std::invalid_argument);
  EXPECT_THROW(checkShuffleWeightShape(32, 33), std::invalid_argument);
  EXPECT_NO_THROW(checkShuffleWeightShape(32, 96));
  // A buffer of the wrong size.
  EXPECT_THROW(shuffleWeight(std::vector<uint8_t>(100), 1, 16, 32), std::invalid_argument);
  EXPECT_THROW(unshuffleWeight(std::vector<uint8_t>(512), 2, 16, 32), std::invalid_argument);
}

TEST(ShuffleWeight, AWrongPermutationIsDetected) {
  // Swapping the two inner axes (16 rows and 2 halves) gives a different layout
  // that still round-trips through its own inverse: a round trip alone cannot
  // tell layouts apart, the offset and hand checks can.
  const size_t experts = 2, rows = 32, rowBytes = 64;
  const std::vector<uint8_t> src = randomBytes(experts * rows * rowBytes, 40);
  const std::vector<size_t> dims = {experts, rows / 16, 16, rowBytes / 32, 2, 16};
  const std::vector<uint8_t> wrong = permuteDims(src, dims, {0, 1, 3, 2, 4, 5});
  EXPECT_EQ(permuteDims(wrong, {experts, rows / 16, rowBytes / 32, 16, 2, 16}, {0, 1, 3, 2, 4, 5}),
            src);
  EXPECT_GT(weightMismatches(wrong, src, experts, rows, rowBytes, shuffledWeightOffset), 0u);
  EXPECT_NE(wrong, shuffleWeight(src, experts, rows, rowBytes));

  // The right permutation through permuteDims is the shuffle itself.
  EXPECT_EQ(permuteDims(src, dims, {0, 1, 3, 4, 2, 5}),
            shuffleWeight(src, experts, rows, rowBytes));

  // A closed form with each 16 x 16 half transposed disagrees with the shuffle.
  const WeightOffset transposed = [](size_t e, size_t n, size_t kb, size_t r, size_t b) {
    const size_t right = shuffledWeightOffset(e, n, kb, r, b);
    return right - (n % 16) * 16 - kb % 16 + (kb % 16) * 16 + n % 16;
  };
  EXPECT_GT(weightMismatches(shuffleWeight(src, experts, rows, rowBytes), src, experts, rows,
                             rowBytes, transposed),
            0u);
}

// ---------------------------------------------------------------- scale shuffle

struct ScaleShape {
  size_t rows, cols;
};
// Whole tiles, ragged shapes that need padding, and the deployment shapes:
// w13 scales of 3 TP4 experts (3 x 1280 rows, 5120 / 32 cols) and w2 scales
// of 2 experts (2 x 5120 rows, 640 / 32 = 20 cols, padded to 24).
const std::vector<ScaleShape> kScaleShapes = {{256, 8},  {3, 3},      {40, 10},
                                              {300, 17}, {3 * 1280, 160}, {2 * 5120, 20}};

TEST(ShuffleScales, RoundTripsExactlyAndDropsThePadding) {
  uint32_t seed = 50;
  for (const ScaleShape& s : kScaleShapes) {
    const std::vector<uint8_t> src = randomBytes(s.rows * s.cols, seed++);
    const std::vector<uint8_t> shuffled = shuffleScales(src, s.rows, s.cols);
    EXPECT_EQ(shuffled.size(), paddedScaleRows(s.rows) * paddedScaleCols(s.cols));
    EXPECT_EQ(unshuffleScales(shuffled, s.rows, s.cols), src) << s.rows << " x " << s.cols;
  }
}

TEST(ShuffleScales, ClosedFormOffsetsAgreeEverywhere) {
  uint32_t seed = 60;
  for (const ScaleShape& s : kScaleShapes) {
    const std::vector<uint8_t> src = randomBytes(s.rows * s.cols, seed++);
    const std::vector<uint8_t> shuffled = shuffleScales(src, s.rows, s.cols);
    EXPECT_EQ(scaleMismatches(shuffled, src, s.rows, s.cols), 0u) << s.rows << " x " << s.cols;
    // Over the padded array the offsets are a bijection.
    const size_t paddedRows = paddedScaleRows(s.rows), paddedCols = paddedScaleCols(s.cols);
    std::vector<int> hits(paddedRows * paddedCols, 0);
    for (size_t r = 0; r < paddedRows; ++r)
      for (size_t c = 0; c < paddedCols; ++c) ++hits.at(shuffledScaleOffset(r, c, paddedCols));
    EXPECT_EQ(hits, std::vector<int>(hits.size(), 1));
  }
}

TEST(ShuffleScales, PaddingIsFilledWithTheStatedByte) {
  // 40 x 10 pads to 256 x 16: 4096 - 400 padding bytes.
  std::vector<uint8_t> src(400);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i % 200);
  const auto count = [](const std::vector<uint8_t>& v, uint8_t byte) {
    return static_cast<size_t>(std::count(v.begin(), v.end(), byte));
  };
  EXPECT_EQ(count(shuffleScales(src, 40, 10, 0xEE), 0xEE), 4096u - 400u);
  const std::vector<uint8_t> defaultPadded = shuffleScales(src, 40, 10);
  EXPECT_EQ(count(defaultPadded, 127), 4096u - 400u + count(src, 127));
  EXPECT_EQ(paddedScaleRows(0), 0u);
  EXPECT_EQ(paddedScaleRows(256), 256u);
  EXPECT_EQ(paddedScaleRows(257), 512u);
  EXPECT_EQ(paddedScaleCols(20), 24u);
}

TEST(ShuffleScales, HandCheckedOffsets) {
  // 40 x 10 -> 256 x 16 (C = 16).
  EXPECT_EQ(shuffledScaleOffset(0, 0, 16), 0u);
  EXPECT_EQ(shuffledScaleOffset(16, 0, 16), 1u);   // b = 1 is the fastest axis
  EXPECT_EQ(shuffledScaleOffset(0, 4, 16), 2u);    // then e
  EXPECT_EQ(shuffledScaleOffset(16, 4, 16), 3u);
  EXPECT_EQ(shuffledScaleOffset(1, 0, 16), 4u);    // then the 16 rows c
  EXPECT_EQ(shuffledScaleOffset(0, 1, 16), 64u);   // then f
  EXPECT_EQ(shuffledScaleOffset(0, 8, 16), 256u);  // then d
  EXPECT_EQ(shuffledScaleOffset(32, 0, 16), 512u); // then a (32 rows x 16 cols)
  EXPECT_EQ(shuffledScaleOffset(17, 5, 16), 71u);  // 64 f + 4 c + 2 e + b = 64 + 4 + 2 + 1
  EXPECT_EQ(shuffledScaleOffset(39, 9, 16), 860u); // 512 + 256 + 64 + 4 * 7

  std::vector<uint8_t> src(40 * 10, 0);
  src[16 * 10 + 0] = 1;
  src[0 * 10 + 4] = 2;
  src[1 * 10 + 0] = 3;
  src[17 * 10 + 5] = 4;
  src[39 * 10 + 9] = 5;
  const std::vector<uint8_t> shuffled = shuffleScales(src, 40, 10, 0);
  std::vector<uint8_t> expected(4096, 0);
  expected[1] = 1;
  expected[2] = 2;
  expected[4] = 3;
  expected[71] = 4;
  expected[860] = 5;
  EXPECT_EQ(shuffled, expected);
}

TEST(ShuffleScales, AWrongPermutationIsDetected) {
  // Swapping the last two axes of the permutation (e and b) moves bytes that a
  // correct kernel would read elsewhere.
  const size_t rows = 256, cols = 16;
  const std::vector<uint8_t> src = randomBytes(rows * cols, 70);
  const std::vector<uint8_t> wrong =
      permuteDims(src, {rows / 32, 2, 16, cols / 8, 2, 4}, {0, 3, 5, 2, 1, 4});
  EXPECT_GT(scaleMismatches(wrong, src, rows, cols), 0u);
  EXPECT_NE(wrong, shuffleScales(src, rows, cols));
  EXPECT_EQ(permuteDims(src, {rows / 32, 2, 16, cols / 8, 2, 4}, {0, 3, 5, 2, 4, 1}),
            shuffleScales(src, rows, cols));
}

TEST(ShuffleScales, RejectsWrongSizes) {
  EXPECT_THROW(shuffleScales(std::vector<uint8_t>(10), 3, 3), std::invalid_argument);
  EXPECT_THROW(unshuffleScales(std::vector<uint8_t>(9), 3, 3), std::invalid_argument);
  EXPECT_NO_THROW(unshuffleScales(std::vector<uint8_t>(256 * 8), 3, 3));
}

TEST(PermuteDims, RejectsNonPermutations) {
  const std::vector<uint8_t> src(24);
  EXPECT_THROW(permuteDims(src, {2, 3, 4}, {0, 1}), std::invalid_argument);
  EXPECT_THROW(permuteDims(src, {2, 3, 4}, {0, 1, 1}), std::invalid_argument);
  EXPECT_THROW(permuteDims(src, {2, 3, 4}, {0, 1, 3}), std::invalid_argument);
  EXPECT_THROW(permuteDims(src, {2, 3, 5}, {0, 1, 2}), std::invalid_argument);
  // A transpose by hand: [2][3] -> [3][2].
  EXPECT_EQ(permuteDims({0, 1, 2, 3, 4, 5}, {2, 3}, {1, 0}),
            (std::vector<uint8_t>{0, 3, 1, 4, 2, 5}));
}

}  // namespace
}  // namespace monodc::formats
