// Numerics of the first stages (seam norm, wqkv, q/kv norms, key RoPE, KV
// insert) executed by the
// simulator, against the independent CPU reference (tests/reference) with the
// bounds of docs/numerics.md section 6. MXFP8 codes and scales are checked exactly.
#include "AttentionFrontFixture.h"

#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Reference.h"
#include "monodc/dsl/Launch.h"
#include "monodc/stages/AttentionFront.h"
#include "monodc/stages/Launches.h"

#include "StageBounds.h"

#include <gtest/gtest.h>

#include <memory>
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
  // The KV insert is exact: the reference records of the simulator's own k,
  // at the same slots, over the same poisoned cache (pads left untouched).
  EXPECT_TRUE(got.cache == referenceCache(c, rows, in, got.k)) << "KV cache differs";
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

namespace {

/// The KV insert alone, on keys given as input, over the inputs' slots and
/// poisoned cache: the cache it leaves.
std::vector<uint8_t> insertAlone(const stages::ModelConfig &c, int rows, const FrontInputs &in,
                                 const std::vector<float> &k) {
  mlir::MLIRContext ctx;
  dsl::Launch launch(ctx, "kv_insert", {"gfx950", 16, 256, rows});
  stages::KvInsertRegions r{
      launch.input("k", dsl::bf16, {rows, c.kvDim}),
      launch.indexInput("slot_mapping", {rows, 1}, c.kvCachePages * c.kKvPageTokens),
      launch.output("kv_cache", dsl::byte, {c.kvCachePages, c.kvPageBytes()})};
  stages::addKvInsert(launch, c, r);
  auto module = launch.finish();
  EXPECT_TRUE(static_cast<bool>(module)) << (module ? "" : llvm::toString(module.takeError()));
  if (!module)
    return {};
  EXPECT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto op = *(*module)->getOps<mono::LaunchOp>().begin();
  sim::LaunchMemory memory(op);
  EXPECT_FALSE(static_cast<bool>(memory.setValues("k", k)));
  EXPECT_FALSE(static_cast<bool>(memory.setValues("slot_mapping", in.slots)));
  EXPECT_FALSE(static_cast<bool>(memory.setBytes("kv_cache", in.cacheBefore)));
  auto run = sim::simulate(op, memory);
  EXPECT_TRUE(succeeded(run) && !run->deadlock);
  return memory.bytes("kv_cache");
}

/// Keys at the edges of the record's quantizer: huge and tiny groups, zeros,
/// exact powers of two and values that round to the e4m3 maximum.
std::vector<float> edgeKeys(const stages::ModelConfig &c, int rows) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> k(size_t(rows) * c.kvDim);
  for (int r = 0; r < rows; ++r)
    for (int64_t d = 0; d < c.kvDim; ++d) {
      const float scale = r == 0 ? 1e30f : r == 1 ? 1e-30f : r == 2 ? 0.0f : 1.0f;
      float v = scale * normal(rng);
      if (r == 3)
        v = d % 64 == 0 ? 448.0f : std::ldexp(1.0f, int(d % 20) - 10);
      if (r == 4)
        v = d % 64 == 0 ? 464.0f : 0.001f * normal(rng);  // 464 rounds past 448
      k[size_t(r) * c.kvDim + d] = formats::roundToBf16(v);
    }
  return k;
}

} // namespace

// The cache is sized by the serving engine, not by the build: a launch built
// for the config's 64 pages, given 200, writes keys on pages past 64 (every
// byte as the reference's insert), and skips a slot past the 200 pages as a
// pad row's, writing nothing outside the cache.
TEST(KvInsertNumerics, ACacheSizedAtLaunchTakesSlotsPastTheBuildsPages) {
  const auto built = stages::tinyConfig();
  stages::ModelConfig engine = built;
  engine.kvCachePages = 200;
  const int rows = 6;
  FrontInputs in = makeFrontInputs(engine, rows, 404u);
  const int64_t slots = engine.kvCachePages * engine.kKvPageTokens;
  in.slots = {4100.0f, -1.0f, float(slots - 1), 70.0f, float(slots + 3), 5000.0f};
  const FrontOutputs got = simulateFront(engine, rows, in, {}, &built);
  FrontInputs skipped = in;
  skipped.slots[4] = -1.0f;
  EXPECT_TRUE(got.cache == referenceCache(engine, rows, skipped, got.k)) << "KV cache differs";
  // Read as the build's 64 pages, the records past them would be lost.
  EXPECT_FALSE(got.cache == in.cacheBefore);
  const size_t page64 = size_t(64) * engine.kvPageBytes();
  EXPECT_FALSE(std::equal(got.cache.begin() + page64, got.cache.end(), in.cacheBefore.begin() + page64))
      << "keys on pages past the build's 64";
}

TEST(KvInsertNumerics, EdgeKeysAreRecordedExactly) {
  for (const auto &c : {stages::tinyConfig(), stages::dsv41Config()}) {
    SCOPED_TRACE(c.name);
    FrontInputs in = makeFrontInputs(c, 6, 3u);
    ASSERT_EQ(in.slots[1], -1.0f);  // token 1 (the tiny keys) is a pad row
    std::vector<float> k = edgeKeys(c, 6);
    EXPECT_TRUE(insertAlone(c, 6, in, k) == referenceCache(c, 6, in, k));
  }
}

TEST(KvInsertNumerics, AKeyOneBf16UlpOffIsCaught) {
  const auto c = stages::tinyConfig();
  FrontInputs in = makeFrontInputs(c, 6, 4u);
  std::vector<float> k = edgeKeys(c, 6), off = k;
  // A rope dim one bf16 step off (token 5) changes its record's bytes.
  float &v = off[5 * c.kvDim + c.kvDim - 1];
  v = formats::bf16Value(uint16_t(formats::bf16Bits(v) + 1));
  EXPECT_FALSE(insertAlone(c, 6, in, k) == referenceCache(c, 6, in, off));
}
