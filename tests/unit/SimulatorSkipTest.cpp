// mono.skip_unless in the simulator: a task whose count is 0 runs none of
// its work after the skip (its scratch rows keep the NaN they start with)
// and still publishes (a later stage that waits for every task ends), and
// the emitted source closes the skipped block before the publish.
#include "FusedLaunch.h"
#include "MemoryInputs.h"

#include "monodc/Emit/EmitPipeline.h"
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/dsl/Launch.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace monodc;
using namespace monodc::dsl;

namespace {

/// @fill's `tasks` tasks skip when their @counts entry is 0 (with
/// SkipScope::ThisAndLaterTasks, every later task with it); a dynamic stage
/// when `dynamicFill`. @pick reads a row of @d given by data, so it waits
/// for every task of @fill.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
skippingLaunch(mlir::MLIRContext &ctx, int64_t tasks = 4, int64_t grid = 4,
               SkipScope scope = SkipScope::ThisTask, bool dynamicFill = false) {
  Launch l(ctx, "k", {"gfx950", grid, 256, 1});
  Region counts = l.input("counts", f32, {1, tasks});
  Region where = l.input("where", f32, {1, 1});
  Region d = l.scratch("d", f32, {tasks, 16});
  Region y = l.output("y", f32, {1, 16});
  l.stage("fill", tasks, [&](Task &t) {
    t.skipUnless(t.toIndex(t.load(counts, t.index(0), t.id(), 1)), scope);
    t.store(d, t.id(), 0, t.constant(1.0f, 16));
  }, dynamicFill);
  l.stage("pick", 1, [&](Task &t) {
    Index row = t.toIndex(t.load(where, t.index(0), 0, 1));
    t.store(y, t.id(), 0, t.load(d, row, 0, 16));
  });
  return l.finish();
}

TEST(SimulatorSkip, SkippedTasksWriteNothingAndStillPublish) {
  mlir::MLIRContext ctx;
  auto module = skippingLaunch(ctx);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto launch = monodc::testing::launchOf(**module);

  sim::LaunchMemory memory(launch);
  memory.poisonScratch();
  EXPECT_FALSE(memory.setValues("counts", {2.0f, 0.0f, 1.0f, 0.0f}));
  EXPECT_FALSE(memory.setValues("where", {2.0f}));
  auto run = sim::simulate(launch, memory);
  ASSERT_TRUE(succeeded(run));
  ASSERT_FALSE(run->deadlock) << "a skipped task did not publish";
  const std::vector<float> rows = memory.values("d");
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 16; ++c) {
      const float v = rows[r * 16 + c];
      if (r % 2 == 0)
        EXPECT_EQ(v, 1.0f) << "row " << r;
      else
        EXPECT_TRUE(std::isnan(v)) << "row " << r << " of a skipped task was written";
    }
  for (float v : memory.values("y"))
    EXPECT_EQ(v, 1.0f);

  auto fresh = skippingLaunch(ctx);
  ASSERT_TRUE(static_cast<bool>(fresh)) << llvm::toString(fresh.takeError());
  auto hip = emit::emitHip(**fresh);
  ASSERT_TRUE(succeeded(hip));
  const size_t open = hip->find("> 0) {  // else the task has nothing to do");
  const size_t close = hip->find("}  // a task that skips comes here\n    mono_publish_flag(");
  EXPECT_NE(open, std::string::npos);
  EXPECT_NE(close, std::string::npos);
  EXPECT_LT(open, close);
}

/// @fill of 6 tasks on 2 CTAs, each skipping the rest when its count is 0.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> restSkippingLaunch(mlir::MLIRContext &ctx,
                                                                     bool dynamicFill) {
  return skippingLaunch(ctx, 6, 2, SkipScope::ThisAndLaterTasks, dynamicFill);
}

