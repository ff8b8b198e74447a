// The device library's split-K attention over one chunk of cached keys
// (mono_attend_chunk), run as one block of host threads (HostArch.h), against
// the CPU reference's chunk state (reference::attentionChunk) on keys written
// into fp8_ds_mla records by the reference: the DSV41 record (448 e4m3 dims
// in 64-dim groups, 64 bf16 rope dims), 8 heads, 64 key slots over two
// pages with masked (-1) slots. The device keeps f32 (fused multiply-adds,
// online rescale every 8 keys); the reference sums in double in one pass.
// The matrix-core forms take the chunk as one batch (attend_batch.h): sm_90's
// warp mma (attend_mma.h) and, built with 64-lane waves
// (DeviceAttendChunkWave64Test), gfx950's bf16 MFMA (attend_mfma.h) on its
// lane-exact host model.
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Attention.h"

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
#include "monodc/device/attend_shape.h"
#include "HostArch.h"
#include "generic.h"
#include "attend_batch.h"
#include "attend_mma.h"
#include "attend_mfma.h"
// clang-format on

namespace ref = monodc::reference;
namespace fmts = monodc::formats;

namespace {

constexpr int kHeads = 8, kNope = 448, kRope = 64, kDim = kNope + kRope, kKeys = 64,
              kBatch = 8, kPageTokens = 32, kPages = 4;
constexpr int kDataBytes = kNope + 2 * kRope;
// Threads a (head, key) score is split over: the block divided by heads x
// the batch, as mono.attend_chunk's scoreParts gives it for these sizes.
constexpr int kParts = MONO_BLOCK / (kHeads * kBatch);

struct Chunk {
  std::vector<float> m, l, p;
};

enum class Path { Fma, Mma, Mfma };

/// The matrix-core paths this build runs (the MFMA one needs 64-lane waves).
#if MONO_HOST_WARP == 64
constexpr Path kMatrixPaths[] = {Path::Mma, Path::Mfma};
#else
constexpr Path kMatrixPaths[] = {Path::Mma};
#endif

/// mono_attend_chunk (Fma), mono_attend_chunk_mma (Mma, the tensor-core
/// path: HostArch's mono_mma_bf16 sums exactly, then rounds once) or
/// mono_attend_chunk_mfma (Mfma, on HostMfma.h's model) for the first H
/// query heads on one block of host threads.
template <Path P, int H>
Chunk deviceChunkOf(const std::vector<uint16_t> &q, const ref::KvCache &cache,
                    const std::vector<int> &slots) {
  constexpr int SS = (kKeys + MONO_BLOCK - 1) / MONO_BLOCK, SH = 1,
                SP = (H * kDim + MONO_BLOCK - 1) / MONO_BLOCK;
  // Key and query rows of kDim + kParts words (mono_attend_word).
  std::vector<float> lds(P == Path::Mma    ? mono_attend_mma_shared_bytes(kDim, kKeys, MONO_BLOCK) / 4
                         : P == Path::Mfma ? mono_attend_mfma_shared_bytes(kDim, kKeys, MONO_BLOCK) / 4
                                           : kKeys + (kBatch + H) * (kDim + kParts) +
                                                 H * kBatch * kParts + 3 * H);
  const float scale = static_cast<float>(1.4426950408889634 / std::sqrt(double(kDim)));
  Chunk out{std::vector<float>(H), std::vector<float>(H), std::vector<float>(H * kDim)};
  host_arch::runBlock([&] {
    const int tid = mono_tid();
    float slotTile[SS], m[SH], l[SH], p[SP];
    for (int s = 0; s < SS; ++s)
      slotTile[s] = s * MONO_BLOCK + tid < kKeys ? float(slots[s * MONO_BLOCK + tid]) : -1.0f;
    if constexpr (P == Path::Mma)
      mono_attend_chunk_mma<H, kDim, kNope, kKeys, kPageTokens, kDataBytes, SS, SH, SP>(
          q.data(), cache.bytes.data(), cache.layout.pageBytes(), scale, slotTile, m, l, p,
          lds.data());
#if MONO_HOST_WARP == 64
    else if constexpr (P == Path::Mfma)
      mono_attend_chunk_mfma<H, kDim, kNope, kKeys, kPageTokens, kDataBytes, SS, SH, SP>(
          q.data(), cache.bytes.data(), cache.layout.pageBytes(), scale, slotTile, m, l, p,
          lds.data());
#endif
    else
      mono_attend_chunk<H, kDim, kNope, kKeys, kBatch, kPageTokens, kDataBytes, SS, SH, SP,
                        kParts>(q.data(), cache.bytes.data(), cache.layout.pageBytes(), scale,
                                slotTile, m, l, p, lds.data());
    if (tid < H) {
      out.m[tid] = m[0];
      out.l[tid] = l[0];
    }
    for (int s = 0; s < SP; ++s)
      if (s * MONO_BLOCK + tid < H * kDim)
        out.p[s * MONO_BLOCK + tid] = p[s];
  });
  return out;
}

/// All kHeads heads on the path chosen at run time.
Chunk deviceChunk(const std::vector<uint16_t> &q, const ref::KvCache &cache,
                  const std::vector<int> &slots, Path path = Path::Fma) {
  switch (path) {
  case Path::Mma:
    return deviceChunkOf<Path::Mma, kHeads>(q, cache, slots);
  case Path::Mfma:
    return deviceChunkOf<Path::Mfma, kHeads>(q, cache, slots);
  case Path::Fma:
    break;
  }
  return deviceChunkOf<Path::Fma, kHeads>(q, cache, slots);
}

struct Case {
  std::vector<uint16_t> qBits;
  std::vector<float> q;  // the same bf16 values
  ref::KvCache cache;
  std::vector<int> slots;
};

/// Random bf16 queries, random keys in every slot of the cache, and a slot
/// list over two pages with every seventh slot masked.
Case makeCase(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Case c;
  for (int i = 0; i < kHeads * kDim; ++i) {
    c.qBits.push_back(fmts::bf16Bits(u(rng)));
    c.q.push_back(fmts::bf16Value(c.qBits.back()));
  }
  ref::KvRecordLayout layout;
  c.cache = ref::makeKvCache(layout, kPages);
  const int rows = kPages * kPageTokens;
  std::vector<float> k(size_t(rows) * kDim);
  for (size_t i = 0; i < k.size(); ++i)
    k[i] = u(rng) * (i % kDim < kNope ? float(1 + (i / kDim) % 5) : 1.0f);
  std::vector<int> all(rows);
  for (int r = 0; r < rows; ++r)
    all[r] = r;
  ref::insertKv(c.cache, k, rows, all);
  for (int i = 0; i < kKeys; ++i)
    c.slots.push_back(i % 7 == 3 ? -1 : (37 + 3 * i) % rows);
  return c;
}

/// The largest error relative to the reference's largest magnitude, over m,
/// l and p of every head.
double worstRelativeError(const Chunk &got, const Case &c) {
  std::vector<std::vector<double>> keys;
  for (int slot : c.slots)
    if (slot >= 0)
      keys.push_back(ref::decodeKvRow(c.cache, slot));
  const ref::SplitKPartial want = ref::attentionChunk(c.q, kHeads, keys, 0, keys.size());
  double worst = 0;
  auto compare = [&](const std::vector<float> &a, const std::vector<double> &b) {
    double scale = 0;
    for (double v : b)
      scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < b.size(); ++i)
      // A non-finite result fails outright: std::max would pass over a NaN.
      worst = std::isfinite(a[i]) ? std::max(worst, std::fabs(double(a[i]) - b[i]) / scale)
                                  : std::numeric_limits<double>::infinity();
  };
  compare(got.m, want.m);
  compare(got.l, want.l);
  compare(got.p, want.p);
  return worst;
}

