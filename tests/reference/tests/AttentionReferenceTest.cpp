// The KV record, the KV insert and the attention back of the CPU reference
// (docs/numerics.md section 4). Hand-worked bytes where the format is the point;
// closed forms (one key, equal scores) where the softmax is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Attention.h"
#include "monodc/reference/Reference.h"

namespace monodc::reference {
namespace {

const KvRecordLayout kReal{448, 64, 32};
const KvRecordLayout kTiny{64, 64, 32};
constexpr float kInfF = std::numeric_limits<float>::infinity();

// bf16 values in [-scale, scale), from a fixed LCG.
std::vector<float> bf16Values(size_t count, uint32_t seed, float scale = 1.0f) {
  std::vector<float> values(count);
  for (float& v : values) {
    seed = seed * 1664525u + 1013904223u;
    v = formats::roundToBf16(scale * (static_cast<float>(seed >> 8) / (1u << 23) - 1.0f));
  }
  return values;
}

// cos || sin per position, GPT-J frequencies (the values only need to be a
// rotation; f32 as the model's table).
std::vector<float> cosSinTable(int positions, int rope) {
  std::vector<float> table(size_t(positions) * rope);
  for (int p = 0; p < positions; ++p)
    for (int j = 0; j < rope / 2; ++j) {
      const double angle = p * std::pow(10000.0, -2.0 * j / rope);
      table[size_t(p) * rope + j] = static_cast<float>(std::cos(angle));
      table[size_t(p) * rope + rope / 2 + j] = static_cast<float>(std::sin(angle));
    }
  return table;
}

double maxAbs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

double maxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    // A non-finite value fails outright: std::max would pass over a NaN.
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return std::numeric_limits<double>::infinity();
    m = std::max(m, std::fabs(a[i] - b[i]));
  }
  return m;
}

// ---------------------------------------------------------------- KV record

TEST(KvRecord, Sizes) {
  EXPECT_EQ(kReal.dataBytes(), 576);
  EXPECT_EQ(kReal.recordBytes(), 584);
  EXPECT_EQ(kReal.pageBytes(), 32 * 584);
  EXPECT_EQ(kTiny.headDim(), 128);
  EXPECT_EQ(kTiny.recordBytes(), 64 + 128 + 8);
  EXPECT_THROW(encodeKvRecord(KvRecordLayout{512, 64, 32}, std::vector<float>(576)),
               std::invalid_argument);  // 8 groups: no room for the zero byte 7
  EXPECT_THROW(encodeKvRecord(kTiny, std::vector<float>(127)), std::invalid_argument);
}

TEST(KvRecord, HandWorkedTinyRecord) {
  // Group 0 amax 56 = 448 * 2^-3: e = -3 exactly (a power of two keeps its
  // exponent), code 124; values times 8: 448 -> 0x7E, -8 -> 0xD0, 4 -> 0x48,
  // 24 -> 0x5C, 8.5 (a tie between 8 and 9) -> even 8 -> 0x50.
  std::vector<float> k(128, 0.0f);
  k[0] = 56.0f;
  k[1] = -1.0f;
  k[2] = 0.5f;
  k[3] = 3.0f;
  k[4] = 1.0625f;
  k[64] = 1.0f;       // bf16 0x3F80
  k[65] = -2.0f;      // bf16 0xC000
  k[127] = 0.15625f;  // bf16 0x3E20
  const std::vector<uint8_t> r = encodeKvRecord(kTiny, k);
  ASSERT_EQ(r.size(), 200u);
  std::vector<uint8_t> want(200, 0);
  want[0] = 0x7E;
  want[1] = 0xD0;
  want[2] = 0x48;
  want[3] = 0x5C;
  want[4] = 0x50;
  want[64] = 0x80;
  want[65] = 0x3F;
  want[66] = 0x00;
  want[67] = 0xC0;
  want[190] = 0x20;
  want[191] = 0x3E;
  want[192] = 124;  // the one scale byte; bytes 193..199 stay 0
  EXPECT_EQ(r, want);
  const std::vector<double> back = decodeKvRecord(kTiny, r);
  EXPECT_EQ(back[0], 56.0);
  EXPECT_EQ(back[1], -1.0);
  EXPECT_EQ(back[4], 1.0);  // the tie went down
  EXPECT_EQ(back[65], -2.0);
  EXPECT_EQ(back[127], 0.15625);
}

