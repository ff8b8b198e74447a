// The routed MXFP4 experts of the `moe` launch (docs/numerics.md section 5, a8w4)
// through the fusion passes and the simulator, against the independent
// reference (reference::routedExperts) fed with the simulator's own routing
// and shared-expert output: each stage on its own input. The weights reach
// the kernel in AITER's shuffled layouts, built from plain row-major MXFP4 by
// the project's shuffle (formats/AiterShuffle.h).
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/formats/AiterShuffle.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Moe.h"
#include "monodc/stages/Launches.h"
#include "monodc/stages/Moe.h"

#include "MoeLaunchSetup.h"
#include "RandomValues.h"
#include "StageBounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace monodc;
namespace ref = monodc::reference;
namespace fmts = monodc::formats;
using monodc::testing::expectWithinBounds;
using monodc::testing::normalValues;
using monodc::testing::setBytes;

namespace {

struct RoutedInputs {
  int rows = 0, intermediate = 0;
  std::vector<float> x, gate, bias;
  ref::BlockScaledE4m3 sharedGateUp, sharedDown;
  std::vector<float> w13Dense, w2Dense;
  ref::Mxfp4Weights w13, w2;
};

RoutedInputs makeInputs(const stages::ModelConfig &c, int rows, int tp, unsigned seed) {
  std::mt19937 rng(seed);
  const int h = int(c.hidden), e = int(c.experts), shared = int(c.sharedPerRank(tp));
  RoutedInputs in;
  in.rows = rows;
  in.intermediate = int(c.routedPerRank(tp));
  in.x = normalValues(rng, size_t(rows) * h, 0.0f, 1.0f);
  for (float &v : in.x)
    v = fmts::roundToBf16(v);
  in.gate = normalValues(rng, size_t(e) * h, 0.0f, 2.0f / std::sqrt(float(h)));
  for (float &v : in.gate)
    v = fmts::roundToBf16(v);
  in.bias = normalValues(rng, e, 0.0f, 0.1f);
  in.sharedGateUp = ref::quantizeBlockE4m3(normalValues(rng, size_t(2 * shared) * h, 0.0f, 2.0f / std::sqrt(float(h))),
                                           2 * shared, h);
  in.sharedDown = ref::quantizeBlockE4m3(normalValues(rng, size_t(h) * shared, 0.0f, 1.0f / std::sqrt(float(shared))),
                                         h, shared);
  const int inter = in.intermediate;
  in.w13Dense = normalValues(rng, size_t(e) * 2 * inter * h, 0.0f, 2.0f / std::sqrt(float(h)));
  in.w2Dense = normalValues(rng, size_t(e) * h * inter, 0.0f, 1.0f / std::sqrt(float(inter)));
  in.w13 = ref::quantizeMxfp4Weights(in.w13Dense, e, 2 * inter, h);
  in.w2 = ref::quantizeMxfp4Weights(in.w2Dense, e, h, inter);
  return in;
}

/// A plain MXFP4 matrix in the kernel's layouts: packed and shuffled bytes,
/// padded and shuffled scales.
/// `shuffleBytes` false leaves the weight bytes plainly packed (a negative
/// test: the kernel must not read them back the same).
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> shuffled(const ref::Mxfp4Weights &w,
                                                               bool shuffleBytes = true) {
  const size_t rows = size_t(w.experts) * w.n;
  std::vector<uint8_t> bytes = fmts::packE2m1(w.codes, rows, w.k);
  return {shuffleBytes ? fmts::shuffleWeight(bytes, w.experts, w.n, w.k / 2) : bytes,
          fmts::shuffleScales(w.scales, rows, w.k / 32)};
}

struct RoutedOutputs {
  std::vector<float> indices, weights, shared, out;
  std::vector<float> plan; ///< routed_plan (stages::RoutedPlanRow)
  std::vector<float> down; ///< routed_down: each slot's rows
};

RoutedOutputs simulateRouted(const stages::ModelConfig &c, int tp, const RoutedInputs &in,
                             const sim::Schedule &schedule = {}, bool shuffleW13 = true) {
  auto built = monodc::testing::buildMoeLaunch("moe", c, in.rows, tp);
  if (!built)
    return {};
  sim::LaunchMemory &memory = *built->memory;
  monodc::testing::loadRouterAndShared(memory, in.x, in.gate, in.bias, in.sharedGateUp,
                                       in.sharedDown);
  auto [w13, w13s] = shuffled(in.w13, shuffleW13);
  auto [w2, w2s] = shuffled(in.w2);
  setBytes(memory, "w13", w13);
  setBytes(memory, "w13_scale", w13s);
  setBytes(memory, "w2", w2);
  setBytes(memory, "w2_scale", w2s);
  auto run = sim::simulate(built->launch, memory, schedule);
  EXPECT_TRUE(succeeded(run) && !run->deadlock);
  return {memory.values("topk_indices"), memory.values("topk_weights"),
          memory.values("shared_out"), memory.values("moe_out"), memory.values("routed_plan"),
          memory.values("routed_down")};
}

/// The reference on the simulator's own routing and shared output.
std::vector<float> referenceRouted(const stages::ModelConfig &c, const RoutedInputs &in,
                                   const RoutedOutputs &got) {
  ref::Routing routing;
  for (float i : got.indices)
    routing.indices.push_back(int(i));
  routing.weights = got.weights;
  routing.nearTie.assign(in.rows, false);
  return ref::routedExperts(in.x, in.rows, routing, in.w13, in.w2, got.shared, c.swigluLimit);
}

/// The routed part alone (out - shared) must matter, or the bound would pass
/// with the experts ignored.
double routedShare(const RoutedOutputs &got) {
  double routed = 0, total = 0;
  for (size_t i = 0; i < got.out.size(); ++i) {
    routed += std::fabs(double(got.out[i]) - got.shared[i]);
    total += std::fabs(double(got.out[i]));
  }
  return routed / std::max(total, 1e-30);
}

void checkRouted(const stages::ModelConfig &c, int rows, int tp, unsigned seed) {
  SCOPED_TRACE("config " + c.name + ", rows " + std::to_string(rows) + ", TP " +
               std::to_string(tp) + ", seed " + std::to_string(seed));
  RoutedInputs in = makeInputs(c, rows, tp, seed);
  RoutedOutputs got = simulateRouted(c, tp, in);
  ASSERT_EQ(got.out.size(), size_t(rows) * c.hidden);
  EXPECT_GT(routedShare(got), 0.2) << "the routed experts barely change the output";
  expectWithinBounds(got.out, referenceRouted(c, in, got), "moe_out");
}

} // namespace

