// Numerics of the attention back (split-K attention with the sink, combine,
// inverse RoPE, wo_a, wo_b) executed by the simulator, against the independent
// CPU reference (tests/reference/Attention.h) with the bounds of docs/numerics.md
// section 6. Caches hold real fp8_ds_mla records; the keys are found through
// block tables and top-k lists as a serving engine holds them (i32/i64).
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Attention.h"
#include "monodc/reference/LayerData.h"
#include "monodc/stages/Launches.h"

#include "FusedLaunch.h"
#include "LayerRig.h"
#include "MemoryInputs.h"
#include "StageBounds.h"

#include "RandomKvCache.h"
#include "RandomValues.h"
#include "RopeTable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace monodc;
using namespace monodc::testing;
namespace ref = monodc::reference;

namespace {

struct BackInputs {
  int rows = 0, heads = 0;
  ref::LayerDims dims;
  /// Positions, slots, block tables, the top-k lists, the compress ratio
  /// and the caches (the streams in it are not read).
  ref::StepInputs step;
  std::vector<float> q, cosSin, sinks;
  ref::BlockScaledE4m3 woA, woB;
  std::vector<float> woADense; ///< before quantization, for perturbed copies
};

/// A step as ref::randomStep makes it (token 0 at position 0: one window
/// key, no compressed key; windows through block tables that wrap pages;
/// top-k lists of `ratio`), with random q, sinks and weights.
BackInputs makeBackInputs(const stages::ModelConfig &c, int rows, int tp, unsigned seed,
                          int ratio = ref::kCompressRatio) {
  std::mt19937 rng(seed);
  BackInputs in;
  in.rows = rows;
  in.heads = int(c.heads / tp);
  in.dims = layerDims(c, tp);
  in.step = ref::randomStep(in.dims, rows, seed, ratio);
  const int dim = int(c.headDim);
  in.q = normalValues(rng, size_t(rows) * in.heads * dim, 0.0f, 1.0f, true);
  in.sinks = normalValues(rng, in.heads, 0.0f, 1.0f, false);
  in.cosSin = monodc::testing::ropeTable(c);
  const int groups = in.heads / int(c.headsPerGroup), width = int(c.headsPerGroup) * dim;
  in.woADense = normalValues(rng, size_t(groups) * c.groupRank * width, 0.0f, 0.02f, false);
  in.woA = ref::quantizeBlockE4m3(in.woADense, groups * int(c.groupRank), width);
  in.woB = ref::quantizeBlockE4m3(normalValues(rng, size_t(c.hidden) * groups * c.groupRank, 0.0f, 0.02f, false),
                                  int(c.hidden), groups * int(c.groupRank));
  return in;
}

struct BackOutputs {
  std::vector<float> o, partial;
};

/// The attention back built for compress ratio `ratio` (the step's unless
/// given) on the simulator.
/// `pagesAtLaunch` (> 0): the caches' pages given at launch, the first
/// that many of the step's; else the step's own. The RoPE table's rows and
/// the block tables' pages a row are the step's (its dims'), or with
/// `tablePagesAtLaunch` (> 0) the first that many pages of each row.
BackOutputs simulateBack(const stages::ModelConfig &c, int tp, const BackInputs &in,
                         const sim::Schedule &schedule = {}, int ratio = -1,
                         int pagesAtLaunch = 0, int tablePagesAtLaunch = 0) {
  mlir::MLIRContext ctx;
  auto module = monodc::testing::buildFusedLaunch(ctx, "attention_back", c, in.rows, tp,
                                                  /*grid=*/32,
                                                  ratio < 0 ? in.step.compressRatio : ratio);
  if (!module)
    return {};
  auto launch = monodc::testing::launchOf(*module);
  sim::LaunchMemory memory(launch);
  // The caches are the engine's: the launch takes their pages as given.
  const int pages = pagesAtLaunch > 0 ? pagesAtLaunch : in.dims.cachePages;
  const size_t cacheBytes = size_t(pages) * c.kvPageBytes();
  for (const char *cache : {"kv_cache", "compressed_cache"})
    EXPECT_FALSE(static_cast<bool>(memory.setRows(cache, pages)));
  // The engine's tables: as long as the positions it serves.
  const int stepPages = in.dims.tablePages();
  const int tablePages = tablePagesAtLaunch > 0 ? tablePagesAtLaunch : stepPages;
  EXPECT_FALSE(static_cast<bool>(memory.setRows("cos_sin", in.dims.ropePositions)));
  auto firstColumns = [&](const std::vector<float> &table) {
    std::vector<float> out;
    for (int t = 0; t < in.rows; ++t)
      out.insert(out.end(), table.begin() + size_t(t) * stepPages,
                 table.begin() + size_t(t) * stepPages + tablePages);
    return out;
  };
  for (const char *table : {"block_table", "compressed_block_table"})
    EXPECT_FALSE(static_cast<bool>(memory.setCols(table, tablePages)));
  setValues(memory, "q", in.q);
  setValues(memory, "positions", in.step.positions);
  setValues(memory, "slot_mapping", in.step.slots);
  setValues(memory, "cos_sin", in.cosSin);
  auto firstPages = [&](const std::vector<uint8_t> &bytes) {
    return std::vector<uint8_t>(bytes.begin(), bytes.begin() + cacheBytes);
  };
  setBytes(memory, "kv_cache", firstPages(in.step.window.bytes));
  setBytes(memory, "compressed_cache", firstPages(in.step.compressed.bytes));
  setValues(memory, "block_table", firstColumns(in.step.blockTables));
  setValues(memory, "compressed_block_table", firstColumns(in.step.compressedBlockTables));
  setValues(memory, "index_topk", in.step.topk);
  setValues(memory, "attn_sink", in.sinks);
  setBytes(memory, "wo_a", in.woA.codes);
  setBytes(memory, "wo_a_scale", in.woA.scales);
  setBytes(memory, "wo_b", in.woB.codes);
  setBytes(memory, "wo_b_scale", in.woB.scales);
  auto run = sim::simulate(launch, memory, schedule);
  EXPECT_TRUE(succeeded(run) && !run->deadlock) << (succeeded(run) ? run->describe() : "");
  return {memory.values("o"), memory.values("partial")};
}

/// The reference, token by token.
BackOutputs referenceBack(const stages::ModelConfig &c, const BackInputs &in) {
  BackOutputs out;
  const int dim = int(c.headDim);
  ref::AttentionBackWeights weights{in.sinks, in.woA, in.woB, int(c.headsPerGroup),
                                    int(c.groupRank)};
  for (int t = 0; t < in.rows; ++t) {
    std::vector<float> q(in.q.begin() + size_t(t) * in.heads * dim,
                         in.q.begin() + size_t(t + 1) * in.heads * dim);
    ref::AttentionBackResult r =
        ref::attentionBack(q, in.heads, int(in.step.positions[t]), in.cosSin, in.step.window,
                           &in.step.compressed, ref::tokenKeys(in.dims, in.step, t), weights);
    out.o.insert(out.o.end(), r.o.begin(), r.o.end());
    out.partial.insert(out.partial.end(), r.partial.begin(), r.partial.end());
  }
  return out;
}

void checkBack(const stages::ModelConfig &c, int rows, int tp, unsigned seed,
               int ratio = ref::kCompressRatio) {
  SCOPED_TRACE("config " + c.name + ", rows " + std::to_string(rows) + ", TP " +
               std::to_string(tp) + ", seed " + std::to_string(seed) + ", ratio " +
               std::to_string(ratio));
  BackInputs in = makeBackInputs(c, rows, tp, seed, ratio);
  BackOutputs got = simulateBack(c, tp, in), want = referenceBack(c, in);
  expectWithinBounds(got.o, want.o, "attention o");
  expectWithinBounds(got.partial, want.partial, "wo_b partial");
}

} // namespace

