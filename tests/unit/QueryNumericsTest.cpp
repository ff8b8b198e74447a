// The query path (MXFP8(qn) -> wq_b -> per-head RoPE) through the fusion
// passes and the simulator, against the reference: q within the docs/numerics.md
// bounds, the RoPE of every head exact on the simulator's own wq_b output.
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Reference.h"
#include "monodc/stages/Launches.h"

#include "FusedLaunch.h"
#include "RopeTable.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace monodc;
namespace ref = monodc::reference;

namespace {

struct QueryCase {
  std::vector<float> qn, positions, cosSin;
  ref::BlockScaledE4m3 wqb;
  int rows = 0, heads = 0;
};

QueryCase makeCase(const stages::ModelConfig &c, int rows, int tp, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  QueryCase q;
  q.rows = rows;
  q.heads = int(c.heads / tp);
  for (int i = 0; i < rows * int(c.qRank); ++i)
    q.qn.push_back(formats::roundToBf16(normal(rng)));
  std::uniform_int_distribution<int> position(0, int(c.ropePositions) - 1);
  for (int r = 0; r < rows; ++r)
    q.positions.push_back(float(position(rng)));
  q.cosSin = monodc::testing::ropeTable(c);
  const int width = q.heads * int(c.headDim);
  std::vector<float> dense(size_t(width) * c.qRank);
  for (float &w : dense)
    w = normal(rng) / std::sqrt(float(c.qRank));
  q.wqb = ref::quantizeBlockE4m3(dense, width, int(c.qRank));
  return q;
}

/// Heads as rows: positions repeated per head, for the reference RoPE.
std::vector<float> perHead(const std::vector<float> &positions, int heads) {
  std::vector<float> out;
  for (float p : positions)
    out.insert(out.end(), heads, p);
  return out;
}

void checkQuery(const stages::ModelConfig &c, int rows, int tp, unsigned seed) {
  SCOPED_TRACE(c.name + " rows " + std::to_string(rows) + " tp " + std::to_string(tp));
  QueryCase in = makeCase(c, rows, tp, seed);
  mlir::MLIRContext ctx;
  auto module = monodc::testing::buildFusedLaunch(ctx, "attention_query", c, rows, tp, /*grid=*/16);
  ASSERT_TRUE(static_cast<bool>(module));
  auto launch = monodc::testing::launchOf(*module);
  sim::LaunchMemory memory(launch);
  ASSERT_FALSE(static_cast<bool>(memory.setValues("qn", in.qn)));
  ASSERT_FALSE(static_cast<bool>(memory.setValues("positions", in.positions)));
  ASSERT_FALSE(static_cast<bool>(memory.setValues("cos_sin", in.cosSin)));
  ASSERT_FALSE(static_cast<bool>(memory.setBytes("wq_b", in.wqb.codes)));
  ASSERT_FALSE(static_cast<bool>(memory.setBytes("wq_b_scale", in.wqb.scales)));
  auto run = sim::simulate(launch, memory, {sim::SchedulePolicy::Random, seed, 0});
  ASSERT_TRUE(succeeded(run) && !run->deadlock);

  const int dim = int(c.headDim), rope = int(c.ropeDim);
  std::vector<float> unrotated =
      ref::gemvMxfp8xE4m3(ref::quantizeMxfp8Rows(in.qn, rows, int(c.qRank),
                                                 formats::Mxfp8Variant::Standard),
                          in.wqb);
  std::vector<float> want = ref::keyRope(unrotated, perHead(in.positions, in.heads), in.cosSin,
                                         rows * in.heads, dim, rope);
  ref::Comparison cmp = ref::compare(memory.values("q"), want);
  EXPECT_TRUE(ref::withinStageBounds(cmp)) << "relative " << cmp.relativeError << " cosine "
                                           << cmp.cosine;
  EXPECT_EQ(memory.values("q"),
            ref::keyRope(memory.values("q_unrotated"), perHead(in.positions, in.heads),
                         in.cosSin, rows * in.heads, dim, rope));
}

TEST(QueryNumerics, TinyWidthsAndTp) {
  for (int tp : {2, 4})
    for (int rows : {1, 6, 48})
      checkQuery(stages::tinyConfig(), rows, tp, 300u + rows + tp);
}

TEST(QueryNumerics, Dsv41Rows1Tp4) { checkQuery(stages::dsv41Config(), 1, 4, 9u); }

} // namespace
