// Shared by the whole-layer simulator tests: the tiny layer config, a
// layer's random weights, the K1 + K2 (or FFN) launches of one width with
// each rank's memory kept across steps, a simulated layer step, and the
// comparison with the CPU reference layer.
#ifndef MONODC_TESTS_LAYERRIG_H
#define MONODC_TESTS_LAYERRIG_H

#include "monodc/Simulator/Simulator.h"
#include "monodc/reference/LaunchInputs.h"
#include "monodc/reference/Layer.h"
#include "monodc/reference/LayerComparison.h"
#include "monodc/reference/LayerData.h"
#include "monodc/stages/Launches.h"

#include "FusedLaunch.h"
#include "MemoryInputs.h"
#include "StageBounds.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace monodc::testing {
namespace ref = monodc::reference;

/// Tiny, with a cache large enough for 48 tokens of distinct pages.
inline stages::ModelConfig layerConfig() {
  stages::ModelConfig c = stages::tinyConfig();
  c.kvCachePages = 256;
  return c;
}

inline ref::LayerDims layerDims(const stages::ModelConfig &c, int tp) {
  ref::LayerDims d;
  d.hidden = int(c.hidden);
  d.tp = tp;
  d.headsPerRank = int(c.heads) / tp;
  d.headDim = int(c.headDim);
  d.ropeDim = int(c.ropeDim);
  d.qRank = int(c.qRank);
  d.headsPerGroup = int(c.headsPerGroup);
  d.groupRank = int(c.groupRank);
  d.windowKeys = int(c.windowKeys);
  d.compressedKeys = int(c.compressedKeys);
  d.experts = int(c.experts);
  d.topK = int(c.topK);
  d.sharedPerRank = int(c.sharedPerRank(tp));
  d.routedPerRank = int(c.routedPerRank(tp));
  d.ropePositions = int(c.ropePositions);
  d.cachePages = int(c.kvCachePages);
  d.pageTokens = int(c.kKvPageTokens);
  d.routedScaling = c.routedScaling;
  d.swigluLimit = c.swigluLimit;
  d.normEps = c.normEps;
  return d;
}

/// A layer's random weights and routed experts (all of them: the simulator
/// loads every expert).
struct TestLayer {
  ref::LayerDims dims;
  ref::LayerWeights weights;
  ref::ExpertSource experts;

  TestLayer(const stages::ModelConfig &c, int tp, unsigned seed)
      : dims(layerDims(c, tp)), weights(ref::randomLayerWeights(dims, seed)),
        experts(ref::randomExperts(dims, seed)) {}
  ref::LayerOutputs reference(const ref::StepInputs &in) const {
    return ref::referenceLayer(dims, weights, experts, in);
  }
};

// ---------------------------------------------------------------- simulator

/// Every routed expert of a rank (the simulator's memory holds them all).
inline ref::LaunchInputs allExperts(const ref::ExpertSource &experts, const ref::LayerDims &d, int rank) {
  ref::LaunchInputs inputs;
  for (int e = 0; e < d.experts; ++e)
    inputs.append(ref::expertInputs(experts(rank, e), e));
  return inputs;
}

/// The launches of one width and each rank's memory for them, kept across
/// steps (nothing is cleared between steps). K1 and K2 of a rank share its
/// epoch buffer: K1 tags 2e+1, K2 tags 2e+2 and advances e.
struct LayerRig {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> k1, back;
  std::vector<std::unique_ptr<sim::LaunchMemory>> k1Memory, backMemory;

  /// `ratio`: the compress ratio K2 is built for (the steps' compressRatio).
  LayerRig(const stages::ModelConfig &c, int rows, int tp, const std::string &backLaunch,
           std::vector<std::shared_ptr<sim::RegionStorage>> *epochs,
           int ratio = ref::kCompressRatio) {
    // Each launch fuses with its own place in the step (K1 tag 2e+1, no
    // advance; K2/FFN tag 2e+2 and the epoch end), as the CLI and JIT do.
    k1 = monodc::testing::buildFusedLaunch(ctx, "k1", c, rows, tp, /*grid=*/16);
    back = monodc::testing::buildFusedLaunch(ctx, backLaunch, c, rows, tp, /*grid=*/16, ratio);
    if (!k1 || !back)
      return;
    for (int r = 0; r < tp; ++r) {
      k1Memory.push_back(std::make_unique<sim::LaunchMemory>(monodc::testing::launchOf(*k1)));
      backMemory.push_back(std::make_unique<sim::LaunchMemory>(monodc::testing::launchOf(*back)));
      // Scratch starts as NaN: a stage that read a word no task of the step
      // wrote (a row past a routed slot's count) would spoil the layer.
      k1Memory.back()->poisonScratch();
      backMemory.back()->poisonScratch();
      if (epochs->size() <= size_t(r))
        epochs->push_back(k1Memory.back()->storage("epoch"));
      EXPECT_FALSE(static_cast<bool>(k1Memory.back()->share("epoch", (*epochs)[r])));
      EXPECT_FALSE(static_cast<bool>(backMemory.back()->share("epoch", (*epochs)[r])));
    }
  }
};

