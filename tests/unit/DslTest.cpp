// The DSL builds verified mono IR, and turns misuse into diagnostics naming
// the launch, the stage and the region instead of a kernel.
#include "monodc/dsl/Launch.h"

#include "monodc/Dialect/Mono/MonoDialect.h"

#include <gtest/gtest.h>

using namespace monodc::dsl;

namespace {

std::string errorOf(Launch &launch) {
  auto module = launch.finish();
  if (module)
    return "";
  return llvm::toString(module.takeError());
}

TEST(Dsl, BuildsAVerifiedLaunch) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 2});
  Region x = l.input("x", bf16, {2, 64});
  Region w = l.weight("w", bf16, {64});
  Region y = l.output("y", bf16, {2, 64});
  l.stage("norm", 2, [&](Task &t) {
    Tile v = t.loadRow(x, t.id()).to(f32);
    Tile r = rsqrt(sum(v * v) / 64.0f + 1e-20f);
    t.store(y, t.id(), 0, (v * r * t.loadRow(w, t.index(0)).to(f32)).to(bf16));
  });
  auto module = l.finish();
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  auto launches = llvm::to_vector((*module)->getOps<monodc::mono::LaunchOp>());
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].getRows(), 2);
  auto stages = llvm::to_vector(launches[0].getBodyBlock().getOps<monodc::mono::StageOp>());
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(stages[0].getTasks(), 2);
}

TEST(Dsl, ArithmeticOnANarrowTileIsADiagnostic) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region x = l.input("x", bf16, {1, 64});
  l.stage("s", 1, [&](Task &t) {
    Tile v = t.loadRow(x, t.id());
    (void)(v * v);  // bf16 arithmetic: must be cast first
  });
  EXPECT_EQ(errorOf(l), "launch 'k', stage 's': mul needs f32 tiles, got a bf16 tile; "
                        "convert it with .to(f32) first");
}

TEST(Dsl, ShapeMismatchIsADiagnostic) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region x = l.input("x", f32, {1, 64});
  l.stage("s", 1, [&](Task &t) {
    (void)(t.load(x, t.id(), 0, 64) + t.load(x, t.id(), 0, 32));
  });
  EXPECT_NE(errorOf(l).find("stage 's': add of tiles of 64 and 32 values"), std::string::npos);
}

TEST(Dsl, WritingAWeightIsADiagnostic) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region w = l.weight("w", f32, {1, 64});
  l.stage("s", 1, [&](Task &t) { t.store(w, t.id(), 0, t.constant(0.0f, 64)); });
  EXPECT_EQ(errorOf(l), "launch 'k', stage 's': writes read-only region 'w' (inputs and "
                        "weights are read-only)");
}

TEST(Dsl, ReadingAnUndeclaredRegionIsADiagnostic) {
  mlir::MLIRContext ctx;
  Launch other(ctx, "other", {"gfx950", 4, 256, 1});
  Region foreign = other.input("x", f32, {1, 64});
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region y = l.output("y", f32, {1, 64});
  l.stage("s", 1, [&](Task &t) { t.store(y, t.id(), 0, t.loadRow(foreign, t.id())); });
  EXPECT_EQ(errorOf(l), "launch 'k', stage 's': reads region 'x' which launch 'k' does not "
                        "declare");
}

