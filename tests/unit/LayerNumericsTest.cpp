// A whole decode layer on the tiny config through the simulator: K1 on every
// rank, then K2 with all TP ranks at once (peer memory shared), against the
// CPU reference layer (reference/Layer.h: seam, front, KV insert, attention
// back per rank, all-reduce, FFN seam, router, shared and routed experts per
// rank, all-reduce), with the random weights and steps and the launches'
// inputs that the GPU layer check uses too (LayerData.h, LaunchInputs.h).
// Also the FFN launch against the reference FFN half, 20 schedules, and three
// steps of alternating widths that share the epoch buffer, flags and scratch
// without clearing.
#include "LayerRig.h"
#include "RandomValues.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>

using namespace monodc;
using namespace monodc::testing;

TEST(LayerNumerics, K1ThenK2AgainstTheReferenceLayer) {
  const auto c = layerConfig();
  int excluded = 0, tokens = 0;
  for (int tp : {2, 4})
    for (int rows : {1, 6, 48}) {
      SCOPED_TRACE("TP " + std::to_string(tp) + ", rows " + std::to_string(rows));
      TestLayer layer(c, tp, 100u + tp);
      ref::StepInputs in = ref::randomStep(layer.dims, rows, 200u + rows);
      std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
      LayerRig rig(c, rows, tp, "k2", &epochs);
      excluded += compareLayer(layer.dims, simulateLayer(rig, layer, in), layer.reference(in));
      tokens += rows;
    }
  // Near-ties are rare: most tokens must really be compared.
  EXPECT_LE(excluded, tokens / 10) << excluded << " of " << tokens << " tokens excluded";
}

TEST(LayerNumerics, TwentySchedulesGiveBitIdenticalLayers) {
  const auto c = layerConfig();
  TestLayer layer(c, 2, 7u);
  ref::StepInputs in = ref::randomStep(layer.dims, 6, 8u);
  std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
  LayerRig rig(c, 6, 2, "k2", &epochs);
  const ref::LayerOutputs first = simulateLayer(rig, layer, in);
  for (uint64_t s = 1; s < 20; ++s) {
    // Fresh memories each time: the epoch would otherwise move on.
    std::vector<std::shared_ptr<sim::RegionStorage>> fresh;
    LayerRig again(c, 6, 2, "k2", &fresh);
    sim::Schedule schedule{s % 3 == 0 ? sim::SchedulePolicy::StarveOne : sim::SchedulePolicy::Random,
                           s, int64_t(s % 16)};
    ref::LayerOutputs got = simulateLayer(again, layer, in, schedule);
    EXPECT_EQ(got.x, first.x) << "schedule " << s;
    EXPECT_EQ(got.residual, first.residual) << "schedule " << s;
    EXPECT_EQ(got.comb, first.comb) << "schedule " << s;
  }
}

TEST(LayerNumerics, ThreeStepsOfWidths6Then48Then6WithoutClearing) {
  const auto c = layerConfig();
  TestLayer layer(c, 2, 9u);
  std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
  std::map<int, std::unique_ptr<LayerRig>> rigs;
  for (int rows : {6, 48})
    rigs[rows] = std::make_unique<LayerRig>(c, rows, 2, "k2", &epochs);
  int step = 0;
  for (int rows : {6, 48, 6}) {
    SCOPED_TRACE("step " + std::to_string(step) + ", rows " + std::to_string(rows));
    ref::StepInputs in = ref::randomStep(layer.dims, rows, 300u + step++);
    compareLayer(layer.dims, simulateLayer(*rigs[rows], layer, in), layer.reference(in));
  }
  // Each step advanced the epoch once (K2 advances, K1 does not).
  EXPECT_EQ(epochs[0]->word(0), 3u);
}

TEST(LayerNumerics, FfnLaunchAgainstTheReferenceFfnHalf) {
  const auto c = layerConfig();
  for (int tp : {2, 4}) {
    SCOPED_TRACE("TP " + std::to_string(tp));
    const int rows = 6, h = int(c.hidden);
    TestLayer layer(c, tp, 400u + tp);
    ref::StepInputs in = ref::randomStep(layer.dims, rows, 500u);
    std::mt19937 rng(600u + tp);
    std::vector<std::vector<float>> partials;
    for (int r = 0; r < tp; ++r)
      partials.push_back(normalValues(rng, size_t(rows) * h, 0.0f, 1.0f, true));
    ref::LayerOutputs got = simulateFfn(c, layer, rows, partials, in);
    ref::LayerOutputs want =
        ref::referenceFfnHalf(layer.dims, layer.weights, layer.experts, rows, in.residual,
                              ref::allReduce(partials), in.post, in.comb, in.pre);
    compareLayer(layer.dims, got, want);
  }
}

TEST(LayerNumerics, AWrongRoutedScaleFailsTheLayer) {
  // One rank's routed w13 scales one step high (x2: an E8M0 scale moves by
  // powers of two): the layer check must fail.
  const auto c = layerConfig();
  TestLayer layer(c, 2, 11u);
  ref::StepInputs in = ref::randomStep(layer.dims, 6, 12u);
  ref::LayerOutputs want = layer.reference(in);
  TestLayer off = layer;
  off.experts = [experts = layer.experts](int rank, int expert) {
    ref::ExpertWeights w = experts(rank, expert);
    if (rank == 0)
      for (uint8_t &s : w.w13.scales)
        s = uint8_t(s + 1);
    return w;
  };
  std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
  LayerRig rig(c, 6, 2, "k2", &epochs);
  ref::LayerOutputs got = simulateLayer(rig, off, in);
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(got.x, want.x)));
}