TEST(RoutedExpertsNumerics, TinyManySeedsAndWidths) {
  for (int tp : {2, 4})
    for (int rows : {1, 6, 48})
      checkRouted(stages::tinyConfig(), rows, tp, 7919u * rows + tp);
}

TEST(RoutedExpertsNumerics, Dsv41DimsRows1) {
  // The real H and routed intermediate (TP4: 576 padded to 640) and top-6,
  // with 16 experts instead of 384: one rank's real w13 alone is 1.3 GB, and
  // the expert count changes no expert's arithmetic.
  stages::ModelConfig c = stages::dsv41Config();
  c.experts = 16;
  checkRouted(c, 1, 4, 2026u);
}

TEST(RoutedExpertsNumerics, OneExpertScaleOff3PercentFails) {
  // One routed scale off by 3%: the first 32 k-values of one w13 row of an
  // expert the first token uses, scaled by 1.03 and requantized.
  const auto c = stages::tinyConfig();
  RoutedInputs in = makeInputs(c, 6, 2, 31u);
  RoutedOutputs first = simulateRouted(c, 2, in);
  std::vector<float> want = referenceRouted(c, in, first);
  RoutedInputs off = in;
  const int expert = int(first.indices[0]), h = int(c.hidden);
  for (int row = 0; row < 2 * off.intermediate; ++row)
    for (int k = 0; k < h; ++k)
      off.w13Dense[(size_t(expert) * 2 * off.intermediate + row) * h + k] *= 1.03f;
  off.w13 = ref::quantizeMxfp4Weights(off.w13Dense, int(c.experts), 2 * off.intermediate, h);
  RoutedOutputs got = simulateRouted(c, 2, off);
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(got.out, want)));
}

TEST(RoutedExpertsNumerics, UnshuffledWeightsAreCaught) {
  // The kernel reads AITER's layout: handing it the plain packed bytes must
  // not pass for the same result.
  const auto c = stages::tinyConfig();
  RoutedInputs in = makeInputs(c, 6, 2, 37u);
  RoutedOutputs good = simulateRouted(c, 2, in);
  RoutedOutputs plain = simulateRouted(c, 2, in, {}, /*shuffleW13=*/false);
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(plain.out, good.out)));
}