TEST(AttentionBackNumerics, TinyManySeedsAndWidths) {
  for (int tp : {2, 4})
    for (int rows : {1, 6, 48})
      for (unsigned seed = 1; seed <= 2; ++seed)
        checkBack(stages::tinyConfig(), rows, tp, seed * 104729u + rows + tp);
}

TEST(AttentionBackNumerics, EveryCompressRatio) {
  for (int ratio : {0, 1, 2})
    checkBack(stages::tinyConfig(), 6, 2, 613u + ratio, ratio);
}

TEST(AttentionBackNumerics, Dsv41Rows2) { checkBack(stages::dsv41Config(), 2, 4, 2026u); }

// A ratio-2 layer fed a ratio-1 step (twice the compressed rows, each list
// up to its position) must leave the bounds of the ratio-1 reference: the
// launch masks every row not yet written at its own ratio.
TEST(AttentionBackNumerics, ARatio2LaunchFedARatio1StepFails) {
  const auto c = stages::tinyConfig();
  BackInputs in = makeBackInputs(c, 6, 2, 619u, /*ratio=*/1);
  const BackOutputs want = referenceBack(c, in);
  expectWithinBounds(simulateBack(c, 2, in).o, want.o, "attention o at its own ratio");
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(simulateBack(c, 2, in, {}, 2).o, want.o)));
}