TEST(DeviceAttendChunk, MatchesTheReferenceChunkState) {
  for (uint32_t seed : {1u, 2u}) {
    const Case c = makeCase(seed);
    EXPECT_LT(worstRelativeError(deviceChunk(c.qBits, c.cache, c.slots), c), 1e-5)
        << "seed " << seed;
  }
}

// The matrix-core paths: keys and queries are exact in bf16 and each weight
// enters as two bf16 (about 2^-17 of itself), so they keep the f32 path's
// bound; heads fewer than the instruction's columns and a chunk whose keys
// are all masked give what the f32 path gives.
TEST(DeviceAttendChunk, MatrixCoresMatchTheReferenceChunkState) {
  for (Path path : kMatrixPaths) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      const Case c = makeCase(seed);
      EXPECT_LT(worstRelativeError(deviceChunk(c.qBits, c.cache, c.slots, path), c), 1e-5)
          << "path " << int(path) << " seed " << seed;
    }
    Case masked = makeCase(4);
    masked.slots.assign(kKeys, -1);
    const Chunk none = deviceChunk(masked.qBits, masked.cache, masked.slots, path);
    for (int h = 0; h < kHeads; ++h) {
      EXPECT_EQ(none.m[h], -std::numeric_limits<float>::infinity());
      EXPECT_EQ(none.l[h], 0.0f);
    }
    for (float v : none.p)
      EXPECT_EQ(v, 0.0f);
  }
}

