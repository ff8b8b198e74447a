// The mHC seam stages (fold, mix, gate, norm) through the fusion passes and
// the simulator, against the independent reference (tests/reference/Mhc):
// R' and u bit for bit (the contract fixes their f32 order), the gates,
// Sinkhorn comb and y within the docs/numerics.md section 6 bounds.
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

#include <cmath>
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

// The fold's order as it stood before vLLM's was pinned: px first, then the
// products added, the last by fma. Kept here only to prove that the
// cancellation inputs below tell the two orders apart.
float previousFoldOrder(const ref::MhcInputs &in, int row, int o, int d) {
  const int h = in.hidden;
  const float *R = in.residual.data() + size_t(row) * 4 * h;
  const float *comb = in.comb.data() + row * 16;
  float acc = in.post[row * 4 + o] * in.x[size_t(row) * h + d];
  for (int s = 0; s < 3; ++s) {
    const float product = comb[s * 4 + o] * R[s * h + d];
    acc = acc + product;
  }
  return formats::roundToBf16(std::fma(comb[12 + o], R[3 * h + d], acc));
}

TEST(MhcSeamNumerics, FoldOrderPinnedWhereTermsCancel) {
  // Stream 1 is minus stream 0 and its comb weight 2^-14 larger, streams 2
  // and 3 and post * x are as small as that difference: R' keeps only the
  // low bits of the large products, where the two orders' roundings differ.
  const auto c = stages::tinyConfig();
  const int rows = 6, h = int(c.hidden);
  ref::MhcInputs in = makeSeamInputs(c, rows, 13u);
  for (int r = 0; r < rows; ++r) {
    float *R = in.residual.data() + size_t(r) * 4 * h;
    float *comb = in.comb.data() + r * 16;
    for (int d = 0; d < h; ++d) {
      R[h + d] = -R[d];
      R[2 * h + d] = std::ldexp(R[2 * h + d], -14);
      R[3 * h + d] = std::ldexp(R[3 * h + d], -14);
    }
    for (int o = 0; o < 4; ++o) {
      comb[4 + o] = comb[o] * (1.0f + 0x1p-14f);
      in.post[r * 4 + o] = std::ldexp(in.post[r * 4 + o], -14);
    }
  }
  ref::MhcOutputs want = ref::mhcSeam(in);
  int differing = 0;
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < 4; ++o)
      for (int d = 0; d < h; ++d)
        differing += previousFoldOrder(in, r, o, d) != want.residual[size_t(r) * 4 * h + o * h + d];
  ASSERT_GT(differing, 0) << "the inputs must tell the fold orders apart";
  SeamResult got = simulateSeam(c, in, {sim::SchedulePolicy::Random, 13u, 0});
  ASSERT_FALSE(got.deadlock);
  EXPECT_EQ(got.out.residual, want.residual) << "R' must follow the pinned order bit for bit ("
                                             << differing << " values differ between the orders)";
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
