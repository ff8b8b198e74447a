// A whole decode layer on the tiny config through the simulator: K1 on every
// rank, then K2 with all TP ranks at once (peer memory shared), against the
// CPU reference layer composed from tests/reference (seam, front, KV insert,
// attention back per rank, all-reduce, FFN seam, router, shared and routed
// experts per rank, all-reduce). Also the FFN launch against the reference
// FFN half, 20 schedules, and three steps of alternating widths that share
// the epoch buffer, flags and scratch without clearing.
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/formats/AiterShuffle.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Attention.h"
#include "monodc/reference/Mhc.h"
#include "monodc/reference/Moe.h"
#include "monodc/stages/Launches.h"

#include "StageBounds.h"

#include "FusedLaunch.h"
#include "MemoryInputs.h"
#include "RandomKvCache.h"
#include "RandomValues.h"
#include "RopeTable.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>

using namespace monodc;
namespace ref = monodc::reference;
namespace fmts = monodc::formats;
using monodc::testing::normalValues;
using monodc::testing::setBytes;
using monodc::testing::setValues;
using monodc::testing::uniformValues;

namespace {

/// Tiny, with a cache large enough for 48 tokens of distinct pages.
stages::ModelConfig layerConfig() {
  stages::ModelConfig c = stages::tinyConfig();
  c.kvCachePages = 256;
  return c;
}

constexpr int kPagesPerToken = 5; // a 128-key window spans at most 5 pages
constexpr int kRatio = 2;         // compressed keys of a ratio-2 layer

/// The weights one rank holds (replicated ones repeated on every rank).
struct RankWeights {
  ref::BlockScaledE4m3 wqb, woA, woB, sharedGateUp, sharedDown;
  std::vector<float> sinks;
  ref::Mxfp4Weights w13, w2;
};

struct LayerWeights {
  std::vector<float> attnFn, attnBase, attnScale, attnNorm;
  std::vector<float> ffnFn, ffnBase, ffnScale, ffnNorm;
  std::vector<float> qNorm, kvNorm, cosSin, gate, bias;
  ref::BlockScaledE4m3 wqkv;
  std::vector<RankWeights> ranks;
};

LayerWeights makeWeights(const stages::ModelConfig &c, int tp, unsigned seed) {
  std::mt19937 rng(seed);
  const int h = int(c.hidden), flat = 4 * h, d = int(c.headDim), heads = int(c.heads / tp);
  const int groups = heads / int(c.headsPerGroup), width = int(c.headsPerGroup) * d;
  LayerWeights w;
  auto seam = [&](std::vector<float> &fn, std::vector<float> &base, std::vector<float> &scale,
                  std::vector<float> &norm) {
    fn = normalValues(rng, size_t(24) * flat, 0.0f, 1.0f / std::sqrt(float(flat)), false);
    base = normalValues(rng, 24, 0.0f, 0.5f, false);
    scale = {0.5f, 0.5f, 1.0f};
    norm = normalValues(rng, h, 1.0f, 0.1f, true);
  };
  seam(w.attnFn, w.attnBase, w.attnScale, w.attnNorm);
  seam(w.ffnFn, w.ffnBase, w.ffnScale, w.ffnNorm);
  w.qNorm = normalValues(rng, c.qRank, 1.0f, 0.1f, true);
  w.kvNorm = normalValues(rng, c.kvDim, 1.0f, 0.1f, true);
  w.cosSin = monodc::testing::ropeTable(c);
  w.gate = normalValues(rng, size_t(c.experts) * h, 0.0f, 2.0f / std::sqrt(float(h)), true);
  w.bias = normalValues(rng, c.experts, 0.0f, 0.1f, false);
  auto block = [&](int n, int k, float stddev) {
    return ref::quantizeBlockE4m3(normalValues(rng, size_t(n) * k, 0.0f, stddev, false), n, k);
  };
  w.wqkv = block(int(c.qkvWidth()), h, 0.02f);
  const int shared = int(c.sharedPerRank(tp)), routed = int(c.routedPerRank(tp));
  for (int r = 0; r < tp; ++r) {
    RankWeights rw;
    rw.wqb = block(heads * d, int(c.qRank), 1.0f / std::sqrt(float(c.qRank)));
    rw.sinks = normalValues(rng, heads, 0.0f, 1.0f, false);
    rw.woA = block(groups * int(c.groupRank), width, 1.0f / std::sqrt(float(width)));
    rw.woB = block(h, groups * int(c.groupRank), 1.0f / std::sqrt(float(groups * c.groupRank)));
    rw.sharedGateUp = block(2 * shared, h, 2.0f / std::sqrt(float(h)));
    rw.sharedDown = block(h, shared, 1.0f / std::sqrt(float(shared)));
    rw.w13 = ref::quantizeMxfp4Weights(
        normalValues(rng, size_t(c.experts) * 2 * routed * h, 0.0f, 2.0f / std::sqrt(float(h)), false),
        int(c.experts), 2 * routed, h);
    rw.w2 = ref::quantizeMxfp4Weights(
        normalValues(rng, size_t(c.experts) * h * routed, 0.0f, 1.0f / std::sqrt(float(routed)), false),
        int(c.experts), h, routed);
    w.ranks.push_back(std::move(rw));
  }
  return w;
}

/// One step's inputs (the same on every rank).
struct StepInputs {
  int rows = 0;
  std::vector<float> residual, x, post, comb, pre;
  std::vector<float> positions, slots, windowSlots, compressedSlots;
  ref::KvCache window, compressed;
};

/// Token t owns pages [5t, 5t + 5): logical page j of its request is page
/// 5t + j % 5, so its window wraps around them; its key goes to the slot of
/// its position. Token 0 sits at position 0 (one key, no compressed row).
StepInputs makeStep(const stages::ModelConfig &c, int rows, unsigned seed) {
  std::mt19937 rng(seed);
  const int h = int(c.hidden), pt = int(c.kKvPageTokens);
  StepInputs in;
  in.rows = rows;
  in.residual = normalValues(rng, size_t(rows) * 4 * h, 0.0f, 1.0f, true);
  in.x = normalValues(rng, size_t(rows) * h, 0.0f, 1.0f, true);
  in.post = uniformValues(rng, size_t(rows) * 4, 0.2f, 1.8f);
  in.comb = uniformValues(rng, size_t(rows) * 16, 0.0f, 0.5f);
  in.pre = uniformValues(rng, size_t(rows) * 4, 0.1f, 1.0f);
  in.window = monodc::testing::randomKvCache(c, rng);
  in.compressed = monodc::testing::randomKvCache(c, rng);
  std::uniform_int_distribution<int> position(1, int(c.ropePositions) - 1);
  std::uniform_int_distribution<int> anySlot(0, int(c.kvCachePages) * pt - 1);
  for (int t = 0; t < rows; ++t) {
    const int p = t == 0 ? 0 : position(rng);
    std::vector<int> table;
    for (int j = 0; j * pt <= p; ++j)
      table.push_back(kPagesPerToken * t + j % kPagesPerToken);
    in.positions.push_back(float(p));
    in.slots.push_back(float(table[p / pt] * pt + p % pt));
    std::vector<int> window = ref::windowKeySlots(p, table, pt, int(c.windowKeys));
    window.resize(c.windowKeys, -1);
    for (int s : window)
      in.windowSlots.push_back(float(s));
    const int count = ref::compressedKeyCount(p, kRatio, int(c.compressedKeys));
    for (int j = 0; j < c.compressedKeys; ++j)
      in.compressedSlots.push_back(j < count ? float(anySlot(rng)) : -1.0f);
  }
  return in;
}

/// What a layer step produces (the same on every rank).
struct LayerOutputs {
  std::vector<float> x, residual, pre, post, comb;
  std::vector<bool> nearTie; ///< per token: routing excluded (DSV41.md section 6)
};

// ---------------------------------------------------------------- reference

std::vector<float> perHeadPositions(const std::vector<float> &positions, int heads) {
  std::vector<float> out;
  for (float p : positions)
    out.insert(out.end(), size_t(heads), p);
  return out;
}

std::vector<float> slice(const std::vector<float> &v, size_t begin, size_t count) {
  return {v.begin() + begin, v.begin() + begin + count};
}

/// The FFN half on the reduced attention output: seam, norm, MoE per rank,
/// all-reduce.
LayerOutputs referenceFfnHalf(const stages::ModelConfig &c, const LayerWeights &w, int rows,
                              const std::vector<float> &residual, const std::vector<float> &attnOut,
                              const std::vector<float> &post, const std::vector<float> &comb,
                              const std::vector<float> &pre) {
  const int h = int(c.hidden);
  ref::MhcInputs seamIn{rows, h, residual, attnOut, post, comb, pre,
                        w.ffnFn, w.ffnBase, w.ffnScale, w.ffnNorm};
  ref::MhcOutputs seam = ref::mhcSeam(seamIn);
  std::vector<float> logits = ref::routerLogits(seam.y, w.gate, rows, h, int(c.experts));
  ref::Routing routing = ref::route(logits, w.bias, rows, int(c.experts), int(c.topK),
                                    c.routedScaling);
  std::vector<std::vector<float>> partials;
  for (const RankWeights &rw : w.ranks) {
    ref::Mxfp8Tensor xs = ref::quantizeMxfp8Rows(seam.y, rows, h, fmts::Mxfp8Variant::Standard);
    std::vector<float> shared = ref::sharedExpert(xs, rw.sharedGateUp, rw.sharedDown,
                                                  int(rw.sharedDown.k), c.swigluLimit);
    partials.push_back(ref::routedExperts(seam.y, rows, routing, rw.w13, rw.w2, shared,
                                          c.swigluLimit));
  }
  return {ref::allReduce(partials), seam.residual, seam.pre, seam.post, seam.comb,
          routing.nearTie};
}

LayerOutputs referenceLayer(const stages::ModelConfig &c, const LayerWeights &w,
                            const StepInputs &in) {
  const int rows = in.rows, h = int(c.hidden), d = int(c.headDim);
  const int heads = int(c.heads) / int(w.ranks.size());
  ref::MhcInputs seamIn{rows, h, in.residual, in.x, in.post, in.comb, in.pre,
                        w.attnFn, w.attnBase, w.attnScale, w.attnNorm};
  ref::MhcOutputs seam = ref::mhcSeam(seamIn);
  // The front: MXFP8(y) . wqkv, the q/kv norms, the key RoPE, the insert.
  ref::Mxfp8Tensor yq = ref::quantizeMxfp8Rows(seam.y, rows, h, fmts::Mxfp8Variant::Standard);
  std::vector<float> qkv = ref::gemvMxfp8xE4m3(yq, w.wqkv);
  std::vector<float> qr, kv;
  for (int t = 0; t < rows; ++t) {
    auto row = slice(qkv, size_t(t) * c.qkvWidth(), c.qkvWidth());
    qr.insert(qr.end(), row.begin(), row.begin() + c.qRank);
    kv.insert(kv.end(), row.begin() + c.qRank, row.end());
  }
  std::vector<float> qn = ref::rmsNorm(qr, rows, int(c.qRank), w.qNorm, c.normEps);
  std::vector<float> kn = ref::rmsNorm(kv, rows, int(c.kvDim), w.kvNorm, c.normEps);
  std::vector<float> k = ref::keyRope(kn, in.positions, w.cosSin, rows, int(c.kvDim),
                                      int(c.ropeDim));
  ref::KvCache window = in.window;
  ref::insertKv(window, k, rows, std::vector<int>(in.slots.begin(), in.slots.end()));
  // The back on every rank: its query heads, its wo_a and wo_b.
  ref::Mxfp8Tensor qnq = ref::quantizeMxfp8Rows(qn, rows, int(c.qRank),
                                                fmts::Mxfp8Variant::Standard);
  std::vector<std::vector<float>> partials;
  for (const RankWeights &rw : w.ranks) {
    std::vector<float> q = ref::keyRope(ref::gemvMxfp8xE4m3(qnq, rw.wqb),
                                        perHeadPositions(in.positions, heads), w.cosSin,
                                        rows * heads, d, int(c.ropeDim));
    ref::AttentionBackWeights back{rw.sinks, rw.woA, rw.woB, int(c.headsPerGroup),
                                   int(c.groupRank)};
    std::vector<float> partial;
    for (int t = 0; t < rows; ++t) {
      ref::TokenKeys keys;
      for (int j = 0; j < c.windowKeys; ++j)
        keys.windowSlots.push_back(int(in.windowSlots[t * c.windowKeys + j]));
      for (int j = 0; j < c.compressedKeys; ++j)
        keys.compressedSlots.push_back(int(in.compressedSlots[t * c.compressedKeys + j]));
      ref::AttentionBackResult r =
          ref::attentionBack(slice(q, size_t(t) * heads * d, size_t(heads) * d), heads,
                             int(in.positions[t]), w.cosSin, window, &in.compressed, keys, back);
      partial.insert(partial.end(), r.partial.begin(), r.partial.end());
    }
    partials.push_back(std::move(partial));
  }
  return referenceFfnHalf(c, w, rows, seam.residual, ref::allReduce(partials), seam.post,
                          seam.comb, seam.pre);
}

// ---------------------------------------------------------------- simulator

void setBlock(sim::LaunchMemory &m, const std::string &name, const ref::BlockScaledE4m3 &w) {
  setBytes(m, name, w.codes);
  setBytes(m, name + "_scale", w.scales);
}
void setMxfp4(sim::LaunchMemory &m, const std::string &name, const ref::Mxfp4Weights &w) {
  const size_t rows = size_t(w.experts) * w.n;
  setBytes(m, name, fmts::shuffleWeight(fmts::packE2m1(w.codes, rows, w.k), w.experts, w.n, w.k / 2));
  setBytes(m, name + "_scale", fmts::shuffleScales(w.scales, rows, w.k / 32));
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
      if (epochs->size() <= size_t(r))
        epochs->push_back(k1Memory.back()->storage("epoch"));
      EXPECT_FALSE(static_cast<bool>(k1Memory.back()->share("epoch", (*epochs)[r])));
      EXPECT_FALSE(static_cast<bool>(backMemory.back()->share("epoch", (*epochs)[r])));
    }
  }
};

