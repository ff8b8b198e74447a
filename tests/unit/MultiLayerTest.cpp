// Five consecutive decoder layers of the model's layer map (18-22: K1 + K2 at
// compress ratio 2 twice, the FFN launch alone, K1 + K2 at ratio 1 twice) on
// the tiny config through the simulator, TP 2 and 4: one decode step through
// all five, each layer's streams handed to the next as a serving engine hands
// them (residual, x, post, comb, pre), every launch of a rank sharing one
// epoch buffer and each width's scratch across layers. Every layer's outputs
// at every token are checked against the CPU reference layer on the same
// inputs (docs/numerics.md section 6); the FFN-launch layer takes its
// attention half (each rank's partial) from the reference, as its attention
// runs outside the fused path. Negative: a layer fed the previous layer's
// inputs instead of its outputs fails.
#include "LayerRig.h"

#include "monodc/runtime/LayerMap.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using namespace monodc;
using namespace monodc::testing;

namespace {

constexpr int64_t kFirstLayer = 18, kLayers = 5;

/// A layer's view of a step: the step's tokens (positions, slots, window
/// block tables) and streams, with caches of its own and the compressed-key
/// inputs of its ratio.
ref::StepInputs layerStep(const ref::LayerDims &d, const ref::StepInputs &step, int64_t ratio,
                          unsigned seed) {
  std::mt19937 rng(seed);
  ref::StepInputs in = step;
  in.window = ref::randomKvCache(d.kvLayout(), d.cachePages, rng);
  in.compressed = ref::randomKvCache(d.kvLayout(), d.cachePages, rng);
  ref::randomCompressedKeys(d, in, int(ratio), rng);
  return in;
}

/// One layer of the map on the simulator: K1 + K2 of its ratio, or the
/// reference's attention half then the FFN launch.
ref::LayerOutputs simulatePlannedLayer(const runtime::LayerPlan &plan,
                                       std::map<int64_t, LayerRig> &whole, LayerRig &ffn,
                                       const TestLayer &layer, const ref::StepInputs &in) {
  if (plan.fusedWhole)
    return simulateLayer(whole.at(plan.ratio), layer, in);
  const ref::AttentionHalf attention = ref::referenceAttentionHalf(layer.dims, layer.weights, in);
  ref::StepInputs seam = in;
  seam.residual = attention.seam.residual;
  seam.post = attention.seam.post;
  seam.comb = attention.seam.comb;
  seam.pre = attention.seam.pre;
  return simulateFfn(ffn, layer, attention.partials, seam);
}

} // namespace

TEST(MultiLayer, FiveLayersOfBothKindsAgainstTheReferenceLayers) {
  const auto c = layerConfig();
  const auto layers = runtime::layerMap(c.name);
  ASSERT_TRUE(layers) << layers.message();
  const std::vector<runtime::LayerPlan> &map = *layers;
  // The stretch holds both kinds and both ratios.
  std::map<std::pair<bool, int64_t>, int> kinds;
  for (int64_t l = kFirstLayer; l < kFirstLayer + kLayers; ++l)
    ++kinds[{map[l].fusedWhole, map[l].ratio}];
  ASSERT_TRUE(kinds.count({true, 2}) && kinds.count({true, 1}) && kinds.count({false, 1}));

  for (int tp : {2, 4}) {
    SCOPED_TRACE("TP " + std::to_string(tp));
    const int rows = 6;
    std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
    // K2 at each ratio the stretch holds; one epoch buffer a rank for all.
    std::map<int64_t, LayerRig> whole;
    for (int ratio : {1, 2}) {
      whole.try_emplace(ratio, c, rows, tp, "k2", &epochs, ratio);
      ASSERT_TRUE(whole.at(ratio).back);
    }
    LayerRig ffn(c, rows, tp, "ffn", &epochs);
    ASSERT_TRUE(ffn.back);
    const TestLayer first(c, tp, 800u);
    const ref::StepInputs step = ref::randomStep(first.dims, rows, 801u);
    ref::StepInputs streams = step;
    int excluded = 0;
    for (int64_t l = kFirstLayer; l < kFirstLayer + kLayers; ++l) {
      const runtime::LayerPlan &plan = map[l];
      SCOPED_TRACE("layer " + std::to_string(l) + (plan.fusedWhole ? " (K1 + K2" : " (FFN") +
                   ", ratio " + std::to_string(plan.ratio) + ")");
      const TestLayer layer(c, tp, 810u + unsigned(l));
      // The step's tokens with the streams the previous layer handed over.
      const ref::StepInputs in = layerStep(layer.dims, streams, plan.ratio, 820u + unsigned(l));
      const ref::LayerOutputs got = simulatePlannedLayer(plan, whole, ffn, layer, in);
      excluded += compareLayer(layer.dims, got, layer.reference(in));
      ref::handOver(streams, got);
    }
    EXPECT_LE(excluded, kLayers * rows / 10) << excluded << " tokens excluded";
    // Every layer was a step of its own: K2 and the FFN launch advance the
    // epoch once each.
    EXPECT_EQ(epochs[0]->word(0), uint32_t(kLayers));
  }
}

TEST(MultiLayer, ALayerFedThePreviousLayersInputsFails) {
  // Layers 18 and 19 (K1 + K2): 19 run on 18's inputs instead of its outputs
  // must leave the bounds of the reference on the handed-over streams.
  const auto c = layerConfig();
  const int rows = 6, tp = 2;
  std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
  LayerRig whole(c, rows, tp, "k2", &epochs);
  const TestLayer layer18(c, tp, 830u), layer19(c, tp, 831u);
  const ref::StepInputs step = ref::randomStep(layer18.dims, rows, 832u);
  const ref::LayerOutputs out18 = simulateLayer(whole, layer18, step);
  ref::StepInputs handed = step;
  ref::handOver(handed, out18);
  const ref::LayerOutputs stale = simulateLayer(whole, layer19, step);
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(stale.x, layer19.reference(handed).x)));
}