TEST(KvRecord, ScaleBytesOfTheRealRecord) {
  // Group 0: amax 448 -> e = 0, code 127 (not 128), 448 -> 0x7E.
  // Group 1: amax 56.5 > 56 -> e = -2, code 125; 56.5 * 4 = 226 -> 224 (steps
  // of 16 in [128, 256)) -> 0x76.
  // Groups 2..6 all zero: amax floored at 1e-4, ceil(log2(1e-4 / 448)) =
  // ceil(-22.09) = -22, code 105. Byte 7 stays 0.
  std::vector<float> k(512, 0.0f);
  k[10] = -448.0f;
  k[64 + 5] = 56.5f;
  const std::vector<uint8_t> r = encodeKvRecord(kReal, k);
  ASSERT_EQ(r.size(), 584u);
  EXPECT_EQ(r[10], 0xFE);
  EXPECT_EQ(r[64 + 5], 0x76);
  EXPECT_EQ(std::vector<uint8_t>(r.begin() + 576, r.end()),
            (std::vector<uint8_t>{127, 125, 105, 105, 105, 105, 105, 0}));
}

TEST(KvRecord, RoundTripBounds) {
  for (const KvRecordLayout& layout : {kReal, kTiny}) {
    for (uint32_t seed = 1; seed <= 20; ++seed) {
      // Groups of very different magnitudes, rope dims of their own.
      std::vector<float> k = bf16Values(layout.headDim(), seed);
      for (int d = 0; d < layout.nope; ++d)
        k[d] = formats::roundToBf16(k[d] * std::ldexp(1.0f, (d / 64) * 3 - 9 + int(seed % 5)));
      const std::vector<uint8_t> r = encodeKvRecord(layout, k);
      const std::vector<double> back = decodeKvRecord(layout, r);
      for (int d = 0; d < layout.nope; ++d) {
        // e4m3 keeps 3 fraction bits (relative error <= 2^-4) down to its
        // subnormal step 2^-9 (absolute error <= 2^-10) of the group's scale.
        const double scale = std::ldexp(1.0, r[layout.dataBytes() + d / 64] - 127);
        const double bound = std::max(std::fabs(k[d]) * 0x1p-4, scale * 0x1p-10);
        ASSERT_LE(std::fabs(back[d] - k[d]), bound) << "seed " << seed << " dim " << d;
        ASSERT_LE(std::fabs(back[d]), 448.0 * scale);
      }
      for (int d = layout.nope; d < layout.headDim(); ++d) ASSERT_EQ(back[d], k[d]) << d;
    }
  }
}

// ---------------------------------------------------------------- insertKv

TEST(InsertKv, DataAndScalesLandAtTheirOffsets) {
  // Tiny records: 192 data + 8 scale bytes, pages of 32 x 200 = 6400 bytes.
  KvCache cache = makeKvCache(kTiny, 3);
  std::fill(cache.bytes.begin(), cache.bytes.end(), uint8_t{0xA5});
  const std::vector<float> k = bf16Values(4 * 128, 7u, 4.0f);
  insertKv(cache, k, 4, {33, -1, 0, 95});
  std::vector<uint8_t> want(3 * 6400, 0xA5);
  auto place = [&](int row, size_t data, size_t scales) {
    const std::vector<uint8_t> r = encodeKvRecord(
        kTiny, std::vector<float>(k.begin() + row * 128, k.begin() + row * 128 + 128));
    std::copy(r.begin(), r.begin() + 192, want.begin() + data);
    std::copy(r.begin() + 192, r.end(), want.begin() + scales);
  };
  place(0, 6400 + 192, 6400 + 32 * 192 + 8);                    // slot 33: page 1, record 1
  place(2, 0, 32 * 192);                                        // slot 0
  place(3, 2 * 6400 + 31 * 192, 2 * 6400 + 32 * 192 + 31 * 8);  // slot 95: page 2, record 31
  EXPECT_EQ(cache.bytes, want);
  // decodeKvRow reads the same bytes back.
  EXPECT_EQ(
      decodeKvRow(cache, 33),
      decodeKvRecord(kTiny, encodeKvRecord(kTiny, std::vector<float>(k.begin(), k.begin() + 128))));
}