void loadK1(sim::LaunchMemory &m, const stages::ModelConfig &c, const LayerWeights &w,
            const RankWeights &rw, const StepInputs &in) {
  setValues(m, "residual", in.residual);
  setValues(m, "x", in.x);
  setValues(m, "post_in", in.post);
  setValues(m, "comb_in", in.comb);
  setValues(m, "pre_in", in.pre);
  setValues(m, "hc_fn", w.attnFn);
  setValues(m, "hc_base", w.attnBase);
  setValues(m, "hc_scale", w.attnScale);
  setValues(m, "attn_norm", w.attnNorm);
  setBlock(m, "wqkv", w.wqkv);
  setValues(m, "q_norm", w.qNorm);
  setValues(m, "kv_norm", w.kvNorm);
  setValues(m, "positions", in.positions);
  setValues(m, "cos_sin", w.cosSin);
  setValues(m, "slot_mapping", in.slots);
  setBytes(m, "kv_cache", in.window.bytes);
  setBlock(m, "wq_b", rw.wqb);
  (void)c;
}

void loadFfnHalf(sim::LaunchMemory &m, const LayerWeights &w, const RankWeights &rw) {
  setValues(m, "ffn_hc_fn", w.ffnFn);
  setValues(m, "ffn_hc_base", w.ffnBase);
  setValues(m, "ffn_hc_scale", w.ffnScale);
  setValues(m, "ffn_norm", w.ffnNorm);
  setValues(m, "gate", w.gate);
  setValues(m, "gate_bias", w.bias);
  setBlock(m, "shared_gate_up", rw.sharedGateUp);
  setBlock(m, "shared_down", rw.sharedDown);
  setMxfp4(m, "w13", rw.w13);
  setMxfp4(m, "w2", rw.w2);
}

