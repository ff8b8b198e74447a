// Pad rows (slot_mapping -1) of a padded step, through the simulator on the
// tiny config: the real rows of K1 + K2 and of the FFN launch come out bit
// for bit as from the same step without the pad rows, whatever the pad rows
// hold (NaN, huge values, key lists that point at real cache records); a pad
// row picks no routed expert (the plan has no working slot for it, so no
// expert weight is streamed for it), reads no KV cache (its attention output
// is 0) and its routing outputs say so (indices -1, weights 0).
// Negative: an unmarked garbage row adds experts to the plan, and a real row
// marked as a pad fails the layer's bounds.
#include "LayerRig.h"
#include "RandomValues.h"

#include "monodc/reference/Moe.h"
#include "monodc/stages/Moe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

using namespace monodc;
using namespace monodc::testing;

namespace {

bool isPad(const std::vector<int> &padAt, int row) {
  return std::find(padAt.begin(), padAt.end(), row) != padAt.end();
}

/// The rows of `values` ([rows][width]) that are not pad rows.
std::vector<float> realRows(const std::vector<float> &values, int rows,
                            const std::vector<int> &padAt) {
  const size_t width = values.size() / size_t(rows);
  std::vector<float> out;
  for (int r = 0; r < rows; ++r)
    if (!isPad(padAt, r))
      out.insert(out.end(), values.begin() + r * width, values.begin() + (r + 1) * width);
  return out;
}

/// Row `row` of `values` ([rows][width]).
std::vector<float> rowOf(const std::vector<float> &values, int rows, int row) {
  const size_t width = values.size() / size_t(rows);
  return {values.begin() + row * width, values.begin() + (row + 1) * width};
}

void expectRealRowsIdentical(const ref::LayerOutputs &padded, const ref::LayerOutputs &real,
                             int rows, const std::vector<int> &padAt) {
  EXPECT_EQ(realRows(padded.x, rows, padAt), real.x) << "x_out";
  EXPECT_EQ(realRows(padded.residual, rows, padAt), real.residual) << "ffn_residual_out";
  EXPECT_EQ(realRows(padded.pre, rows, padAt), real.pre) << "ffn_pre";
  EXPECT_EQ(realRows(padded.post, rows, padAt), real.post) << "ffn_post";
  EXPECT_EQ(realRows(padded.comb, rows, padAt), real.comb) << "ffn_comb";
}

/// The experts the routed plan gives work to (slots with places).
std::set<int> plannedExperts(const sim::LaunchMemory &memory) {
  const std::vector<float> plan = memory.values("routed_plan");
  const size_t pairs = plan.size() / stages::kPlanRows;
  std::set<int> experts;
  for (size_t s = 0; s < pairs; ++s)
    if (plan[stages::kPlanSlotCount * pairs + s] > 0)
      experts.insert(int(plan[stages::kPlanSlotExpert * pairs + s]));
  return experts;
}

/// The experts the routing outputs name, pad rows' -1 left out.
std::set<int> pickedExperts(const sim::LaunchMemory &memory) {
  std::set<int> experts;
  for (float e : memory.values("topk_indices"))
    if (e >= 0)
      experts.insert(int(e));
  return experts;
}

const float kNan = std::numeric_limits<float>::quiet_NaN();

} // namespace

TEST(PadRows, RealRowsOfALayerAreThoseOfTheStepWithoutThem) {
  const auto c = layerConfig();
  for (int tp : {2, 4}) {
    SCOPED_TRACE("TP " + std::to_string(tp));
    TestLayer layer(c, tp, 700u + tp);
    const ref::StepInputs real = ref::randomStep(layer.dims, 6, 701u);
    std::vector<std::shared_ptr<sim::RegionStorage>> epochs6, epochs8;
    LayerRig rig6(c, 6, tp, "k2", &epochs6);
    const ref::LayerOutputs want = simulateLayer(rig6, layer, real);
    compareLayer(layer.dims, want, layer.reference(real));
    for (float garbage : {kNan, 3e38f}) {
      SCOPED_TRACE("pad rows hold " + std::to_string(garbage));
      const std::vector<int> padAt = {1, 7};
      LayerRig rig8(c, 8, tp, "k2", &epochs8);
      // What the outputs held before the step: a pad row's per-row stages
      // (the attention combine, the all-reduces' sums) skip and leave it.
      constexpr float kBefore = 7.0f;
      for (const auto &memory : rig8.backMemory)
        for (const char *name : {"o", "x_out"})
          ASSERT_FALSE(memory->setValues(name, std::vector<float>(memory->values(name).size(),
                                                                  kBefore)));
      const ref::LayerOutputs got = simulateLayer(rig8, layer, ref::padStep(real, padAt, garbage));
      expectRealRowsIdentical(got, want, 8, padAt);

      const sim::LaunchMemory &k2 = *rig8.backMemory[0];
      const std::vector<float> indices = k2.values("topk_indices");
      const std::vector<float> weights = k2.values("topk_weights");
      for (int pad : padAt) {
        EXPECT_EQ(rowOf(indices, 8, pad), std::vector<float>(c.topK, -1.0f)) << "row " << pad;
        EXPECT_EQ(rowOf(weights, 8, pad), std::vector<float>(c.topK, 0.0f)) << "row " << pad;
      }
      for (const char *name : {"o", "x_out"}) {
        const std::vector<float> values = k2.values(name);
        const std::vector<float> untouched(values.size() / 8, kBefore);
        for (int row = 0; row < 8; ++row)
          if (std::find(padAt.begin(), padAt.end(), row) != padAt.end())
            EXPECT_EQ(rowOf(values, 8, row), untouched) << name << " of pad row " << row;
          else
            EXPECT_NE(rowOf(values, 8, row), untouched) << name << " of real row " << row;
      }
      EXPECT_EQ(plannedExperts(k2), pickedExperts(*rig6.backMemory[0]));
    }
  }
}