TEST(InsertKv, PadSlotLeavesCacheUntouched) {
  KvCache cache = makeKvCache(kReal, 2);
  std::fill(cache.bytes.begin(), cache.bytes.end(), uint8_t{0x5A});
  const std::vector<uint8_t> before = cache.bytes;
  insertKv(cache, bf16Values(2 * 512, 3u), 2, {-1, -1});
  EXPECT_EQ(cache.bytes, before);
}

TEST(InsertKv, OutOfRangeSlotThrowsAndWritesNothing) {
  KvCache cache = makeKvCache(kTiny, 2);
  const std::vector<uint8_t> before = cache.bytes;
  const std::vector<float> k = bf16Values(2 * 128, 5u);
  EXPECT_THROW(insertKv(cache, k, 2, {3, 64}), std::invalid_argument);  // 2 pages = slots 0..63
  EXPECT_THROW(insertKv(cache, k, 2, {3, -2}), std::invalid_argument);
  EXPECT_EQ(cache.bytes, before);  // slot 3 was valid but not written either
  EXPECT_THROW(insertKv(cache, k, 2, {3}), std::invalid_argument);
  EXPECT_THROW(decodeKvRow(cache, 64), std::invalid_argument);
  EXPECT_THROW(decodeKvRow(cache, -1), std::invalid_argument);
}

// ---------------------------------------------------------------- key lists

TEST(KeyLists, WindowSlotsFollowTheBlockTable) {
  EXPECT_EQ(windowKeySlots(3, {7}), (std::vector<int>{224, 225, 226, 227}));
  // p = 200: positions 73..200; 73 is page 2 (block 9) index 9, 200 is page 6
  // (block 4) index 8.
  const std::vector<int> table = {5, 2, 9, 1, 0, 3, 4};
  const std::vector<int> slots = windowKeySlots(200, table);
  ASSERT_EQ(slots.size(), 128u);
  EXPECT_EQ(slots.front(), 9 * 32 + 9);
  EXPECT_EQ(slots[96 - 73], 1 * 32 + 0);  // position 96: page 3 -> block 1
  EXPECT_EQ(slots.back(), 4 * 32 + 8);
  EXPECT_THROW(windowKeySlots(224, table), std::invalid_argument);
}

TEST(KeyLists, CompressedRows) {
  EXPECT_EQ(compressedKeyCount(0, 2), 0);
  EXPECT_EQ(compressedKeyCount(1, 2), 1);
  EXPECT_EQ(compressedKeyCount(100, 1), 101);
  EXPECT_EQ(compressedKeyCount(5000, 2), 512);
  EXPECT_EQ(compressedKeyCount(5000, 0), 0);
  // Rows 3, -1, 70 through block table {4, 0, 2} with pages of 32.
  EXPECT_EQ(compressedKeySlots({3, -1, 70, 11}, 3, {4, 0, 2}, 32),
            (std::vector<int>{4 * 32 + 3, -1, 2 * 32 + 6}));
  EXPECT_THROW(compressedKeySlots({3}, 2, {4}, 32), std::invalid_argument);
}

// ---------------------------------------------------------------- softmax . V

