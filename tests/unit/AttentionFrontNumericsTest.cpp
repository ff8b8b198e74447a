// Numerics of the first stages (seam norm, wqkv, q/kv norms) executed by the
// simulator, against the independent CPU reference (tests/reference) with the
// bounds of DSV41.md section 6. MXFP8 codes and scales are checked exactly.
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Reference.h"
#include "monodc/stages/Launches.h"

#include <gtest/gtest.h>

#include <random>

using namespace monodc;
namespace ref = monodc::reference;

namespace {

struct FrontInputs {
  std::vector<float> u, attnNorm, qNorm, kvNorm;
  ref::BlockScaledE4m3 wqkv;
};

std::vector<float> bf16Normal(std::mt19937 &rng, size_t n, float mean, float stddev) {
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> v(n);
  for (float &x : v)
    x = formats::roundToBf16(dist(rng));
  return v;
}

FrontInputs makeInputs(const stages::ModelConfig &c, int rows, unsigned seed) {
  std::mt19937 rng(seed);
  FrontInputs in;
  in.u = bf16Normal(rng, size_t(rows) * c.hidden, 0.0f, 1.0f);
  // Rows of very different magnitudes: the norm must not care.
  for (int r = 0; r < rows; ++r)
    for (int64_t d = 0; d < c.hidden; ++d)
      in.u[r * c.hidden + d] = formats::roundToBf16(in.u[r * c.hidden + d] * std::ldexp(1.0f, (r % 7) * 3 - 9));
  in.attnNorm = bf16Normal(rng, c.hidden, 1.0f, 0.1f);
  in.qNorm = bf16Normal(rng, c.qRank, 1.0f, 0.1f);
  in.kvNorm = bf16Normal(rng, c.kvDim, 1.0f, 0.1f);
  std::normal_distribution<float> w(0.0f, 0.02f);
  std::vector<float> dense(size_t(c.qkvWidth()) * c.hidden);
  for (float &x : dense)
    x = w(rng);
  in.wqkv = ref::quantizeBlockE4m3(dense, int(c.qkvWidth()), int(c.hidden));
  return in;
}

struct FrontOutputs {
  std::vector<float> y, qkv, qn, kn;
  std::vector<uint8_t> xq, xs;
};

FrontOutputs simulateFront(const stages::ModelConfig &c, int rows, const FrontInputs &in) {
  mlir::MLIRContext ctx;
  stages::BuildParams params;
  params.rows = rows;
  auto module = stages::buildLaunch(ctx, "attention_front", c, params);
  EXPECT_TRUE(static_cast<bool>(module));
  EXPECT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto launch = *(*module)->getOps<mono::LaunchOp>().begin();
  sim::LaunchMemory memory(launch);
  auto check = [](llvm::Error e) { EXPECT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e)); };
  check(memory.setValues("u", in.u));
  check(memory.setValues("attn_norm", in.attnNorm));
  check(memory.setValues("q_norm", in.qNorm));
  check(memory.setValues("kv_norm", in.kvNorm));
  check(memory.setBytes("wqkv", in.wqkv.codes));
  check(memory.setBytes("wqkv_scale", in.wqkv.scales));
  auto run = sim::simulate(launch, memory);
  EXPECT_TRUE(succeeded(run) && !run->deadlock) << (succeeded(run) ? run->describe() : "");
  return {memory.values("y"), memory.values("qkv"), memory.values("qn"), memory.values("kn"),
          memory.bytes("xq"), memory.bytes("xs")};
}

/// The reference chain, from DSV41.md, on the reference's own intermediates.
FrontOutputs referenceFront(const stages::ModelConfig &c, int rows, const FrontInputs &in) {
  FrontOutputs out;
  const int h = int(c.hidden), qr = int(c.qRank), kv = int(c.kvDim), w = int(c.qkvWidth());
  out.y = ref::rmsNorm(in.u, rows, h, in.attnNorm, c.normEps);
  ref::Mxfp8Tensor xq = ref::quantizeMxfp8Rows(out.y, rows, h, formats::Mxfp8Variant::Standard);
  out.xq = xq.codes;
  out.xs = xq.scales;
  out.qkv = ref::gemvMxfp8xE4m3(xq, in.wqkv);
  std::vector<float> q(size_t(rows) * qr), k(size_t(rows) * kv);
  for (int r = 0; r < rows; ++r) {
    std::copy_n(out.qkv.begin() + size_t(r) * w, qr, q.begin() + size_t(r) * qr);
    std::copy_n(out.qkv.begin() + size_t(r) * w + qr, kv, k.begin() + size_t(r) * kv);
  }
  out.qn = ref::rmsNorm(q, rows, qr, in.qNorm, c.normEps);
  out.kn = ref::rmsNorm(k, rows, kv, in.kvNorm, c.normEps);
  return out;
}

