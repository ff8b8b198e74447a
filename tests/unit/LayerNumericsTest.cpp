// A whole decode layer on the tiny config through the simulator: K1 on every
// rank, then K2 with all TP ranks at once (peer memory shared), against the
// CPU reference layer (reference/Layer.h: seam, front, KV insert, attention
// back per rank, all-reduce, FFN seam, router, shared and routed experts per
// rank, all-reduce), with the random weights and steps and the launches'
// inputs that the GPU layer check uses too (LayerData.h, LaunchInputs.h).
// Also the FFN launch against the reference FFN half, 20 schedules, and three
// steps of alternating widths that share the epoch buffer, flags and scratch
// without clearing.
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/reference/LaunchInputs.h"
#include "monodc/reference/Layer.h"
#include "monodc/reference/LayerComparison.h"
#include "monodc/reference/LayerData.h"
#include "monodc/stages/Launches.h"

#include "StageBounds.h"

#include "FusedLaunch.h"
#include "MemoryInputs.h"
#include "RandomValues.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>

using namespace monodc;
namespace ref = monodc::reference;
using monodc::testing::normalValues;
using monodc::testing::setBytes;
using monodc::testing::setInputs;
using monodc::testing::setValues;

namespace {

/// Tiny, with a cache large enough for 48 tokens of distinct pages.
stages::ModelConfig layerConfig() {
  stages::ModelConfig c = stages::tinyConfig();
  c.kvCachePages = 256;
  return c;
}

ref::LayerDims layerDims(const stages::ModelConfig &c, int tp) {
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
ref::LaunchInputs allExperts(const ref::ExpertSource &experts, const ref::LayerDims &d, int rank) {
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

  LayerRig(const stages::ModelConfig &c, int rows, int tp, const std::string &backLaunch,
           std::vector<std::shared_ptr<sim::RegionStorage>> *epochs) {
    // Each launch fuses with its own place in the step (K1 tag 2e+1, no
    // advance; K2/FFN tag 2e+2 and the epoch end), as the CLI and JIT do.
    k1 = monodc::testing::buildFusedLaunch(ctx, "k1", c, rows, tp, /*grid=*/16);
    back = monodc::testing::buildFusedLaunch(ctx, backLaunch, c, rows, tp, /*grid=*/16);
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
ref::LayerOutputs simulateLayer(LayerRig &rig, const TestLayer &layer, const ref::StepInputs &in,
                                const sim::Schedule &schedule = {}) {
  const ref::LayerWeights &w = layer.weights;
  const size_t tp = w.ranks.size();
  std::vector<sim::LaunchMemory *> backs;
  for (size_t r = 0; r < tp; ++r) {
    sim::LaunchMemory &k1 = *rig.k1Memory[r], &k2 = *rig.backMemory[r];
    setInputs(k1, ref::k1Inputs(w, int(r), in));
    auto run = sim::simulate(monodc::testing::launchOf(*rig.k1), k1, schedule);
    EXPECT_TRUE(succeeded(run) && !run->deadlock) << (succeeded(run) ? run->describe() : "");
    // K2 reads what K1 wrote: q, the cache and the seam's streams and gates.
    for (const auto &[k2Region, k1Region] : ref::k2RegionsFromK1())
      setBytes(k2, k2Region, k1.bytes(k1Region));
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

/// Every token's output cosine >= 0.999 (docs/numerics.md section 6, a whole layer),
/// tokens with routing near-ties excluded and counted; the seam's streams and
/// gates within the stage bounds.
int compareLayer(const ref::LayerDims &d, const ref::LayerOutputs &got,
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

} // namespace

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
    mlir::MLIRContext ctx;
    auto module = monodc::testing::buildFusedLaunch(ctx, "ffn", c, rows, tp, /*grid=*/16);
    ASSERT_TRUE(static_cast<bool>(module));
    auto launch = monodc::testing::launchOf(*module);
    std::vector<std::unique_ptr<sim::LaunchMemory>> memories;
    std::vector<sim::LaunchMemory *> pointers;
    for (int r = 0; r < tp; ++r) {
      memories.push_back(std::make_unique<sim::LaunchMemory>(launch));
      sim::LaunchMemory &m = *memories.back();
      setValues(m, "partial", partials[r]);
      setValues(m, "ffn_residual", in.residual);
      setValues(m, "ffn_post_in", in.post);
      setValues(m, "ffn_comb_in", in.comb);
      setValues(m, "ffn_pre_in", in.pre);
      setInputs(m, ref::ffnHalfInputs(layer.weights, r));
      setInputs(m, allExperts(layer.experts, layer.dims, r));
      pointers.push_back(&m);
    }
    auto run = sim::simulateRanks(launch, pointers, {});
    ASSERT_TRUE(succeeded(run) && !run->deadlock);
    ref::LayerOutputs got =
        ref::layerOutputs([&](const std::string &name) { return pointers[0]->values(name); });
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