// A tiny key whose nope dims are exact in its record (group amax 2: e = -7,
// every value times 128 an e4m3 integer) and whose rope dims are bf16.
std::vector<float> exactTinyKey(int variant) {
  std::vector<float> k(128);
  for (int d = 0; d < 64; ++d)
    k[d] = float((d + variant) % 8 + 1) * 0.25f * ((d % 3) ? 1.0f : -1.0f);
  for (int d = 64; d < 128; ++d) k[d] = float((d + variant) % 5 - 2) * 0.5f;
  return k;
}

TEST(Attention, SingleKeyIsWeightedBySigmoidOfScoreMinusSink) {
  KvCache window = makeKvCache(kTiny, 1);
  const std::vector<float> k = exactTinyKey(0);
  insertKv(window, k, 1, {5});
  const std::vector<double> decoded = decodeKvRow(window, 5);
  ASSERT_EQ(decoded, std::vector<double>(k.begin(), k.end()));
  // Head 0: q = e_0, so s = k[0] / sqrt(128); head 1: a bf16 pattern.
  std::vector<float> q(2 * 128, 0.0f);
  q[0] = 1.0f;
  const std::vector<float> pattern = bf16Values(128, 9u);
  std::copy(pattern.begin(), pattern.end(), q.begin() + 128);
  const std::vector<float> sinks = {0.5f, -1.25f};
  const std::vector<std::vector<double>> keys = gatherKeys(window, nullptr, {{-1, 5, -1}, {}});
  ASSERT_EQ(keys.size(), 1u);
  const std::vector<double> o = attentionOnePass(q, sinks, 2, keys);
  for (int h = 0; h < 2; ++h) {
    double s = 0.0;
    for (int d = 0; d < 128; ++d) s += double(q[h * 128 + d]) * k[d];
    s /= std::sqrt(128.0);
    const double weight = 1.0 / (1.0 + std::exp(sinks[h] - s));
    for (int d = 0; d < 128; ++d)
      ASSERT_NEAR(o[h * 128 + d], k[d] * weight, 1e-15) << h << " " << d;
  }
}

TEST(Attention, MinusInfinitySinkDropsOut) {
  KvCache window = makeKvCache(kTiny, 1);
  // Variant 8 has k0's nope dims (they repeat every 8) but other rope dims.
  const std::vector<float> k0 = exactTinyKey(0), k1 = exactTinyKey(8);
  ASSERT_NE(k0, k1);
  std::vector<float> rows = k0;
  rows.insert(rows.end(), k1.begin(), k1.end());
  insertKv(window, rows, 2, {0, 1});
  std::vector<float> q(128, 0.0f);
  q[0] = 2.0f;  // dim 0 is equal in both keys: equal scores
  // One key alone: o = k exactly.
  const std::vector<double> one =
      attentionOnePass(q, {-kInfF}, 1, gatherKeys(window, nullptr, {{0}, {}}));
  EXPECT_EQ(one, std::vector<double>(k0.begin(), k0.end()));
  // Two keys of equal score: their mean, exactly.
  const std::vector<double> two =
      attentionOnePass(q, {-kInfF}, 1, gatherKeys(window, nullptr, {{0, 1}, {}}));
  for (int d = 0; d < 128; ++d) EXPECT_EQ(two[d], (double(k0[d]) + k1[d]) / 2) << d;
}

TEST(Attention, NoKeysGivesZero) {
  KvCache window = makeKvCache(kTiny, 1);
  const std::vector<float> q = bf16Values(2 * 128, 4u);
  const auto keys = gatherKeys(window, nullptr, {{-1, -1}, {-1}});
  EXPECT_TRUE(keys.empty());
  EXPECT_EQ(attentionOnePass(q, {0.0f, 3.0f}, 2, keys), std::vector<double>(256, 0.0));
  EXPECT_EQ(attentionOnePass(q, {-kInfF, 3.0f}, 2, keys), std::vector<double>(256, 0.0));
  EXPECT_EQ(combineChunks({attentionChunk(q, 2, keys, 0, 0)}, {-kInfF, 3.0f}, 2, 128),
            std::vector<double>(256, 0.0));
}