/// K1 on every rank, then K2 on all ranks at once.
LayerOutputs simulateLayer(LayerRig &rig, const stages::ModelConfig &c, const LayerWeights &w,
                           const StepInputs &in, const sim::Schedule &schedule = {}) {
  const size_t tp = w.ranks.size();
  std::vector<sim::LaunchMemory *> backs;
  for (size_t r = 0; r < tp; ++r) {
    sim::LaunchMemory &k1 = *rig.k1Memory[r], &k2 = *rig.backMemory[r];
    loadK1(k1, c, w, w.ranks[r], in);
    auto run = sim::simulate(monodc::testing::launchOf(*rig.k1), k1, schedule);
    EXPECT_TRUE(succeeded(run) && !run->deadlock) << (succeeded(run) ? run->describe() : "");
    // K2 reads what K1 wrote: q, the cache and the seam's streams and gates.
    setValues(k2, "q", k1.values("q"));
    setBytes(k2, "kv_cache", k1.bytes("kv_cache"));
    setValues(k2, "ffn_residual", k1.values("residual_out"));
    setValues(k2, "ffn_post_in", k1.values("post"));
    setValues(k2, "ffn_comb_in", k1.values("comb"));
    setValues(k2, "ffn_pre_in", k1.values("pre"));
    setValues(k2, "positions", in.positions);
    setValues(k2, "cos_sin", w.cosSin);
    setValues(k2, "window_slots", in.windowSlots);
    setBytes(k2, "compressed_cache", in.compressed.bytes);
    setValues(k2, "compressed_slots", in.compressedSlots);
    setValues(k2, "attn_sink", w.ranks[r].sinks);
    setBlock(k2, "wo_a", w.ranks[r].woA);
    setBlock(k2, "wo_b", w.ranks[r].woB);
    loadFfnHalf(k2, w, w.ranks[r]);
    backs.push_back(&k2);
  }
  auto run = sim::simulateRanks(monodc::testing::launchOf(*rig.back), backs, schedule);
  EXPECT_TRUE(succeeded(run) && !run->deadlock) << (succeeded(run) ? run->describe() : "");
  for (size_t r = 1; r < tp; ++r)
    EXPECT_EQ(backs[r]->bytes("x_out"), backs[0]->bytes("x_out")) << "rank " << r;
  sim::LaunchMemory &k2 = *backs[0];
  return {k2.values("x_out"), k2.values("ffn_residual_out"), k2.values("ffn_pre"),
          k2.values("ffn_post"), k2.values("ffn_comb"), {}};
}