/// K1 on every rank, then K2 on all ranks at once.
inline ref::LayerOutputs simulateLayer(LayerRig &rig, const TestLayer &layer, const ref::StepInputs &in,
                                const sim::Schedule &schedule = {}) {
  const ref::LayerWeights &w = layer.weights;
  const size_t tp = w.ranks.size();
  std::vector<sim::LaunchMemory *> backs;
  for (size_t r = 0; r < tp; ++r) {
    sim::LaunchMemory &k1 = *rig.k1Memory[r], &k2 = *rig.backMemory[r];
    setInputs(k1, ref::k1Inputs(w, int(r), in));
    auto run = sim::simulate(monodc::testing::launchOf(*rig.k1), k1, schedule);
    EXPECT_TRUE(succeeded(run) && !run->deadlock) << (succeeded(run) ? run->describe() : "");
    // K2 reads what K1 wrote (q, the cache and the seam's streams and
    // gates), as the compiler declares it: K2's regions handed from K1.
    int handed = 0;
    for (auto region : monodc::testing::launchOf(*rig.back).getBodyBlock().getOps<mono::RegionOp>())
      if (auto from = region.getHandedFromAttr(); from && from.getRootReference() == "k1") {
        setBytes(k2, region.getSymName().str(), k1.bytes(from.getLeafReference().str()));
        ++handed;
      }
    EXPECT_EQ(handed, 6) << "K2 takes q, the cache, the residual, post, comb and pre from K1";
    setInputs(k2, ref::k2Inputs(w, int(r), in));
    setInputs(k2, allExperts(layer.experts, layer.dims, int(r)));
    backs.push_back(&k2);
  }
  auto run = sim::simulateRanks(monodc::testing::launchOf(*rig.back), backs, schedule);
  EXPECT_TRUE(succeeded(run) && !run->deadlock) << (succeeded(run) ? run->describe() : "");
  for (size_t r = 1; r < tp; ++r)
    EXPECT_EQ(backs[r]->bytes("x_out"), backs[0]->bytes("x_out")) << "rank " << r;
  return ref::layerOutputs([&](const std::string &name) { return backs[0]->values(name); });
}

/// The FFN launch of `rig` (built with back launch "ffn") on every rank at
/// once, on each rank's attention partial and the FFN seam's inputs of `in`.
inline ref::LayerOutputs simulateFfn(LayerRig &rig, const TestLayer &layer,
                                     const std::vector<std::vector<float>> &partials,
                                     const ref::StepInputs &in) {
  std::vector<sim::LaunchMemory *> pointers;
  for (size_t r = 0; r < partials.size(); ++r) {
    sim::LaunchMemory &m = *rig.backMemory[r];
    setValues(m, "partial", partials[r]);
    setValues(m, "slot_mapping", in.slots);
    setValues(m, "ffn_residual", in.residual);
    setValues(m, "ffn_post_in", in.post);
    setValues(m, "ffn_comb_in", in.comb);
    setValues(m, "ffn_pre_in", in.pre);
    setInputs(m, ref::ffnHalfInputs(layer.weights, int(r)));
    setInputs(m, allExperts(layer.experts, layer.dims, int(r)));
    pointers.push_back(&m);
  }
  auto run = sim::simulateRanks(launchOf(*rig.back), pointers, {});
  EXPECT_TRUE(succeeded(run) && !run->deadlock) << (succeeded(run) ? run->describe() : "");
  for (size_t r = 1; r < pointers.size(); ++r)
    EXPECT_EQ(pointers[r]->bytes("x_out"), pointers[0]->bytes("x_out")) << "rank " << r;
  return ref::layerOutputs([&](const std::string &name) { return pointers[0]->values(name); });
}

/// The same on a rig of its own.
inline ref::LayerOutputs simulateFfn(const stages::ModelConfig &c, const TestLayer &layer,
                                     int rows, const std::vector<std::vector<float>> &partials,
                                     const ref::StepInputs &in) {
  std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
  LayerRig rig(c, rows, int(partials.size()), "ffn", &epochs);
  if (!rig.back)
    return {};
  return simulateFfn(rig, layer, partials, in);
}

/// Every token's output cosine >= 0.999 (docs/numerics.md section 6, a whole layer),
/// tokens with routing near-ties excluded and counted; the seam's streams and
/// gates within the stage bounds.
inline int compareLayer(const ref::LayerDims &d, const ref::LayerOutputs &got,
                 const ref::LayerOutputs &want) {
  const ref::LayerComparison comparison = ref::compareLayer(got, want, d.hidden);
  for (size_t t = 0; t < comparison.tokenCosines.size(); ++t)
    if (!comparison.excluded[t])
      EXPECT_GE(comparison.tokenCosines[t], ref::kLayerCosine) << "token " << t;
  monodc::testing::expectWithinBounds(got.residual, want.residual, "ffn residual_out");
  monodc::testing::expectWithinBounds(got.pre, want.pre, "ffn pre");
  monodc::testing::expectWithinBounds(got.post, want.post, "ffn post");
  monodc::testing::expectWithinBounds(got.comb, want.comb, "ffn comb");
  return comparison.excludedCount();
}

} // namespace monodc::testing

#endif // MONODC_TESTS_LAYERRIG_H