/// Simulates restSkippingLaunch with `counts`; returns the first error, or
/// "" with the rows of @d.
std::string simulateRestSkip(const std::vector<float> &counts, bool dynamicFill,
                             std::vector<float> &rows) {
  mlir::MLIRContext ctx;
  auto module = restSkippingLaunch(ctx, dynamicFill);
  if (!module)
    return llvm::toString(module.takeError());
  if (failed(mono::runFusionPipeline(**module)))
    return "fusion failed";
  auto launch = monodc::testing::launchOf(**module);
  sim::LaunchMemory memory(launch);
  memory.poisonScratch();
  EXPECT_FALSE(memory.setValues("counts", counts));
  EXPECT_FALSE(memory.setValues("where", {0.0f}));
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    if (message.empty())
      message = d.str();
    return mlir::success();
  });
  auto run = sim::simulate(launch, memory);
  if (failed(run))
    return message.empty() ? "simulation failed" : message;
  if (run->deadlock)
    return "deadlock: a flag was never published";
  rows = memory.values("d");
  return "";
}

TEST(SimulatorSkip, TheFirstEmptyTaskPublishesTheRestAndEveryLaterTaskSkips) {
  for (bool dynamicFill : {false, true}) {
    std::vector<float> rows;
    ASSERT_EQ(simulateRestSkip({2.0f, 1.0f, 3.0f, 0.0f, 0.0f, 0.0f}, dynamicFill, rows), "")
        << "dynamic " << dynamicFill;
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 16; ++c) {
        const float v = rows[r * 16 + c];
        if (r < 3)
          EXPECT_EQ(v, 1.0f) << "row " << r;
        else
          EXPECT_TRUE(std::isnan(v)) << "row " << r << " of a skipped task was written";
      }
  }
}

TEST(SimulatorSkip, ALaterTaskWithWorkBreaksTheRestPromise) {
  // Task 1 skips the rest, but task 2 has a count: whichever runs first, the
  // simulator names both (the tasks after 2 skip, as they may).
  for (bool dynamicFill : {false, true}) {
    std::vector<float> rows;
    const std::string error =
        simulateRestSkip({2.0f, 0.0f, 4.0f, 0.0f, 0.0f, 0.0f}, dynamicFill, rows);
    EXPECT_NE(error.find("of stage 'fill': task 1 skips the stage's later tasks (rest), but "
                         "task 2 has work (count > 0)"),
              std::string::npos)
        << "dynamic " << dynamicFill << ": " << error;
  }
}

TEST(SimulatorSkip, EmittedRestSkipPublishesTheCtasOwnOrEveryLaterTaskThenLeaves) {
  mlir::MLIRContext ctx;
  auto emit = [&](bool dynamicFill, bool unfused) {
    auto module = restSkippingLaunch(ctx, dynamicFill);
    EXPECT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
    mono::FusionOptions options;
    options.unfused = unfused;
    auto hip = emit::emitHip(**module, options);
    EXPECT_TRUE(succeeded(hip));
    return succeeded(hip) ? *hip : std::string();
  };
  const std::string skip =
      " <= 0) {  // neither this task nor any later one has anything to do\n";
  const std::string leave = "      break;  // the stage's later tasks skip too\n    }\n    {\n";
  // Placed tasks: this CTA's own later tasks, a grid apart.
  const std::string placed = emit(false, false);
  EXPECT_NE(placed.find(skip + "      mono_publish_rest((mono_u64 *)(mono_scratch + "),
            std::string::npos);
  EXPECT_NE(placed.find(", task, 6, MONO_GRID, mono_tag);\n" + leave), std::string::npos);
  EXPECT_NE(placed.find("}  // (a task that skips has left the stage)\n    mono_publish_flag("),
            std::string::npos);
  // Claimed tasks: any CTA may hold the first empty one, so every later task.
  EXPECT_NE(emit(true, false).find(", task, 6, 1, mono_tag);\n" + leave), std::string::npos);
  // The unfused baseline has no flags: it only leaves.
  const std::string unfused = emit(false, true);
  EXPECT_NE(unfused.find(skip + leave), std::string::npos);
  EXPECT_EQ(unfused.find("mono_publish_rest((mono_u64 *)"), std::string::npos);
}

} // namespace