// A cache sized at launch: rowsOf reads the caller's count (mono.region_rows),
// a fixed region's rows are a constant; misuse is named.
TEST(Dsl, RegionsSizedAtLaunch) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region cache = l.input("cache", f32, {4, 8}, Rows::AtLaunch);
  Region fixed = l.input("fixed", f32, {4, 8});
  Region slots = l.indexInput("slots", {1, 1}, 8, i64);
  l.indexesRowsOf(slots, cache);
  Region y = l.output("y", f32, {1, 1});
  EXPECT_TRUE(cache.rowsAtLaunch());
  l.stage("s", 1, [&](Task &t) {
    t.store(y, t.id(), 0, t.rowsOf(cache) + t.rowsOf(fixed) + t.load(slots, t.id(), 0, 1));
  });
  auto module = l.finish();
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  int rowsOps = 0;
  (*module)->walk([&](monodc::mono::RegionRowsOp op) {
    EXPECT_EQ(op.getRegion(), "cache");
    ++rowsOps;
  });
  EXPECT_EQ(rowsOps, 1) << "the fixed region's rows are a constant";

  Launch bad(ctx, "b", {"gfx950", 4, 256, 1});
  Region flat = bad.input("flat", f32, {8}, Rows::AtLaunch);
  Region table = bad.indexInput("table", {1, 4}, 6, i32);
  Region pages = bad.input("pages", f32, {4, 8}, Rows::AtLaunch);
  Region other = bad.input("other", f32, {4, 8});
  bad.indexesRowsOf(table, pages);
  bad.indexesRowsOf(table, other);
  const std::string error = errorOf(bad);
  EXPECT_NE(error.find("region 'flat' is sized at launch, which needs two extents"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("index input 'table' cannot count rows of 'pages'"), std::string::npos);
  EXPECT_NE(error.find("index input 'table' cannot count rows of 'other'"), std::string::npos);
}

TEST(Dsl, StoringTheWrongFormatIsADiagnostic) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region y = l.output("y", bf16, {1, 64});
  l.stage("s", 1, [&](Task &t) { t.store(y, t.id(), 0, t.constant(1.0f, 64)); });
  EXPECT_NE(errorOf(l).find("stores a f32 tile into bf16 region 'y'; convert it with .to(bf16)"),
            std::string::npos);
}

TEST(Dsl, SliceRunsMustFitAndNotOverlap) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region x = l.input("x", f32, {1, 64});
  Region y = l.output("y", f32, {1, 64});
  l.stage("s", 1, [&](Task &t) {
    Tile v = t.loadRow(x, t.id());
    t.store(y, t.id(), 0, v.slice(16, 32, 32, 16)); // the up runs of two tokens: fits
    (void)v.slice(0, 16, 8, 16);                     // runs of 16 every 8 overlap
  });
  EXPECT_EQ(errorOf(l), "launch 'k', stage 's': slice of 16 values from 0 by 8 in runs of 16 of "
                        "a tile of 64 values");
}

TEST(Dsl, ATaskSkipsOnce) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region n = l.input("n", f32, {1, 4});
  Region y = l.output("y", f32, {4, 16});
  l.stage("s", 4, [&](Task &t) {
    Index count = t.toIndex(t.load(n, t.index(0), t.id(), 1));
    t.skipUnless(count);
    t.store(y, t.id(), 0, t.constant(1.0f, 16));
    t.skipUnless(count);
  });
  EXPECT_EQ(errorOf(l), "launch 'k', stage 's': skipUnless given twice; a task skips once");
}

TEST(Dsl, GemvChecksWeightFormatAndWidth) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region w = l.weight("w", e4m3, {64, 128});
  Region ws = l.weight("ws", e8m0, {2, 4});
  Region x = l.input("x", f32, {1, 64});
  l.stage("s", 1, [&](Task &t) {
    Mxfp8Tile q = t.quantizeMxfp8(t.loadRow(x, t.id()));
    (void)t.gemv(w, ws, t.index(0), 32, q);
  });
  EXPECT_NE(errorOf(l).find("stage 's': gemv of a 64-value activation with weight 'w' of 128 "
                            "columns"),
            std::string::npos);
}

TEST(Dsl, RegionAfterStageAndDuplicatesAreDiagnostics) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  l.input("x", f32, {1, 64});
  l.input("x", f32, {1, 64});
  l.stage("s", 1, [&](Task &) {});
  l.scratch("late", f32, {1, 64});
  std::string error = errorOf(l);
  EXPECT_NE(error.find("region 'x' is declared twice"), std::string::npos) << error;
  EXPECT_NE(error.find("region 'late' is declared after a stage"), std::string::npos) << error;
}

TEST(Dsl, VerifierBackstopsLaunchParameters) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 49});
  std::string error = errorOf(l);
  EXPECT_NE(error.find("rows must be in [1, 48], got 49"), std::string::npos) << error;
}

} // namespace
