// The MoE router, routing and shared expert through the fusion passes and
// the simulator, against the independent reference (tests/reference/Moe):
// logits, weights and the shared expert within the docs/numerics.md section 6
// bounds; the top-k selection exact except for counted near-ties.
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Moe.h"
#include "monodc/stages/Launches.h"

#include "MoeLaunchSetup.h"
#include "StageBounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace monodc;
namespace ref = monodc::reference;
using monodc::testing::expectWithinBounds;

namespace {

struct MoeInputs {
  int rows = 0;
  std::vector<float> x, gate, bias;
  ref::BlockScaledE4m3 gateUp, down;
  int intermediate = 0;
};

MoeInputs makeMoeInputs(const stages::ModelConfig &c, int rows, int tp, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int h = int(c.hidden), e = int(c.experts);
  MoeInputs in;
  in.rows = rows;
  in.intermediate = int(c.sharedPerRank(tp));
  in.x.resize(size_t(rows) * h);
  for (float &v : in.x)
    v = formats::roundToBf16(normal(rng));
  in.gate.resize(size_t(e) * h);
  const float gateScale = 2.0f / std::sqrt(float(h));
  for (float &v : in.gate)
    v = formats::roundToBf16(gateScale * normal(rng));
  in.bias.resize(e);
  for (float &v : in.bias)
    v = 0.1f * normal(rng);
  auto dense = [&](int n, int k, float scale) {
    std::vector<float> w(size_t(n) * k);
    for (float &v : w)
      v = scale * normal(rng);
    return ref::quantizeBlockE4m3(w, n, k);
  };
  in.gateUp = dense(2 * in.intermediate, h, 2.0f / std::sqrt(float(h)));
  in.down = dense(h, in.intermediate, 1.0f / std::sqrt(float(in.intermediate)));
  return in;
}

struct MoeOutputs {
  std::vector<float> logits, indices, weights, shared;
};

MoeOutputs simulateMoe(const stages::ModelConfig &c, int tp, const MoeInputs &in,
                       const sim::Schedule &schedule = {}) {
  auto built = monodc::testing::buildMoeLaunch("moe_router_shared", c, in.rows, tp);
  if (!built)
    return {};
  sim::LaunchMemory &memory = *built->memory;
  monodc::testing::loadRouterAndShared(memory, in.x, in.gate, in.bias, in.gateUp, in.down);
  auto run = sim::simulate(built->launch, memory, schedule);
  EXPECT_TRUE(succeeded(run) && !run->deadlock);
  return {memory.values("logits"), memory.values("topk_indices"), memory.values("topk_weights"),
          memory.values("shared_out")};
}

ref::Mxfp8Tensor referenceXq(const MoeInputs &in, int hidden) {
  return ref::quantizeMxfp8Rows(in.x, in.rows, hidden, formats::Mxfp8Variant::Standard);
}

/// Compares the routing; tokens whose 6th and 7th biased scores are a
/// near-tie are excluded and counted, never silently passed.
int checkRouting(const stages::ModelConfig &c, const MoeInputs &in, const MoeOutputs &got,
                 double scaling, bool logitsAreFinite = true) {
  const int e = int(c.experts), k = int(c.topK);
  std::vector<float> logits = ref::routerLogits(in.x, in.gate, in.rows, int(c.hidden), e);
  if (logitsAreFinite)
    expectWithinBounds(got.logits, logits, "router logits");
  ref::Routing want = ref::route(logits, in.bias, in.rows, e, k, scaling);
  int nearTies = 0;
  std::vector<float> gotWeights, wantWeights;
  for (int r = 0; r < in.rows; ++r) {
    if (want.nearTie[r]) {
      ++nearTies;
      continue;
    }
    for (int i = 0; i < k; ++i) {
      EXPECT_EQ(int(got.indices[r * k + i]), want.indices[r * k + i]) << "token " << r;
      gotWeights.push_back(got.weights[r * k + i]);
      wantWeights.push_back(want.weights[r * k + i]);
    }
  }
  expectWithinBounds(gotWeights, wantWeights, "routing weights");
  return nearTies;
}

TEST(MoeNumerics, TinyRouterAndSharedExpert) {
  const auto c = stages::tinyConfig();
  int nearTies = 0, tokens = 0;
  for (int tp : {2, 4})
    for (int rows : {1, 6, 48})
      for (unsigned seed = 1; seed <= 2; ++seed) {
        SCOPED_TRACE("tp " + std::to_string(tp) + " rows " + std::to_string(rows) + " seed " +
                     std::to_string(seed));
        MoeInputs in = makeMoeInputs(c, rows, tp, seed * 101u + rows + tp);
        MoeOutputs got = simulateMoe(c, tp, in, {sim::SchedulePolicy::Random, seed, 0});
        nearTies += checkRouting(c, in, got, c.routedScaling);
        tokens += rows;
        expectWithinBounds(got.shared,
                           ref::sharedExpert(referenceXq(in, int(c.hidden)), in.gateUp, in.down,
                                             in.intermediate, c.swigluLimit),
                           "shared expert");
      }
  // Near-ties are rare with these scores; a flood of them would hide bugs.
  EXPECT_LE(nearTies * 20, tokens) << nearTies << " near-ties in " << tokens << " tokens";
}

TEST(MoeNumerics, Dsv41Rows6) {
  const auto c = stages::dsv41Config();
  MoeInputs in = makeMoeInputs(c, 6, 2, 77u);
  MoeOutputs got = simulateMoe(c, 2, in);
  checkRouting(c, in, got, c.routedScaling);
  expectWithinBounds(got.shared,
                     ref::sharedExpert(referenceXq(in, int(c.hidden)), in.gateUp, in.down,
                                       in.intermediate, c.swigluLimit),
                     "shared expert");
}

TEST(MoeNumerics, TiesGoToTheLowerIndex) {
  // Zero gate weights and bias: every score is sqrt(log 2), all tied.
  const auto c = stages::tinyConfig();
  MoeInputs in = makeMoeInputs(c, 2, 2, 3u);
  std::fill(in.gate.begin(), in.gate.end(), 0.0f);
  std::fill(in.bias.begin(), in.bias.end(), 0.0f);
  MoeOutputs got = simulateMoe(c, 2, in);
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < int(c.topK); ++i) {
      EXPECT_EQ(got.indices[r * c.topK + i], float(i));
      EXPECT_FLOAT_EQ(got.weights[r * c.topK + i], c.routedScaling / float(c.topK));
    }
}