// o through chunks of `chunk` keys (the last one short), then combined.
std::vector<double> chunked(const std::vector<float>& q, const std::vector<float>& sinks, int heads,
                            const std::vector<std::vector<double>>& keys, size_t chunk) {
  std::vector<SplitKPartial> parts;
  for (size_t b = 0; b < keys.size(); b += chunk)
    parts.push_back(attentionChunk(q, heads, keys, b, std::min(keys.size(), b + chunk)));
  parts.push_back(attentionChunk(q, heads, keys, keys.size(), keys.size()));  // an empty chunk
  return combineChunks(parts, sinks, heads, static_cast<int>(q.size()) / heads);
}

TEST(Attention, ChunkedEqualsOnePass) {
  // 300 real-config keys: 172 compressed rows and 128 window rows.
  KvCache window = makeKvCache(kReal, 4), compressed = makeKvCache(kReal, 6);
  std::vector<int> windowSlots, compressedSlots;
  for (int i = 0; i < 128; ++i) windowSlots.push_back(i);
  for (int i = 0; i < 172; ++i) compressedSlots.push_back(i);
  insertKv(window, bf16Values(128 * 512, 21u, 3.0f), 128, windowSlots);
  insertKv(compressed, bf16Values(172 * 512, 22u, 3.0f), 172, compressedSlots);
  compressedSlots[17] = -1;
  const auto keys = gatherKeys(window, &compressed, {windowSlots, compressedSlots});
  ASSERT_EQ(keys.size(), 299u);
  const int heads = 4;
  const std::vector<float> q = bf16Values(heads * 512, 23u, 2.0f);
  for (const std::vector<float>& sinks :
       {std::vector<float>{0.0f, 4.0f, -3.0f, 60.0f}, std::vector<float>(4, -kInfF)}) {
    const std::vector<double> want = attentionOnePass(q, sinks, heads, keys);
    for (size_t chunk : {size_t(1), size_t(64), size_t(100), size_t(128), size_t(1000)}) {
      const std::vector<double> got = chunked(q, sinks, heads, keys, chunk);
      EXPECT_LE(maxAbsDiff(got, want), 1e-12 * maxAbs(want)) << "chunk " << chunk;
    }
  }
}

// ---------------------------------------------------------------- inverse RoPE

TEST(InverseRope, UndoesKeyRope) {
  const std::vector<float> cosSin = cosSinTable(1024, 64);
  const std::vector<float> k = bf16Values(3 * 128, 31u, 8.0f);
  const std::vector<float> positions = {0.0f, 17.0f, 1000.0f};
  const std::vector<float> rotated = keyRope(k, positions, cosSin, 3, 128, 64);
  for (int r = 0; r < 3; ++r) {
    const std::vector<float> row(rotated.begin() + r * 128, rotated.begin() + r * 128 + 128);
    const std::vector<float> back = inverseRope(row, 1, 128, 64, cosSin, int(positions[r]));
    for (int d = 0; d < 64; ++d) ASSERT_EQ(back[d], k[r * 128 + d]);  // nope dims untouched
    for (int j = 0; j < 32; ++j) {
      // keyRope rounds each component to bf16 (relative 2^-9); the rotation
      // back keeps that error's length: within 2^-8 of the pair's length.
      const double e = k[r * 128 + 64 + 2 * j], o = k[r * 128 + 65 + 2 * j];
      const double bound = 0x1p-8 * std::hypot(e, o);
      EXPECT_LE(std::fabs(back[64 + 2 * j] - e), bound) << r << " " << j;
      EXPECT_LE(std::fabs(back[65 + 2 * j] - o), bound) << r << " " << j;
    }
  }
  // Position 0 is the identity both ways, and p = 17 really rotates.
  EXPECT_EQ(inverseRope(std::vector<float>(k.begin(), k.begin() + 128), 1, 128, 64, cosSin, 0),
            std::vector<float>(k.begin(), k.begin() + 128));
  EXPECT_NE(std::vector<float>(rotated.begin() + 128, rotated.begin() + 256),
            std::vector<float>(k.begin() + 128, k.begin() + 256));
}

