// The device library's expert slots (mono_expert_groups), run as one block of
// host threads (HostArch.h), against a serial walk over the places: the
// routed plan's sizes (36 places at rows 6, 288 at rows 48: two values a
// thread) with runs longer than a slot, one expert everywhere, every place
// its own expert, and slots of one place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
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

struct Groups {
  std::vector<float> expert, first, count, row;
  bool operator==(const Groups &) const = default;
};

/// The slots by a walk over the places: a new slot where the expert changes
/// or the current slot holds `group` places already.
Groups serialGroups(const std::vector<float> &experts, int group) {
  const int n = static_cast<int>(experts.size());
  Groups g{std::vector<float>(n, -1.0f), std::vector<float>(n, float(n)),
           std::vector<float>(n, 0.0f), std::vector<float>(n)};
  int slot = -1;
  for (int q = 0; q < n; ++q) {
    if (q == 0 || experts[q] != experts[q - 1] || g.count[slot] == float(group)) {
      ++slot;
      g.expert[slot] = experts[q];
      g.first[slot] = float(q);
    }
    g.row[q] = float(slot * group + int(g.count[slot]));
    g.count[slot] += 1.0f;
  }
  return g;
}

template <int N, int G>
Groups deviceGroups(const std::vector<float> &experts) {
  constexpr int S = (N + MONO_BLOCK - 1) / MONO_BLOCK;
  std::vector<float> lds(3 * N + 1);  // as mono-prepare-emission plans it
  Groups out{std::vector<float>(N), std::vector<float>(N), std::vector<float>(N),
             std::vector<float>(N)};
  host_arch::runBlock([&] {
    const int tid = mono_tid();
    float x[S], expert[S], first[S], count[S], row[S];
    for (int s = 0; s < S; ++s)
      x[s] = s * MONO_BLOCK + tid < N ? experts[s * MONO_BLOCK + tid] : 0.0f;
    mono_expert_groups<S, N, G>(x, expert, first, count, row, lds.data());
    for (int s = 0; s < S; ++s) {
      const int i = s * MONO_BLOCK + tid;
      if (i < N) {
        out.expert[i] = expert[s];
        out.first[i] = first[s];
        out.count[i] = count[s];
        out.row[i] = row[s];
      }
    }
  });
  return out;
}

/// Sorted experts drawn from `experts` distinct ones, with one run made
/// `longRun` places long.
std::vector<float> sortedExperts(int n, int experts, int longRun, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, experts - 1);
  std::vector<float> e(n);
  for (float &v : e)
    v = float(pick(rng));
  std::fill(e.begin(), e.begin() + std::min(longRun, n), float(pick(rng)));
  std::sort(e.begin(), e.end());
  return e;
}

TEST(DeviceExpertGroups, MatchesAWalkOverThePlaces) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const auto rows6 = sortedExperts(36, 384, 11, seed);
    EXPECT_EQ((deviceGroups<36, 8>(rows6)), serialGroups(rows6, 8)) << "seed " << seed;
    const auto rows48 = sortedExperts(288, 384, 29, seed);
    EXPECT_EQ((deviceGroups<288, 8>(rows48)), serialGroups(rows48, 8)) << "seed " << seed;
  }
}

TEST(DeviceExpertGroups, EdgeCases) {
  const std::vector<float> one(20, 7.0f);  // slots of 8, 8, 4
  const Groups g = deviceGroups<20, 8>(one);
  EXPECT_EQ(g, serialGroups(one, 8));
  EXPECT_EQ(g.count[0], 8.0f);
  EXPECT_EQ(g.count[2], 4.0f);
  EXPECT_EQ(g.count[3], 0.0f);
  EXPECT_EQ(g.expert[3], -1.0f);
  EXPECT_EQ(g.row[19], 19.0f);
  std::vector<float> distinct(40);
  for (int i = 0; i < 40; ++i)
    distinct[i] = float(3 * i);
  const Groups d = deviceGroups<40, 8>(distinct);
  EXPECT_EQ(d, serialGroups(distinct, 8));
  EXPECT_EQ(d.row[5], 40.0f);  // slot 5's first row
  const auto runs = sortedExperts(36, 4, 20, 9);
  EXPECT_EQ((deviceGroups<36, 1>(runs)), serialGroups(runs, 1));
}

// The comparison can fail: slots that do not split long runs (groups as
// large as the places) differ from slots of 8 where a run is longer.
TEST(DeviceExpertGroups, UncutRunsAreCaught) {
  const auto e = sortedExperts(36, 384, 11, 1);
  EXPECT_NE((deviceGroups<36, 36>(e)), serialGroups(e, 8));
}

} // namespace