TEST(PadRows, RealRowsOfTheFfnLaunchAreThoseOfTheStepWithoutThem) {
  const auto c = layerConfig();
  const int tp = 2, h = int(c.hidden);
  TestLayer layer(c, tp, 710u);
  const ref::StepInputs real = ref::randomStep(layer.dims, 6, 711u);
  std::mt19937 rng(712u);
  std::vector<std::vector<float>> partials6, partials8;
  const std::vector<int> padAt = {0, 5};
  for (int r = 0; r < tp; ++r) {
    partials6.push_back(normalValues(rng, size_t(6) * h, 0.0f, 1.0f, true));
    ref::StepInputs spread = real;
    spread.x = partials6.back();
    partials8.push_back(ref::padStep(spread, padAt, kNan).x);
  }
  const ref::LayerOutputs want = simulateFfn(c, layer, 6, partials6, real);
  compareLayer(layer.dims, want,
               ref::referenceFfnHalf(layer.dims, layer.weights, layer.experts, 6, real.residual,
                                     ref::allReduce(partials6), real.post, real.comb, real.pre));
  const ref::LayerOutputs got = simulateFfn(c, layer, 8, partials8, ref::padStep(real, padAt, kNan));
  expectRealRowsIdentical(got, want, 8, padAt);
}

TEST(PadRows, AnUnmarkedGarbageRowAddsExperts) {
  // The expert check can fail: one real row and a random row that is not
  // marked route to experts the real row did not pick.
  const auto c = layerConfig();
  TestLayer layer(c, 2, 720u);
  ref::StepInputs real = ref::randomStep(layer.dims, 1, 721u);
  std::vector<std::shared_ptr<sim::RegionStorage>> epochs1, epochs2;
  LayerRig rig1(c, 1, 2, "k2", &epochs1), rig2(c, 2, 2, "k2", &epochs2);
  simulateLayer(rig1, layer, real);
  ref::StepInputs unmarked = ref::padStep(real, {1}, 0.0f, /*marked=*/false);
  std::mt19937 rng(722u);
  const std::vector<float> other = normalValues(rng, size_t(c.hidden), 0.0f, 1.0f, true);
  std::copy(other.begin(), other.end(), unmarked.x.begin() + c.hidden);
  simulateLayer(rig2, layer, unmarked);
  const std::set<int> realExperts = pickedExperts(*rig1.backMemory[0]);
  EXPECT_EQ(realExperts.size(), size_t(c.topK));
  EXPECT_GT(plannedExperts(*rig2.backMemory[0]).size(), realExperts.size());
}

TEST(PadRows, ARealRowMarkedAsPadFailsTheLayer) {
  // Row 2's slot set to -1: it inserts no key, reads none and picks no
  // expert, and its output leaves the bounds of the reference layer.
  const auto c = layerConfig();
  TestLayer layer(c, 2, 730u);
  const ref::StepInputs real = ref::randomStep(layer.dims, 6, 731u);
  ref::StepInputs marked = real;
  marked.slots[2] = -1.0f;
  std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
  LayerRig rig(c, 6, 2, "k2", &epochs);
  const ref::LayerOutputs got = simulateLayer(rig, layer, marked);
  const ref::LayerOutputs want = layer.reference(real);
  EXPECT_TRUE(ref::withinStageBounds(ref::compare(rowOf(got.x, 6, 1), rowOf(want.x, 6, 1))));
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(rowOf(got.x, 6, 2), rowOf(want.x, 6, 2))));
}