// ---------------------------------------------------------------- output side

TEST(GroupedLowRank, EachGroupUsesItsOwnRowsAndColumns) {
  // 4 heads of 128, 2 a group (width 256), group rank 32. woA row j of group 0
  // picks column j, of group 1 column 32 + j; x's values are exact in MXFP8
  // (group amax 1: code 119, values times 256 e4m3 integers).
  const int width = 256, rank = 32;
  std::vector<float> x(4 * 128, 0.0f);
  for (int g = 0; g < 2; ++g)
    for (int c = 0; c < 64; ++c) x[g * width + c] = float(c % 8 + 1) * 0.125f * (g ? -1.0f : 1.0f);
  std::vector<float> woA(2 * rank * width, 0.0f);
  for (int j = 0; j < rank; ++j) {
    woA[j * width + j] = 1.0f;
    woA[(rank + j) * width + 32 + j] = 1.0f;
  }
  const std::vector<float> z =
      groupedLowRank(x, 4, 128, 2, rank, quantizeBlockE4m3(woA, 2 * rank, width));
  ASSERT_EQ(z.size(), 64u);
  for (int j = 0; j < rank; ++j) {
    EXPECT_EQ(z[j], x[j]) << j;
    EXPECT_EQ(z[rank + j], x[width + 32 + j]) << j;
  }
  // woB row i = z[i] + z[32 + i]: exact sums of the two groups.
  std::vector<float> woB(32 * 64, 0.0f);
  for (int i = 0; i < 32; ++i) woB[i * 64 + i] = woB[i * 64 + 32 + i] = 1.0f;
  const std::vector<float> partial = outputPartial(z, quantizeBlockE4m3(woB, 32, 64));
  for (int i = 0; i < 32; ++i) EXPECT_EQ(partial[i], z[i] + z[32 + i]) << i;
  EXPECT_THROW(groupedLowRank(x, 4, 128, 3, rank, quantizeBlockE4m3(woA, 2 * rank, width)),
               std::invalid_argument);
}

// A token at position 40 over window keys 0..40 (block table {2, 0}), with the
// back's weights: a 1-group tiny rank (2 heads of 128, group rank 32, hidden 64).
struct TinyBack {
  KvCache window = makeKvCache(kTiny, 3);
  TokenKeys keys;
  std::vector<float> q = bf16Values(2 * 128, 41u, 2.0f);
  std::vector<float> cosSin = cosSinTable(64, 64);
  std::vector<float> woA = bf16Values(32 * 256, 42u, 0.05f);
  std::vector<float> woB = bf16Values(64 * 32, 43u, 0.2f);
  AttentionBackWeights weights;

  TinyBack() {
    const std::vector<int> table = {2, 0};
    std::vector<int> slots;
    for (int p = 0; p <= 40; ++p) slots.push_back(windowKeySlots(p, table).back());
    insertKv(window, bf16Values(41 * 128, 44u, 4.0f), 41, slots);
    keys.windowSlots = windowKeySlots(40, table);
    weights.sinks = {0.25f, -0.5f};
    weights.headsPerGroup = 2;
    weights.groupRank = 32;
  }
  AttentionBackResult run(const std::vector<float>& a) const {
    AttentionBackWeights w = weights;
    w.woA = quantizeBlockE4m3(a, 32, 256);
    w.woB = quantizeBlockE4m3(woB, 64, 32);
    return attentionBack(q, 2, 40, cosSin, window, nullptr, keys, w);
  }
};

