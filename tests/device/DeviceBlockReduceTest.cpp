// The device library's block reduction (mono_block_reduce), run as one block
// of host threads (HostArch.h, which has warp shuffles, so the shuffle path
// runs: 32 lanes as CUDA's, or built as DeviceBlockReduceWave64Test with
// MONO_HOST_WARP=64, 64 as the AMD layer's), against the fixed tree the
// simulator follows, written out here: entry tid + w into entry tid for
// w = 128 down to 1. Bit for bit, for the launches' shapes and for values
// that tell orders apart (signed zeros, infinities, NaN, magnitudes far
// apart).
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "RandomValues.h"

// clang-format off
#include "prelude.h"
#include "monodc/device/gemv_shape.h"
#include "monodc/device/epoch_shape.h"
#include "HostArch.h"
#include "generic.h"
// clang-format on

namespace {

float combine(int kind, float a, float b) {
  if (kind == 0)
    return a + b;
  return a > b ? a : (b == b ? b : a);  // mono_fmax: a NaN loses to a number
}

/// The tree over MONO_BLOCK entries, each thread's slots folded in first.
float treeReduce(const std::vector<float> &values, int slots, int kind) {
  const float identity = kind == 0 ? 0.0f : -std::numeric_limits<float>::infinity();
  std::array<float, MONO_BLOCK> entry;
  for (int tid = 0; tid < MONO_BLOCK; ++tid) {
    float acc = identity;
    for (int s = 0; s < slots; ++s) {
      const size_t i = size_t(s) * MONO_BLOCK + tid;
      if (i < values.size())
        acc = combine(kind, acc, kind == 2 ? std::fabs(values[i]) : values[i]);
    }
    entry[tid] = acc;
  }
  for (int w = MONO_BLOCK / 2; w > 0; w >>= 1)
    for (int tid = 0; tid < w; ++tid)
      entry[tid] = combine(kind, entry[tid], entry[tid + w]);
  return entry[0];
}

/// mono_block_reduce<S, N, KIND> over `values` on one block; every thread's
/// result, which must all be the same.
template <int S, int N, int KIND>
std::vector<float> deviceReduce(const std::vector<float> &values) {
  std::vector<float> lds(MONO_BLOCK), results(MONO_BLOCK);
  host_arch::runBlock([&] {
    const int tid = mono_tid();
    float x[S];
    for (int s = 0; s < S; ++s)
      x[s] = s * MONO_BLOCK + tid < N ? values[s * MONO_BLOCK + tid] : 12345.0f;  // unread
    results[tid] = mono_block_reduce<S, N, KIND>(x, lds.data());
  });
  return results;
}

template <int S, int N, int KIND>
void expectSameBits(const std::vector<float> &values, const char *what) {
  const float expected = treeReduce(values, S, KIND);
  const std::vector<float> got = deviceReduce<S, N, KIND>(values);
  for (int tid = 0; tid < MONO_BLOCK; ++tid)
    ASSERT_EQ(std::bit_cast<uint32_t>(got[tid]), std::bit_cast<uint32_t>(expected))
        << what << ": S " << S << " N " << N << " kind " << KIND << ", thread " << tid << " got "
        << got[tid] << ", the tree " << expected;
}

template <int S, int N>
void everyKind(std::mt19937 &rng) {
  for (bool special : {false, true}) {
    const std::vector<float> v = randomValues(N, rng, 30, special ? 10 : 0);
    const char *what = special ? "with specials" : "finite";
    expectSameBits<S, N, 0>(v, what);
    expectSameBits<S, N, 1>(v, what);
    expectSameBits<S, N, 2>(v, what);
  }
}

// The launches' shapes (back.combine's 2 and 8, the seam's 5, the router's
// 6, norms of 512 to 5120) and the edges of the one-warp path at either
// width (32, 33, 64 and 65 values in one slot; a second slot).
template <int... N>
void oneSlot(std::mt19937 &rng) {
  (everyKind<1, N>(rng), ...);
}

TEST(DeviceBlockReduce, IsTheFixedTreeBitForBit) {
  std::mt19937 rng(11);
  oneSlot<2, 5, 6, 8, 32, 33, 64, 65, 256>(rng);
  everyKind<2, 300>(rng);
  everyKind<2, 512>(rng);
  everyKind<4, 1024>(rng);
  everyKind<20, 5120>(rng);
}

// Values whose order shows: a negative zero alone (the tree's identity
// rounds give +0), a NaN among numbers (max drops it), and a sum whose
// rounding depends on the pairing.
TEST(DeviceBlockReduce, KeepsTheTreesEdgeCases) {
  expectSameBits<1, 2, 0>({-0.0f, -0.0f}, "two negative zeros");
  EXPECT_EQ(std::bit_cast<uint32_t>(deviceReduce<1, 2, 0>({-0.0f, -0.0f})[0]), 0u);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expectSameBits<1, 8, 1>({nan, 1.0f, nan, -2.0f, nan, nan, nan, nan}, "NaNs among numbers");
  expectSameBits<1, 8, 1>({nan, nan, nan, nan, nan, nan, nan, nan}, "NaNs alone");
  std::vector<float> pairing(64, 1.0f);
  pairing[0] = 1e8f;
  pairing[16] = -1e8f;
  expectSameBits<1, 32, 0>(std::vector<float>(pairing.begin(), pairing.begin() + 32),
                           "cancelling pair");
  pairing[32] = -1e8f;
  pairing[16] = 1.0f;
  expectSameBits<1, 64, 0>(pairing, "cancelling pair across half waves");
}

// The comparison sees a different order: a left-to-right sum of the same
// values is not the tree's for these.
TEST(DeviceBlockReduce, AnotherOrderIsCaught) {
  std::vector<float> v(8);
  for (int i = 0; i < 8; ++i)
    v[i] = i % 2 ? 1.0f : 1e8f * (i % 4 ? -1.0f : 1.0f);
  float serial = 0.0f;
  for (float x : v)
    serial += x;
  const std::vector<float> got = deviceReduce<1, 8, 0>(v);
  EXPECT_NE(std::bit_cast<uint32_t>(serial), std::bit_cast<uint32_t>(got[0]));
  EXPECT_EQ(std::bit_cast<uint32_t>(treeReduce(v, 1, 0)), std::bit_cast<uint32_t>(got[0]));
}

} // namespace