// What a serving engine may hand over and the keys must not take: block-table
// entries naming no page of the cache (-1, past the last page) and top-k
// entries naming compressed rows not yet written. The launch masks them as
// the reference does; had it read through them, o would move (checked by
// the same entries made valid).
TEST(AttentionBackNumerics, EntriesOutsideTheCacheOrNotYetWrittenAreMasked) {
  const auto c = stages::tinyConfig();
  BackInputs in = makeBackInputs(c, 6, 2, 631u);
  const int pages = in.dims.tablePages(), p = int(in.step.positions[3]);
  const int newest = p / int(c.kKvPageTokens);
  BackInputs bad = in;
  bad.step.blockTables[size_t(3) * pages + newest] = -1.0f;
  bad.step.compressedBlockTables[size_t(4) * pages] = float(c.kvCachePages + 5);
  const int written = (int(in.step.positions[5]) + 1) / 2;
  for (int j = 0; j < 8; ++j)
    bad.step.topk[size_t(5) * c.compressedKeys + j] = float(written + j);
  const BackOutputs want = referenceBack(c, bad);
  expectWithinBounds(simulateBack(c, 2, bad).o, want.o, "attention o");
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(referenceBack(c, in).o, want.o)));
}

// The caches are sized by the serving engine, not by the build: a launch
// built for the config's 64 pages reads keys on pages past them when given
// 200 (the step's tables name pages up to 199), within bounds of the
// reference; given only the first 150, the keys on the others are masked
// and o moves out of bounds.
TEST(AttentionBackNumerics, ACacheSizedAtLaunchServesPagesPastTheBuildsCount) {
  const auto c = stages::tinyConfig();
  stages::ModelConfig engine = c;
  engine.kvCachePages = 200;
  BackInputs in = makeBackInputs(engine, 6, 2, 97u);
  ASSERT_EQ(c.kvCachePages, 64);
  const int most = int(*std::max_element(in.step.blockTables.begin(), in.step.blockTables.end()));
  ASSERT_GE(most, 150) << "the step's tables name pages past the build's and past 150";
  const BackOutputs want = referenceBack(c, in);
  const BackOutputs got = simulateBack(c, 2, in);
  expectWithinBounds(got.o, want.o, "attention o");
  expectWithinBounds(got.partial, want.partial, "wo_b partial");
  const BackOutputs fewer = simulateBack(c, 2, in, {}, -1, /*pagesAtLaunch=*/150);
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(fewer.o, want.o)));
}