TEST(AttentionBack, OneWoABlockScaleOff3PercentFails) {
  TinyBack back;
  const AttentionBackResult want = back.run(back.woA);
  ASSERT_EQ(want.partial.size(), 64u);
  // Block (0, 0) of woA (one of the 8 blocks of the group's one block row)
  // with its scale 3% off: its values 3% larger, requantized.
  std::vector<float> off = back.woA;
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) off[i * 256 + j] *= 1.03f;
  EXPECT_FALSE(withinStageBounds(compare(back.run(off).partial, want.partial)));
  // The unperturbed back through split-K chunks passes the same bound.
  const auto keys = gatherKeys(back.window, nullptr, back.keys);
  const std::vector<double> o = chunked(back.q, back.weights.sinks, 2, keys, 16);
  std::vector<float> ob;
  for (double v : o) ob.push_back(roundDoubleToBf16(v));
  EXPECT_EQ(ob, want.o);
  const std::vector<float> z = groupedLowRank(inverseRope(ob, 2, 128, 64, back.cosSin, 40), 2, 128,
                                              2, 32, quantizeBlockE4m3(back.woA, 32, 256));
  EXPECT_TRUE(withinStageBounds(
      compare(outputPartial(z, quantizeBlockE4m3(back.woB, 64, 32)), want.partial)));
}

TEST(AttentionBack, RealHeadDimsRun) {
  // 8 heads of 448 + 64 in one group of rank 1024; ratio-2 layer at p = 300:
  // 128 window keys and min(301 / 2, 512) = 150 compressed rows, 3 masked.
  const int heads = 8, position = 300;
  KvCache window = makeKvCache(kReal, 10), compressed = makeKvCache(kReal, 5);
  std::vector<int> table(10);
  for (int i = 0; i < 10; ++i) table[i] = 9 - i;
  std::vector<int> all;
  for (int p = 0; p <= position; ++p) all.push_back(windowKeySlots(p, table).back());
  insertKv(window, bf16Values(all.size() * 512, 51u, 2.0f), int(all.size()), all);
  std::vector<int> rows(160);
  for (int i = 0; i < 160; ++i) rows[i] = i;
  insertKv(compressed, bf16Values(160 * 512, 52u, 2.0f), 160, rows);
  std::vector<int> topk(512, -1);
  for (int i = 0; i < 150; ++i) topk[i] = (i * 37) % 150;
  topk[3] = topk[70] = topk[149] = -1;
  const int n = compressedKeyCount(position, 2);
  ASSERT_EQ(n, 150);
  const TokenKeys keys{windowKeySlots(position, table),
                       compressedKeySlots(topk, n, {0, 1, 2, 3, 4}, 32)};
  EXPECT_EQ(gatherKeys(window, &compressed, keys).size(), 128u + 147u);

  AttentionBackWeights w;
  w.sinks = bf16Values(heads, 53u, 2.0f);
  w.headsPerGroup = 8;
  w.groupRank = 1024;
  w.woA = quantizeBlockE4m3(bf16Values(1024 * 4096, 54u, 0.02f), 1024, 4096);
  w.woB = quantizeBlockE4m3(bf16Values(256 * 1024, 55u, 0.05f), 256, 1024);
  const AttentionBackResult r = attentionBack(bf16Values(heads * 512, 56u), heads, position,
                                              cosSinTable(512, 64), window, &compressed, keys, w);
  EXPECT_EQ(r.o.size(), size_t(heads) * 512);
  EXPECT_EQ(r.z.size(), 1024u);
  ASSERT_EQ(r.partial.size(), 256u);
  for (float v : r.partial) ASSERT_TRUE(std::isfinite(v));
  for (float v : r.o) ASSERT_EQ(v, formats::roundToBf16(v));                    // o is bf16
  EXPECT_GT(compare(std::vector<float>(256, 0.0f), r.partial).maxAbsRef, 0.0);  // not all zero
}

}  // namespace
}  // namespace monodc::reference