double cosine(const std::vector<float> &a, const std::vector<float> &b, size_t begin, size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = begin; i < begin + n; ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return aa == 0 && bb == 0 ? 1.0 : ab / std::sqrt(aa * bb);
}

/// Every token's output cosine >= 0.999 (DSV41.md section 6, a whole layer),
/// tokens with routing near-ties excluded and counted; the seam's streams and
/// gates within the stage bounds.
int compareLayer(const stages::ModelConfig &c, const LayerOutputs &got, const LayerOutputs &want) {
  const size_t h = size_t(c.hidden);
  int excluded = 0;
  for (size_t t = 0; t < want.nearTie.size(); ++t) {
    if (want.nearTie[t]) {
      ++excluded;
      continue;
    }
    EXPECT_GE(cosine(got.x, want.x, t * h, h), 0.999) << "token " << t;
  }
  monodc::testing::expectWithinBounds(got.residual, want.residual, "ffn residual_out");
  monodc::testing::expectWithinBounds(got.pre, want.pre, "ffn pre");
  monodc::testing::expectWithinBounds(got.post, want.post, "ffn post");
  monodc::testing::expectWithinBounds(got.comb, want.comb, "ffn comb");
  return excluded;
}

} // namespace

TEST(LayerNumerics, K1ThenK2AgainstTheReferenceLayer) {
  const auto c = layerConfig();
  int excluded = 0, tokens = 0;
  for (int tp : {2, 4})
    for (int rows : {1, 6, 48}) {
      SCOPED_TRACE("TP " + std::to_string(tp) + ", rows " + std::to_string(rows));
      LayerWeights w = makeWeights(c, tp, 100u + tp);
      StepInputs in = makeStep(c, rows, 200u + rows);
      std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
      LayerRig rig(c, rows, tp, "k2", &epochs);
      excluded += compareLayer(c, simulateLayer(rig, c, w, in), referenceLayer(c, w, in));
      tokens += rows;
    }
  // Near-ties are rare: most tokens must really be compared.
  EXPECT_LE(excluded, tokens / 10) << excluded << " of " << tokens << " tokens excluded";
}