// The positions are the engine's too: a launch built for the config's 256
// positions (8 pages a block-table row) serves a step at positions up to
// 4 x 256 when given a RoPE table of that many rows and block tables of 32
// pages a row, within bounds of the reference; given only the build's 8
// pages of each row, the keys past them are masked and o moves out of bounds.
TEST(AttentionBackNumerics, TablesSizedAtLaunchServePositionsPastTheBuilds) {
  const auto c = stages::tinyConfig();
  stages::ModelConfig engine = c;
  engine.ropePositions = 4 * c.ropePositions;
  BackInputs in = makeBackInputs(engine, 6, 2, 401u);
  ASSERT_EQ(in.dims.tablePages(), 4 * c.blockTablePages());
  const float latest = *std::max_element(in.step.positions.begin(), in.step.positions.end());
  ASSERT_GE(latest, float(2 * c.ropePositions)) << "the step reaches past the build's positions";
  const BackOutputs want = referenceBack(c, in);
  const BackOutputs got = simulateBack(c, 2, in);
  expectWithinBounds(got.o, want.o, "attention o");
  expectWithinBounds(got.partial, want.partial, "wo_b partial");
  const BackOutputs shortTables =
      simulateBack(c, 2, in, {}, -1, 0, /*tablePagesAtLaunch=*/int(c.blockTablePages()));
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(shortTables.o, want.o)));
}

TEST(AttentionBackNumerics, SchedulesGiveBitIdenticalOutputs) {
  const auto c = stages::tinyConfig();
  BackInputs in = makeBackInputs(c, 6, 2, 17u);
  BackOutputs first = simulateBack(c, 2, in);
  for (uint64_t s = 1; s <= 3; ++s) {
    BackOutputs again = simulateBack(c, 2, in, {sim::SchedulePolicy::Random, s, 0});
    EXPECT_EQ(again.o, first.o);
    EXPECT_EQ(again.partial, first.partial);
  }
}

TEST(AttentionBackNumerics, OneWoABlockScaleOff3PercentFails) {
  const auto c = stages::tinyConfig();
  BackInputs in = makeBackInputs(c, 6, 2, 23u);
  BackOutputs want = referenceBack(c, in);
  // One E8M0 block scale cannot move by 3%: scale that block's weights by
  // 1.03 and requantize it, as a checkpoint with that block off would be.
  BackInputs off = in;
  const int width = int(off.woA.k);
  std::vector<float> dense = off.woADense;
  for (int r = 0; r < 32; ++r)
    for (int k = 0; k < 32; ++k)
      dense[size_t(r) * width + k] *= 1.03f;
  off.woA = ref::quantizeBlockE4m3(dense, int(off.woA.n), width);
  BackOutputs got = simulateBack(c, 2, off);
  expectWithinBounds(got.o, want.o, "attention o (wo_a is after it)");
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(got.partial, want.partial)));
}

TEST(AttentionBackNumerics, IgnoringTheSinkIsCaught) {
  const auto c = stages::tinyConfig();
  BackInputs in = makeBackInputs(c, 6, 2, 29u);
  BackOutputs want = referenceBack(c, in);
  BackInputs noSink = in;
  for (float &s : noSink.sinks)
    s = -std::numeric_limits<float>::infinity();
  // Sinks near the scores move o by far more than the bound.
  EXPECT_FALSE(ref::withinStageBounds(ref::compare(simulateBack(c, 2, noSink).o, want.o)));
}

// A position past its bound (the RoPE table's rows) breaks the index
// contract; the launch must still read nothing outside its tables and
// caches (the simulator refuses any such read): its rotation takes the
// table's last row and its keys past the block table are masked.
TEST(AttentionBackNumerics, APositionPastItsBoundReadsNothingOutside) {
  const auto c = stages::tinyConfig();
  BackInputs in = makeBackInputs(c, 6, 2, 641u);
  in.step.positions[2] = float(c.ropePositions + 40);
  const BackOutputs got = simulateBack(c, 2, in);
  ASSERT_EQ(got.o.size(), size_t(6) * in.heads * c.headDim);
  for (float v : got.o)
    ASSERT_TRUE(std::isfinite(v));
}
