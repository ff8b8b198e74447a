// GEMV stages over (token group, row block) tasks: a step of up to 6 tokens
// is one group; wider steps split into groups of the largest divisor not
// above 6, so that every group has the same tokens. A weight whose rows are
// not whole blocks is refused, naming it.
#include "monodc/stages/GemvStage.h"
#include "monodc/stages/Launches.h"

#include "monodc/Dialect/Mono/MonoDialect.h"

#include <gtest/gtest.h>

using namespace monodc::dsl;
using monodc::stages::addGemvStage;
using monodc::stages::gemvTokenGroup;
using monodc::stages::scaledGemvRowsPerTask;

namespace {

TEST(GemvTokenGroup, OneRequestIsOneGroup) {
  for (int64_t rows = 1; rows <= 6; ++rows)
    EXPECT_EQ(gemvTokenGroup(rows), rows) << rows;
}

TEST(GemvTokenGroup, WiderStepsSplitEvenly) {
  EXPECT_EQ(gemvTokenGroup(12), 6);
  EXPECT_EQ(gemvTokenGroup(48), 6);
  EXPECT_EQ(gemvTokenGroup(10), 5);
  EXPECT_EQ(gemvTokenGroup(9), 3);
  EXPECT_EQ(gemvTokenGroup(8), 4);
  EXPECT_EQ(gemvTokenGroup(7), 1); // a prime: one token a task
}

// e4m3 GEMVs: the smallest task of 32, 64 or 128 rows whose tasks cut the
// weight whole and fit the grid in one round (the sizes the H200 ran
// quickest on a grid of 66, GemvStage.h).
TEST(ScaledGemvRowsPerTask, TheSmallestTaskWhoseTasksFitTheGrid) {
  EXPECT_EQ(scaledGemvRowsPerTask(1792, 66), 32);     // wqkv: 56
  EXPECT_EQ(scaledGemvRowsPerTask(1024, 66, 4), 64);  // wo_a: 4 x 16
  EXPECT_EQ(scaledGemvRowsPerTask(2304, 66), 64);     // gate_up: 36
  EXPECT_EQ(scaledGemvRowsPerTask(5120, 66), 128);    // wo_b: 40
  EXPECT_EQ(scaledGemvRowsPerTask(5120, 132), 64);    // 80 on 132
  // A task count exactly the grid fits; one more does not.
  EXPECT_EQ(scaledGemvRowsPerTask(2048, 64), 32);
  EXPECT_EQ(scaledGemvRowsPerTask(2048, 63), 64);
}

// More tasks than CTAs even at 128 rows: the largest task that cuts the
// weight whole, each task's fixed cost paid for the most rows (wq_b).
TEST(ScaledGemvRowsPerTask, TooManyTasksTakeTheLargestWholeTask) {
  EXPECT_EQ(scaledGemvRowsPerTask(16384, 66), 128); // wq_b: 128 tasks
  EXPECT_EQ(scaledGemvRowsPerTask(576, 4), 64);
  EXPECT_EQ(scaledGemvRowsPerTask(96, 2), 32);
  EXPECT_EQ(scaledGemvRowsPerTask(48, 66), 16);
  EXPECT_EQ(scaledGemvRowsPerTask(40, 66), 16); // refused by the stage
}

/// A launch of `rows` tokens with one GEMV stage against a bf16 weight of
/// `weightRows` rows of 64, `rowsPerTask` rows a task.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> gemvLaunch(mlir::MLIRContext &ctx,
                                                             int64_t rows, int64_t weightRows,
                                                             int64_t rowsPerTask = 16,
                                                             bool everyToken = false) {
  Launch l(ctx, "k", {"gfx950", 4, 256, rows});
  Region x = l.input("x", bf16, {rows, 64});
  Region w = l.weight("w", bf16, {weightRows, 64});
  Region y = l.output("y", f32, {rows, weightRows});
  addGemvStage(l, {"gemv", w, {}, x, {}, y, rowsPerTask, f32, everyToken});
  return l.finish();
}

TEST(GemvStage, EveryTokenMakesTheStepOneGroup) {
  mlir::MLIRContext ctx;
  auto module = gemvLaunch(ctx, 12, 128, /*rowsPerTask=*/64, /*everyToken=*/true);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  (*module)->walk([&](monodc::mono::StageOp stage) {
    EXPECT_EQ(stage.getTasks(), 2u); // 1 group of 12 tokens x 2 blocks of 64 rows
  });
}

TEST(GemvStage, TasksAreTokenGroupsTimesRowBlocks) {
  mlir::MLIRContext ctx;
  auto module = gemvLaunch(ctx, 12, 48);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  int stages = 0;
  (*module)->walk([&](monodc::mono::StageOp stage) {
    ++stages;
    EXPECT_EQ(stage.getTasks(), 2u * 3u); // 2 groups of 6 tokens x 3 blocks of 16 rows
  });
  EXPECT_EQ(stages, 1);
}

TEST(GemvStage, RowsThatAreNotWholeBlocksAreRefused) {
  mlir::MLIRContext ctx;
  auto module = gemvLaunch(ctx, 6, 40);
  ASSERT_FALSE(static_cast<bool>(module));
  const std::string error = llvm::toString(module.takeError());
  EXPECT_NE(error.find("weight 'w' has 40 rows, not a multiple of the 16 a task takes"),
            std::string::npos)
      << error;
}

/// Builds attention_back for `rows` tokens with wo_a groups of `groupRank`
/// rows: "" when it builds, else its error.
std::string attentionBackError(int64_t groupRank, int64_t rows) {
  monodc::stages::ModelConfig c = monodc::stages::tinyConfig();
  c.groupRank = groupRank;
  mlir::MLIRContext ctx;
  monodc::stages::BuildParams params;
  params.rows = rows;
  auto module = monodc::stages::buildLaunch(ctx, "attention_back", c, params);
  return module ? std::string() : llvm::toString(module.takeError());
}

// The e4m3 stages that cut their own tasks refuse ragged blocks too: wo_a's
// groups of 40 rows are no whole number of 16-row tasks, at either width;
// groups of 96 are whole 32-row tasks.
TEST(ScaledGemvStages, AGroupThatIsNotWholeTasksIsRefused) {
  for (int64_t rows : {6, 12}) {
    EXPECT_EQ(attentionBackError(96, rows), "") << rows;
    const std::string error = attentionBackError(40, rows);
    EXPECT_NE(
        error.find("weight 'wo_a' has 40 rows a group, not a multiple of the 16 a task takes"),
        std::string::npos)
        << rows << ": " << error;
  }
}

// A weight smaller than one task is refused by name too, not as a stage of
// no tasks: wo_a's groups of 8 rows (16-row tasks).
TEST(ScaledGemvStages, AGroupSmallerThanATaskIsRefusedByName) {
  const std::string error = attentionBackError(8, 12);
  EXPECT_NE(error.find("weight 'wo_a' has 8 rows a group, not a multiple of the 16 a task takes"),
            std::string::npos)
      << error;
}

// wo_a quantizes its own z, so a task must hold whole 32-value blocks of
// it: groups of 48 rows are whole 16-row tasks, and refused by name.
TEST(ScaledGemvStages, WoATasksOfPartBlocksAreRefusedByName) {
  const std::string error = attentionBackError(48, 6);
  EXPECT_NE(error.find("wo_a tasks of 16 rows: MXFP8(z) needs whole 32-value blocks a task"),
            std::string::npos)
      << error;
}

} // namespace
