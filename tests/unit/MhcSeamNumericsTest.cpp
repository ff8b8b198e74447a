// The mHC seam stages (fold, mix, gate, norm) through the fusion passes and
// the simulator, against the independent reference (tests/reference/Mhc):
// R' and u bit for bit (the contract fixes their f32 order), the gates,
// Sinkhorn comb and y within the DSV41.md section 6 bounds.
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Mhc.h"
#include "monodc/reference/Reference.h"
#include "monodc/stages/Launches.h"

#include "FusedLaunch.h"
#include "MemoryInputs.h"
#include "StageBounds.h"

#include <gtest/gtest.h>

#include <random>

using namespace monodc;
namespace ref = monodc::reference;
using monodc::testing::expectWithinBounds;
using monodc::testing::setValues;

namespace {

ref::MhcInputs makeSeamInputs(const stages::ModelConfig &c, int rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  const int h = int(c.hidden), flat = 4 * h;
  ref::MhcInputs in;
  in.rows = rows;
  in.hidden = h;
  auto fill = [&](std::vector<float> &v, size_t n, auto make) {
    v.resize(n);
    for (float &x : v)
      x = make();
  };
  fill(in.residual, size_t(rows) * flat, [&] { return formats::roundToBf16(normal(rng)); });
  fill(in.x, size_t(rows) * h, [&] { return formats::roundToBf16(normal(rng)); });
  fill(in.post, size_t(rows) * 4, [&] { return 0.2f + 1.6f * uniform(rng); });
  fill(in.comb, size_t(rows) * 16, [&] { return 0.5f * uniform(rng); });
  fill(in.preIn, size_t(rows) * 4, [&] { return 0.1f + 0.9f * uniform(rng); });
  const float fnScale = 1.0f / std::sqrt(float(flat));
  fill(in.fn, size_t(24) * flat, [&] { return fnScale * normal(rng); });
  fill(in.base, 24, [&] { return 0.5f * normal(rng); });
  in.scale = {0.5f, 0.5f, 1.0f};
  fill(in.normWeight, size_t(h), [&] { return formats::roundToBf16(1.0f + 0.1f * normal(rng)); });
  return in;
}

struct SeamResult {
  ref::MhcOutputs out;
  bool deadlock = false;
};

SeamResult simulateSeam(const stages::ModelConfig &c, const ref::MhcInputs &in,
                        const sim::Schedule &schedule) {
  mlir::MLIRContext ctx;
  auto module = monodc::testing::buildFusedLaunch(ctx, "attention_seam", c,
                                                  in.rows, /*tp=*/2, /*grid=*/16);
  if (!module)
    return {};
  auto launch = monodc::testing::launchOf(*module);
  sim::LaunchMemory memory(launch);
  setValues(memory, "residual", in.residual);
  setValues(memory, "x", in.x);
  setValues(memory, "post_in", in.post);
  setValues(memory, "comb_in", in.comb);
  setValues(memory, "pre_in", in.preIn);
  setValues(memory, "hc_fn", in.fn);
  setValues(memory, "hc_base", in.base);
  setValues(memory, "hc_scale", in.scale);
  setValues(memory, "attn_norm", in.normWeight);
  auto run = sim::simulate(launch, memory, schedule);
  EXPECT_TRUE(succeeded(run));
  SeamResult result;
  result.deadlock = succeeded(run) && run->deadlock;
  result.out.residual = memory.values("residual_out");
  result.out.u = memory.values("u");
  result.out.pre = memory.values("pre");
  result.out.post = memory.values("post");
  result.out.comb = memory.values("comb");
  result.out.y = memory.values("y");
  return result;
}

void checkSeam(const stages::ModelConfig &c, int rows, unsigned seed) {
  SCOPED_TRACE(c.name + " rows " + std::to_string(rows) + " seed " + std::to_string(seed));
  ref::MhcInputs in = makeSeamInputs(c, rows, seed);
  SeamResult got = simulateSeam(c, in, {sim::SchedulePolicy::Random, seed, 0});
  ASSERT_FALSE(got.deadlock);
  ref::MhcOutputs want = ref::mhcSeam(in);
  EXPECT_EQ(got.out.residual, want.residual) << "R' must match bit for bit";
  EXPECT_EQ(got.out.u, want.u) << "u must match bit for bit";
  expectWithinBounds(got.out.pre, want.pre, "pre");
  expectWithinBounds(got.out.post, want.post, "post");
  expectWithinBounds(got.out.comb, want.comb, "comb");
  expectWithinBounds(got.out.y, want.y, "y");
  // Sinkhorn leaves comb close to doubly stochastic.
  for (int r = 0; r < rows; ++r)
    for (int b = 0; b < 4; ++b) {
      float column = 0;
      for (int a = 0; a < 4; ++a)
        column += got.out.comb[r * 16 + a * 4 + b];
      EXPECT_NEAR(column, 1.0f, 1e-3f);
    }
}

TEST(MhcSeamNumerics, TinyManySeedsAndWidths) {
  for (int rows : {1, 6, 48})
    for (unsigned seed = 1; seed <= 3; ++seed)
      checkSeam(stages::tinyConfig(), rows, seed * 31u + rows);
}

TEST(MhcSeamNumerics, Dsv41Rows2) { checkSeam(stages::dsv41Config(), 2, 7u); }

TEST(MhcSeamNumerics, PreOffBy3PercentFails) {
  const auto c = stages::tinyConfig();
  ref::MhcInputs in = makeSeamInputs(c, 6, 5u);
  ref::MhcOutputs want = ref::mhcSeam(in);
  ref::MhcInputs perturbed = in;
  for (float &p : perturbed.preIn)
    p *= 1.03f;
  SeamResult got = simulateSeam(c, perturbed, {});
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(got.out.u, want.u)));
  // And the unperturbed inputs pass the same comparison.
  EXPECT_TRUE(ref::withinStageBounds(ref::compare(simulateSeam(c, in, {}).out.u, want.u)));
}

TEST(MhcSeamNumerics, AWrongSinkhornScaleFails) {
  // scale2 off by 3% moves the comb logits; after Sinkhorn the error must
  // still be visible against the bound.
  const auto c = stages::tinyConfig();
  ref::MhcInputs in = makeSeamInputs(c, 6, 9u);
  in.scale = {0.5f, 0.5f, 4.0f};  // sharp logits, so the scale matters
  ref::MhcOutputs want = ref::mhcSeam(in);
  ref::MhcInputs perturbed = in;
  perturbed.scale[2] *= 1.03f;
  SeamResult got = simulateSeam(c, perturbed, {});
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(got.out.comb, want.comb)));
}

} // namespace