// A chunk whose keys are all masked (a pad row's) leaves before loading any
// key, on every path, with the state the whole computation gives (max -inf,
// sum 0, values +0); one live key, the last of the chunk, is enough to keep
// the whole computation.
TEST(DeviceAttendChunk, AnAllMaskedChunkLeavesEarlyWithTheSameState) {
  std::vector<Path> paths = {Path::Fma};
  paths.insert(paths.end(), std::begin(kMatrixPaths), std::end(kMatrixPaths));
  for (Path path : paths) {
    Case masked = makeCase(6);
    masked.slots.assign(kKeys, -1);
    const Chunk none = deviceChunk(masked.qBits, masked.cache, masked.slots, path);
    for (int h = 0; h < kHeads; ++h) {
      EXPECT_EQ(none.m[h], -std::numeric_limits<float>::infinity()) << "path " << int(path);
      EXPECT_EQ(none.l[h], 0.0f) << "path " << int(path);
    }
    for (float v : none.p)
      ASSERT_TRUE(v == 0.0f && !std::signbit(v)) << "path " << int(path) << ": " << v;

    Case last = makeCase(7);
    const int slot = last.slots[kKeys - 1] >= 0 ? last.slots[kKeys - 1] : 11;
    last.slots.assign(kKeys, -1);
    last.slots[kKeys - 1] = slot;
    EXPECT_LT(worstRelativeError(deviceChunk(last.qBits, last.cache, last.slots, path), last), 1e-5)
        << "path " << int(path);
  }
}

template <Path P>
void expectFewerHeadsGiveTheFirstHeads() {
  constexpr int kFew = 3;
  const Case c = makeCase(5);
  const Chunk few = deviceChunkOf<P, kFew>(c.qBits, c.cache, c.slots);
  // The first three heads of the 8-head chunk.
  const Chunk all = deviceChunk(c.qBits, c.cache, c.slots, P);
  for (int h = 0; h < kFew; ++h) {
    EXPECT_EQ(few.m[h], all.m[h]) << "head " << h;
    EXPECT_EQ(few.l[h], all.l[h]) << "head " << h;
  }
  for (int i = 0; i < kFew * kDim; ++i)
    ASSERT_EQ(few.p[i], all.p[i]) << "value " << i;
}

TEST(DeviceAttendChunk, MatrixCoresTakeFewerHeadsThanColumns) {
  expectFewerHeadsGiveTheFirstHeads<Path::Mma>();
#if MONO_HOST_WARP == 64
  expectFewerHeadsGiveTheFirstHeads<Path::Mfma>();
#endif
}

// The comparison can fail: one 64-dim group's scale byte one step up (the
// group's keys doubled) in one record the chunk reads is caught, on every path.
TEST(DeviceAttendChunk, OneDoubledKeyGroupIsCaught) {
  std::vector<Path> paths = {Path::Fma};
  paths.insert(paths.end(), std::begin(kMatrixPaths), std::end(kMatrixPaths));
  for (Path path : paths) {
    Case c = makeCase(1);
    const Chunk clean = deviceChunk(c.qBits, c.cache, c.slots, path);
    const int slot = c.slots[5], pageBytes = c.cache.layout.pageBytes();
    uint8_t &scaleByte = c.cache.bytes[size_t(slot / kPageTokens) * pageBytes +
                                       kPageTokens * kDataBytes + (slot % kPageTokens) * 8 + 2];
    ++scaleByte;
    const Chunk corrupted = deviceChunk(c.qBits, c.cache, c.slots, path);
    --scaleByte;  // the reference reads the intact cache
    EXPECT_LT(worstRelativeError(clean, c), 1e-5);
    EXPECT_GT(worstRelativeError(corrupted, c), 1e-3);
  }
}

} // namespace