TEST(MoeNumerics, NanLogitsScoreZero) {
  // A NaN gate row makes that expert's logit NaN: its score is 0, so with a
  // large bias it is chosen first but carries weight 0; the rest stay finite.
  const auto c = stages::tinyConfig();
  MoeInputs in = makeMoeInputs(c, 3, 2, 4u);
  std::fill(in.gate.begin() + 5 * c.hidden, in.gate.begin() + 6 * c.hidden, NAN);
  in.bias[5] = 100.0f;
  MoeOutputs got = simulateMoe(c, 2, in);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(got.indices[r * c.topK], 5.0f);
    EXPECT_EQ(got.weights[r * c.topK], 0.0f);
    for (int i = 0; i < int(c.topK); ++i)
      EXPECT_TRUE(std::isfinite(got.weights[r * c.topK + i]));
  }
  checkRouting(c, in, got, c.routedScaling, /*logitsAreFinite=*/false);
}

TEST(MoeNumerics, RoutingWeightsPinnedToPickOrder) {
  // Logits above 20 make softplus(z) = z, so the scores sqrt(z) are exact
  // in f32 and the reference, fed the simulator's own logits, must give the
  // weights bit for bit: S summed in pick order, r = 1.5 / S, w = s * r. The
  // inputs must tell that from w = 1.5 s / S, the order it replaced.
  const auto c = stages::tinyConfig();
  const int rows = 48, e = int(c.experts), k = int(c.topK), h = int(c.hidden);
  MoeInputs in = makeMoeInputs(c, rows, 2, 91u);
  std::mt19937 rng(91u);
  std::uniform_real_distribution<float> logit(21.0f, 60.0f);
  // gate[e] = a_e x0 / |x0|^2: every token's logit near a_e times its
  // overlap with token 0, so take x the same for every token.
  double norm = 0;
  for (int d = 0; d < h; ++d)
    norm += double(in.x[d]) * in.x[d];
  for (int r = 1; r < rows; ++r)
    std::copy_n(in.x.begin(), h, in.x.begin() + size_t(r) * h);
  for (int ex = 0; ex < e; ++ex) {
    const float a = logit(rng);
    for (int d = 0; d < h; ++d)
      in.gate[size_t(ex) * h + d] = formats::roundToBf16(float(a * in.x[d] / norm));
  }
  for (float &b : in.bias)
    b = 0.5f * logit(rng) / 60.0f;
  MoeOutputs got = simulateMoe(c, 2, in);
  for (float z : got.logits)
    ASSERT_GT(z, 20.0f);
  ref::Routing want = ref::route(got.logits, in.bias, rows, e, k, c.routedScaling);
  int previousDiffers = 0;
  for (int r = 0; r < rows; ++r) {
    float total = 0;
    for (int i = 0; i < k; ++i)
      total += std::sqrt(got.logits[r * e + want.indices[r * k + i]]);
    for (int i = 0; i < k; ++i) {
      EXPECT_EQ(int(got.indices[r * k + i]), want.indices[r * k + i]) << "token " << r;
      const float s = std::sqrt(got.logits[r * e + want.indices[r * k + i]]);
      previousDiffers += c.routedScaling * s / total != want.weights[r * k + i];
    }
  }
  ASSERT_GT(previousDiffers, 0) << "the inputs must tell the two weight orders apart";
  EXPECT_EQ(got.weights, want.weights) << previousDiffers << " weights differ between the orders";
}

TEST(MoeNumerics, RoutedScalingOffBy3PercentFails) {
  auto c = stages::tinyConfig();
  MoeInputs in = makeMoeInputs(c, 6, 2, 8u);
  std::vector<float> logits =
      ref::routerLogits(in.x, in.gate, in.rows, int(c.hidden), int(c.experts));
  ref::Routing want = ref::route(logits, in.bias, in.rows, int(c.experts), int(c.topK), 1.5);
  auto perturbed = c;
  perturbed.routedScaling = 1.5f * 1.03f;
  MoeOutputs bad = simulateMoe(perturbed, 2, in), good = simulateMoe(c, 2, in);
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(bad.weights, want.weights)));
  EXPECT_TRUE(ref::withinStageBounds(ref::compare(good.weights, want.weights)));
}

} // namespace
