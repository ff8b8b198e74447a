// Numerics of the first stages (seam norm, wqkv, q/kv norms) executed by the
// simulator, against the independent CPU reference (tests/reference) with the
// bounds of DSV41.md section 6. MXFP8 codes and scales are checked exactly.
#include "AttentionFrontFixture.h"

#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Reference.h"
#include "monodc/stages/Launches.h"

#include "StageBounds.h"

#include <gtest/gtest.h>

#include <random>

using namespace monodc;
using namespace monodc::testing;
namespace ref = monodc::reference;

namespace {

void checkFront(const stages::ModelConfig &c, int rows, unsigned seed) {
  SCOPED_TRACE("config " + c.name + ", rows " + std::to_string(rows) + ", seed " +
               std::to_string(seed));
  FrontInputs in = makeFrontInputs(c, rows, seed);
  FrontOutputs got = simulateFront(c, rows, in);
  FrontOutputs want = referenceFront(c, rows, in);
  expectWithinBounds(got.y, want.y, "seam norm y");
  expectWithinBounds(got.qkv, want.qkv, "wqkv");
  expectWithinBounds(got.qn, want.qn, "q norm");
  expectWithinBounds(got.kn, want.kn, "kv norm");
  expectWithinBounds(got.k, want.k, "k with RoPE");
  // RoPE itself is exact: the reference rotation of the simulator's own kn.
  EXPECT_EQ(got.k, ref::keyRope(got.kn, in.positions, in.cosSin, rows, int(c.kvDim),
                                int(c.ropeDim)));
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
  FrontInputs in = makeFrontInputs(c, 6, 11u);
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
  FrontInputs in = makeFrontInputs(c, 6, 12u);
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
  FrontInputs in = makeFrontInputs(c, 1, 13u);
  FrontOutputs got = simulateFront(c, 1, in);
  std::vector<float> scaled(got.y);
  for (float &v : scaled)
    v = formats::roundToBf16(v * 1.5f);
  ref::Mxfp8Tensor wrong =
      ref::quantizeMxfp8Rows(scaled, 1, int(c.hidden), formats::Mxfp8Variant::Standard);
  EXPECT_NE(got.xq, wrong.codes);
}

} // namespace

namespace {
TEST(AttentionFrontNumerics, RopeWithSwappedSinIsCaught) {
  // A rotation by -angle (sin negated) must fail the exact check.
  const auto c = stages::tinyConfig();
  FrontInputs in = makeFrontInputs(c, 6, 21u);
  FrontOutputs got = simulateFront(c, 6, in);
  std::vector<float> flipped = in.cosSin;
  for (size_t p = 0; p < size_t(c.ropePositions); ++p)
    for (int j = 0; j < int(c.ropeDim) / 2; ++j)
      flipped[p * c.ropeDim + c.ropeDim / 2 + j] *= -1.0f;
  EXPECT_NE(got.k, ref::keyRope(got.kn, in.positions, flipped, 6, int(c.kvDim), int(c.ropeDim)));
}
} // namespace