TEST(LayerNumerics, TwentySchedulesGiveBitIdenticalLayers) {
  const auto c = layerConfig();
  LayerWeights w = makeWeights(c, 2, 7u);
  StepInputs in = makeStep(c, 6, 8u);
  std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
  LayerRig rig(c, 6, 2, "k2", &epochs);
  const LayerOutputs first = simulateLayer(rig, c, w, in);
  for (uint64_t s = 1; s < 20; ++s) {
    // Fresh memories each time: the epoch would otherwise move on.
    std::vector<std::shared_ptr<sim::RegionStorage>> fresh;
    LayerRig again(c, 6, 2, "k2", &fresh);
    sim::Schedule schedule{s % 3 == 0 ? sim::SchedulePolicy::StarveOne : sim::SchedulePolicy::Random,
                           s, int64_t(s % 16)};
    LayerOutputs got = simulateLayer(again, c, w, in, schedule);
    EXPECT_EQ(got.x, first.x) << "schedule " << s;
    EXPECT_EQ(got.residual, first.residual) << "schedule " << s;
    EXPECT_EQ(got.comb, first.comb) << "schedule " << s;
  }
}

TEST(LayerNumerics, ThreeStepsOfWidths6Then48Then6WithoutClearing) {
  const auto c = layerConfig();
  LayerWeights w = makeWeights(c, 2, 9u);
  std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
  std::map<int, std::unique_ptr<LayerRig>> rigs;
  for (int rows : {6, 48})
    rigs[rows] = std::make_unique<LayerRig>(c, rows, 2, "k2", &epochs);
  int step = 0;
  for (int rows : {6, 48, 6}) {
    SCOPED_TRACE("step " + std::to_string(step) + ", rows " + std::to_string(rows));
    StepInputs in = makeStep(c, rows, 300u + step++);
    compareLayer(c, simulateLayer(*rigs[rows], c, w, in), referenceLayer(c, w, in));
  }
  // Each step advanced the epoch once (K2 advances, K1 does not).
  EXPECT_EQ(epochs[0]->word(0), 3u);
}