TEST(RoutedExpertsNumerics, PlanSortsPairsByExpertStablyAndCutsSlots) {
  // rows 48 of tiny: 288 (token, k) pairs on 32 experts, so experts repeat,
  // the order within one expert matters and runs are longer than a slot.
  // The plan must be a stable sort of the pairs by expert; its slots the
  // runs of that order cut every kRoutedGroup places (expert, first place,
  // count; -1, pairs, 0 past the last); and each pair's row its slot's
  // first row plus its offset in the slot (routed.combine finds the pair's
  // d there). Checked against a walk written here.
  const auto c = stages::tinyConfig();
  const int rows = 48, pairs = rows * int(c.topK), group = int(stages::kRoutedGroup);
  RoutedInputs in = makeInputs(c, rows, 2, 53u);
  RoutedOutputs got = simulateRouted(c, 2, in);
  ASSERT_EQ(got.plan.size(), size_t(stages::kPlanRows * pairs));
  auto plan = [&](int row, int col) { return got.plan[size_t(row) * pairs + col]; };
  std::vector<int> order(pairs);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return got.indices[a] < got.indices[b]; });
  int repeated = 0, slot = -1, inSlot = 0, longRuns = 0;
  std::vector<float> slotExpert(pairs, -1.0f), slotFirst(pairs, float(pairs)),
      slotCount(pairs, 0.0f), pairRow(pairs, -1.0f);
  for (int q = 0; q < pairs; ++q) {
    EXPECT_EQ(plan(stages::kPlanPairAtPlace, q), float(order[q])) << "place " << q;
    const bool sameExpert = q > 0 && got.indices[order[q]] == got.indices[order[q - 1]];
    repeated += sameExpert;
    if (!sameExpert || inSlot == group) {
      longRuns += sameExpert;
      ++slot;
      inSlot = 0;
      slotExpert[slot] = got.indices[order[q]];
      slotFirst[slot] = float(q);
    }
    slotCount[slot] += 1.0f;
    pairRow[order[q]] = float(slot * group + inSlot++);
  }
  for (int s = 0; s < pairs; ++s) {
    EXPECT_EQ(plan(stages::kPlanSlotExpert, s), slotExpert[s]) << "slot " << s;
    EXPECT_EQ(plan(stages::kPlanSlotFirst, s), slotFirst[s]) << "slot " << s;
    EXPECT_EQ(plan(stages::kPlanSlotCount, s), slotCount[s]) << "slot " << s;
    EXPECT_EQ(plan(stages::kPlanPairRow, s), pairRow[s]) << "pair " << s;
  }
  EXPECT_GT(repeated, pairs / 2) << "too few pairs share an expert to test the order";
  EXPECT_GT(longRuns, 0) << "no expert has more pairs than a slot";
}

TEST(RoutedExpertsNumerics, CombineSumsInF32InPickOrder) {
  // routed.combine against the reference's combine fed with the simulator's
  // own expert outputs (routed_down at each pair's plan row) and weights: bit
  // for bit, and the inputs must tell the pinned sum (f32, one rounding)
  // from the bf16 chain it replaced.
  const auto c = stages::tinyConfig();
  const int rows = 48, k = int(c.topK), pairs = rows * k, h = int(c.hidden);
  RoutedInputs in = makeInputs(c, rows, 2, 61u);
  RoutedOutputs got = simulateRouted(c, 2, in);
  ASSERT_EQ(got.out.size(), size_t(rows) * h);
  std::vector<float> downs(size_t(pairs) * h);
  for (int p = 0; p < pairs; ++p) {
    const size_t row = size_t(got.plan[size_t(stages::kPlanPairRow) * pairs + p]);
    std::copy_n(got.down.begin() + row * h, h, downs.begin() + size_t(p) * h);
  }
  ref::Routing routing;
  for (float i : got.indices)
    routing.indices.push_back(int(i));
  routing.weights = got.weights;
  const std::vector<float> want =
      ref::combineRoutedExperts(downs, rows, h, routing, got.shared);
  int chainDiffers = 0;
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < h; ++j) {
      float chain = 0.0f;
      for (int i = 0; i < k; ++i) {
        const float o = fmts::roundToBf16(downs[size_t(r * k + i) * h + j] * got.weights[r * k + i]);
        chain = fmts::roundToBf16(chain + o);
      }
      const float previous = fmts::roundToBf16(chain + got.shared[size_t(r) * h + j]);
      chainDiffers += previous != want[size_t(r) * h + j];
    }
  ASSERT_GT(chainDiffers, 0) << "the inputs must tell the two sums apart";
  EXPECT_EQ(got.out, want) << chainDiffers << " values differ between the two sums";
}

TEST(RoutedExpertsNumerics, RowsPastASlotsCountStayUnwritten) {
  // routed.down stores only its slot's tokens: the simulator's scratch
  // starts as NaN, so every row past a slot's count must still be NaN (and
  // routed.combine, which reads d at the plan's rows, must never meet one:
  // moe_out has no NaN), and every row inside it must be a number.
  const auto c = stages::tinyConfig();
  const int rows = 48, pairs = rows * int(c.topK), group = int(stages::kRoutedGroup);
  const size_t h = size_t(c.hidden);
  RoutedInputs in = makeInputs(c, rows, 2, 59u);
  RoutedOutputs got = simulateRouted(c, 2, in);
  ASSERT_EQ(got.down.size(), size_t(pairs) * group * h);
  int written = 0, left = 0;
  for (int s = 0; s < pairs; ++s) {
    const int count = int(got.plan[size_t(stages::kPlanSlotCount) * pairs + s]);
    for (int i = 0; i < group; ++i) {
      const size_t row = size_t(s) * group + i;
      const bool past = i >= count;
      const auto first = got.down.begin() + row * h;
      const bool anyNan = std::any_of(first, first + h, [](float v) { return std::isnan(v); });
      const bool allNan = std::all_of(first, first + h, [](float v) { return std::isnan(v); });
      EXPECT_EQ(past ? allNan : !anyNan, true) << "slot " << s << " row " << i << " count " << count;
      (past ? left : written) += 1;
    }
  }
  EXPECT_EQ(written, pairs);
  EXPECT_GT(left, 0);
  EXPECT_TRUE(std::none_of(got.out.begin(), got.out.end(), [](float v) { return std::isnan(v); }));
}
