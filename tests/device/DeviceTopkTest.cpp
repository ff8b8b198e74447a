// The device library's block top-k (mono_topk), run as one block of host
// threads (HostArch.h), against a sort: the k largest values, ties to the
// lower index, NaN last, for the router's sizes (384 experts, 32 in the tiny
// config) with ties, signed zeros, infinities and NaNs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

// clang-format off
#include "prelude.h"
#include "monodc/device/gemv_shape.h"
#include "monodc/device/epoch_shape.h"
#include "HostArch.h"
#include "generic.h"
// clang-format on

namespace {

struct TopK {
  std::vector<float> values, indices;
};

/// mono_topk over `scores` (N of them) on one block of host threads.
template <int N, int K>
TopK deviceTopK(const std::vector<float> &scores) {
  constexpr int S = (N + MONO_BLOCK - 1) / MONO_BLOCK, SK = (K + MONO_BLOCK - 1) / MONO_BLOCK;
  std::vector<float> lds(N + 2 * K);  // as mono-prepare-emission plans it
  TopK out{std::vector<float>(K), std::vector<float>(K)};
  host_arch::runBlock([&] {
    const int tid = mono_tid();
    float x[S], values[SK], indices[SK];
    for (int s = 0; s < S; ++s)
      x[s] = s * MONO_BLOCK + tid < N ? scores[s * MONO_BLOCK + tid] : 0.0f;
    mono_topk<S, N, K, SK>(x, values, indices, lds.data());
    for (int s = 0; s < SK; ++s)
      if (s * MONO_BLOCK + tid < K) {
        out.values[s * MONO_BLOCK + tid] = values[s];
        out.indices[s * MONO_BLOCK + tid] = indices[s];
      }
  });
  return out;
}

/// The k first indices in the order: non-NaN values descending, ties to the
/// lower index, NaNs last in index order. `lowerFirst` false breaks ties the
/// wrong way (for the negative test).
std::vector<int> expectedIndices(const std::vector<float> &scores, int k, bool lowerFirst = true) {
  std::vector<int> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int i, int j) {
    const float a = scores[i], b = scores[j];
    if (std::isnan(a) != std::isnan(b))
      return std::isnan(b);
    if (std::isnan(a) || a == b)
      return lowerFirst ? i < j : i > j;
    return a > b;
  });
  order.resize(k);
  return order;
}

/// Places where the device's indices differ from `expected`, or whose value
/// is not the score at that index (bit for bit).
int mismatches(const TopK &got, const std::vector<int> &expected,
               const std::vector<float> &scores) {
  int bad = 0;
  for (size_t r = 0; r < expected.size(); ++r) {
    const int index = static_cast<int>(got.indices[r]);
    const bool sameValue =
        std::bit_cast<uint32_t>(got.values[r]) == std::bit_cast<uint32_t>(scores[index]);
    bad += index != expected[r] || !sameValue;
  }
  return bad;
}

std::vector<float> randomScores(int n, uint32_t seed, int distinct) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (float &x : v)
    x = distinct > 0 ? float(rng() % distinct) : std::uniform_real_distribution<float>(-3, 3)(rng);
  return v;
}

TEST(DeviceTopk, MatchesASortOnRandomScores) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const std::vector<float> scores = randomScores(384, seed, 0);
    EXPECT_EQ(mismatches(deviceTopK<384, 6>(scores), expectedIndices(scores, 6), scores), 0)
        << "seed " << seed;
  }
  const std::vector<float> tiny = randomScores(32, 7, 0);
  EXPECT_EQ(mismatches(deviceTopK<32, 6>(tiny), expectedIndices(tiny, 6), tiny), 0);
}

TEST(DeviceTopk, TiesGoToTheLowerIndexAndNanComesLast) {
  // Many ties: four distinct values over 384 scores.
  const std::vector<float> ties = randomScores(384, 11, 4);
  EXPECT_EQ(mismatches(deviceTopK<384, 6>(ties), expectedIndices(ties, 6), ties), 0);
  // Signed zeros tie; infinities order; NaNs only after every number.
  std::vector<float> special(32, -1.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  special[3] = nan, special[4] = 0.0f, special[9] = -0.0f, special[20] = -inf;
  special[1] = nan, special[30] = inf, special[31] = 0.0f;
  EXPECT_EQ(mismatches(deviceTopK<32, 6>(special), expectedIndices(special, 6), special), 0);
  std::vector<float> mostlyNan(32, nan);
  mostlyNan[17] = -inf, mostlyNan[5] = 2.0f;
  const TopK got = deviceTopK<32, 6>(mostlyNan);
  EXPECT_EQ(mismatches(got, expectedIndices(mostlyNan, 6), mostlyNan), 0);
  EXPECT_EQ(got.indices[0], 5.0f);
  EXPECT_EQ(got.indices[1], 17.0f);
  EXPECT_EQ(got.indices[2], 0.0f);  // then the NaNs, lowest index first
}

// The routed plan's use: every place of 288 ranked (k = n) by the negated
// expert of each pair, many pairs to an expert; and the ties of the ranking
// key's extremes (the largest negative number against -infinity, the
// smallest denormals against the zeros).
TEST(DeviceTopk, RanksEveryValueWhenKIsN) {
  std::vector<float> experts = randomScores(288, 5, 40);
  for (float &e : experts)
    e = -e;
  EXPECT_EQ(mismatches(deviceTopK<288, 288>(experts), expectedIndices(experts, 288), experts), 0);
  const float lowest = std::numeric_limits<float>::lowest(),
              denorm = std::numeric_limits<float>::denorm_min(),
              inf = std::numeric_limits<float>::infinity();
  std::vector<float> edges = {-inf, lowest, -denorm, 0.0f, denorm, -0.0f, -inf, lowest,
                              denorm, -denorm, inf,   0.0f, -0.0f, inf,  1.0f, -1.0f};
  EXPECT_EQ(mismatches(deviceTopK<16, 16>(edges), expectedIndices(edges, 16), edges), 0);
}

// The comparison can fail: the same scores against ties broken to the
// higher index disagree.
TEST(DeviceTopk, AWrongTieOrderIsCaught) {
  const std::vector<float> ties = randomScores(384, 11, 4);
  EXPECT_GT(mismatches(deviceTopK<384, 6>(ties), expectedIndices(ties, 6, /*lowerFirst=*/false),
                       ties),
            0);
}

} // namespace