TEST(LayerNumerics, FfnLaunchAgainstTheReferenceFfnHalf) {
  const auto c = layerConfig();
  for (int tp : {2, 4}) {
    SCOPED_TRACE("TP " + std::to_string(tp));
    const int rows = 6, h = int(c.hidden);
    LayerWeights w = makeWeights(c, tp, 400u + tp);
    StepInputs in = makeStep(c, rows, 500u);
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
      loadFfnHalf(m, w, w.ranks[r]);
      pointers.push_back(&m);
    }
    auto run = sim::simulateRanks(launch, pointers, {});
    ASSERT_TRUE(succeeded(run) && !run->deadlock);
    sim::LaunchMemory &m = *pointers[0];
    LayerOutputs got{m.values("x_out"), m.values("ffn_residual_out"), m.values("ffn_pre"),
                     m.values("ffn_post"), m.values("ffn_comb"), {}};
    LayerOutputs want = referenceFfnHalf(c, w, rows, in.residual, ref::allReduce(partials),
                                         in.post, in.comb, in.pre);
    compareLayer(c, got, want);
  }
}

TEST(LayerNumerics, AWrongRoutedScaleFailsTheLayer) {
  // One rank's routed w13 scales one step high (x2: an E8M0 scale moves by
  // powers of two): the layer check must fail.
  const auto c = layerConfig();
  LayerWeights w = makeWeights(c, 2, 11u);
  StepInputs in = makeStep(c, 6, 12u);
  LayerOutputs want = referenceLayer(c, w, in);
  LayerWeights off = w;
  for (uint8_t &s : off.ranks[0].w13.scales)
    s = uint8_t(s + 1);
  std::vector<std::shared_ptr<sim::RegionStorage>> epochs;
  LayerRig rig(c, 6, 2, "k2", &epochs);
  LayerOutputs got = simulateLayer(rig, c, off, in);
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(got.x, want.x)));
}