void expectWithinBounds(const std::vector<float> &got, const std::vector<float> &want,
                        const std::string &what) {
  ref::Comparison c = ref::compare(got, want);
  EXPECT_TRUE(ref::withinStageBounds(c))
      << what << ": relative error " << c.relativeError << ", cosine " << c.cosine
      << (c.nonFinite ? ", non-finite values" : "");
}

void checkFront(const stages::ModelConfig &c, int rows, unsigned seed) {
  SCOPED_TRACE("config " + c.name + ", rows " + std::to_string(rows) + ", seed " +
               std::to_string(seed));
  FrontInputs in = makeInputs(c, rows, seed);
  FrontOutputs got = simulateFront(c, rows, in);
  FrontOutputs want = referenceFront(c, rows, in);
  expectWithinBounds(got.y, want.y, "seam norm y");
  expectWithinBounds(got.qkv, want.qkv, "wqkv");
  expectWithinBounds(got.qn, want.qn, "q norm");
  expectWithinBounds(got.kn, want.kn, "kv norm");
  // The quantizer is exact: MXFP8 of the simulator's own y, bit for bit.
  ref::Mxfp8Tensor mine =
      ref::quantizeMxfp8Rows(got.y, rows, int(c.hidden), formats::Mxfp8Variant::Standard);
  EXPECT_EQ(got.xq, mine.codes);
  EXPECT_EQ(got.xs, mine.scales);
}

TEST(AttentionFrontNumerics, TinyManySeedsAndWidths) {
  for (int rows : {1, 6, 48})
    for (unsigned seed = 1; seed <= 4; ++seed)
      checkFront(stages::tinyConfig(), rows, seed * 7919u + rows);
}

TEST(AttentionFrontNumerics, Dsv41Rows6) { checkFront(stages::dsv41Config(), 6, 2026u); }

TEST(AttentionFrontNumerics, NormWeightOffBy3PercentFails) {
  const auto c = stages::tinyConfig();
  FrontInputs in = makeInputs(c, 6, 11u);
  FrontOutputs want = referenceFront(c, 6, in);
  FrontInputs perturbed = in;
  for (float &w : perturbed.attnNorm)
    w = formats::roundToBf16(w * 1.03f);
  FrontOutputs got = simulateFront(c, 6, perturbed);
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(got.y, want.y)));
  // The unperturbed run passes the same check: the failure is the 3%.
  EXPECT_TRUE(ref::withinStageBounds(ref::compare(simulateFront(c, 6, in).y, want.y)));
}

TEST(AttentionFrontNumerics, OneWeightBlockScaleWrongFails) {
  const auto c = stages::tinyConfig();
  FrontInputs in = makeInputs(c, 6, 12u);
  FrontOutputs want = referenceFront(c, 6, in);
  FrontInputs perturbed = in;
  // The scales of output rows 32..63 are one step (x2) too large.
  const int kBlocks = int(c.hidden / 32);
  for (int b = 0; b < kBlocks; ++b)
    perturbed.wqkv.scales[1 * kBlocks + b] += 1;
  FrontOutputs got = simulateFront(c, 6, perturbed);
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(got.qkv, want.qkv)));
}

TEST(AttentionFrontNumerics, OneRoundingTooManyIsSeenExactly) {
  // A stage that rounded the activation twice would still pass the loose
  // bounds; the exact MXFP8 check is what catches quantizer mistakes. Here the
  // codes of a deliberately re-quantized row must differ from the exact ones.
  const auto c = stages::tinyConfig();
  FrontInputs in = makeInputs(c, 1, 13u);
  FrontOutputs got = simulateFront(c, 1, in);
  std::vector<float> scaled(got.y);
  for (float &v : scaled)
    v = formats::roundToBf16(v * 1.5f);
  ref::Mxfp8Tensor wrong =
      ref::quantizeMxfp8Rows(scaled, 1, int(c.hidden), formats::Mxfp8Variant::Standard);
  EXPECT_NE(got.xq, wrong.codes);
}

} // namespace
