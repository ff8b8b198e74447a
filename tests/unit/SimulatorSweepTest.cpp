// The simulator as an adversary (sim::sweepSchedules): many schedules of one
// launch, their outcomes counted. The negative tests build a race on purpose
// (a poll erased; weights a stage writes, loaded before the poll as a
// prefetched GEMV does on the GPU) and require more than one outcome, so
// that the sweep is shown to be able to fail. This file is a binary of its
// own, simulator_sweep_test, with the simulator compiled under TSan where the
// compiler has it (tests/CMakeLists.txt): the tests on two threads are what
// TSan checks.
#include "FusedLaunch.h"

#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/dsl/Launch.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace monodc;
using namespace monodc::dsl;

namespace {

/// A 32 x 64 weight and 64 token values of small whole numbers: every order
/// of summation gives their dot products exactly.
struct SmallGemvInputs {
  std::vector<float> weight = std::vector<float>(32 * 64), x = std::vector<float>(64);
  SmallGemvInputs() {
    for (size_t i = 0; i < weight.size(); ++i)
      weight[i] = float(int(i % 7) - 3);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(int(i % 5) + 1);
  }
};

/// @fill's tasks write rows of @d, each a value of its own; @sum (one task)
/// adds the rows up, so it waits for every task of @fill.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> handOffLaunch(mlir::MLIRContext &ctx,
                                                                int64_t grid = 4) {
  Launch l(ctx, "k", {"gfx950", grid, 256, 1});
  Region x = l.input("x", f32, {8, 16});
  Region d = l.scratch("d", f32, {8, 16});
  Region y = l.output("y", f32, {1, 16});
  l.stage("fill", 8, [&](Task &t) {
    t.store(d, t.id(), 0, t.load(x, t.id(), 0, 16) * t.constant(2.0f, 16));
  });
  l.stage("sum", 1, [&](Task &t) {
    Tile acc = t.load(d, t.index(0), 0, 16);
    for (int64_t r = 1; r < 8; ++r)
      acc = acc + t.load(d, t.index(r), 0, 16);
    t.store(y, t.id(), 0, acc);
  });
  return l.finish();
}

/// Erases every poll of stage `name`: it then reads what @fill hands over
/// whenever the scheduler lets it run.
int eraseWaits(mono::LaunchOp launch, llvm::StringRef name) {
  int erased = 0;
  for (auto stage : launch.getBodyBlock().getOps<mono::StageOp>())
    if (stage.getSymName() == name)
      for (mlir::Operation &op : llvm::make_early_inc_range(stage.getBodyBlock()))
        if (mlir::isa<mono::WaitOp, mono::WaitPeerOp>(op)) {
          op.erase();
          ++erased;
        }
  return erased;
}

std::unique_ptr<sim::LaunchMemory> inputsOf(mono::LaunchOp launch) {
  auto memory = std::make_unique<sim::LaunchMemory>(launch);
  std::vector<float> x(8 * 16);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 13) + 1.0f;
  EXPECT_FALSE(memory->setValues("x", x));
  return memory;
}

sim::SweepResult sweep(mono::LaunchOp launch, const sim::LaunchMemory &inputs,
                       int64_t schedules, unsigned threads = 1) {
  auto prepared = sim::PreparedLaunch::prepare(launch);
  EXPECT_TRUE(succeeded(prepared));
  return sim::sweepSchedules(**prepared, {&inputs}, {schedules, 1, threads, false});
}

TEST(SimulatorSweep, SchedulesCycleThroughThePolicies) {
  const int64_t ctas = 8;
  std::set<uint64_t> randomSeeds;
  for (int64_t i = 0; i < 64; ++i) {
    sim::Schedule s = sim::sweepSchedule(i, 1, ctas);
    switch (i % 4) {
    case 0:
      EXPECT_EQ(s.policy, sim::SchedulePolicy::RoundRobin);
      EXPECT_EQ(s.seed, uint64_t(i / 4));
      break;
    case 1:
      EXPECT_EQ(s.policy, sim::SchedulePolicy::Reverse);
      EXPECT_EQ(s.seed, uint64_t(i / 4));
      break;
    case 2:
      EXPECT_EQ(s.policy, sim::SchedulePolicy::StarveOne);
      EXPECT_EQ(s.starvedCta, (i / 4) % ctas);
      break;
    case 3:
      EXPECT_EQ(s.policy, sim::SchedulePolicy::Random);
      randomSeeds.insert(s.seed);
      break;
    }
  }
  EXPECT_EQ(randomSeeds.size(), 16u);
  // Schedule 0 is the plain round-robin: what `simulate` always ran first.
  EXPECT_EQ(sim::sweepSchedule(0, 7, ctas).seed, 0u);
  EXPECT_NE(sim::sweepSchedule(3, 1, ctas).seed, sim::sweepSchedule(3, 2, ctas).seed);
}

TEST(SimulatorSweep, ARaceFreeLaunchHasOneOutcome) {
  mlir::MLIRContext ctx;
  auto module = handOffLaunch(ctx);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto launch = monodc::testing::launchOf(**module);
  auto inputs = inputsOf(launch);
  sim::SweepResult result = sweep(launch, *inputs, 200);
  EXPECT_EQ(result.failedSchedule, -1) << result.failure;
  EXPECT_EQ(result.schedules, 200);
  EXPECT_EQ(result.outcomes, 1);
  EXPECT_EQ(result.firstDiffering, -1);
  // y = 2 (x_0 + ... + x_7), in row order.
  std::vector<float> y = result.first[0]->values("y");
  for (int c = 0; c < 16; ++c) {
    float want = 0.0f;
    for (int r = 0; r < 8; ++r)
      want += 2.0f * (float((r * 16 + c) % 13) + 1.0f);
    EXPECT_EQ(y[c], want) << "column " << c;
  }
}

TEST(SimulatorSweep, AMissingPollIsCaughtAsSeveralOutcomes) {
  mlir::MLIRContext ctx;
  auto module = handOffLaunch(ctx);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto launch = monodc::testing::launchOf(**module);
  ASSERT_GT(eraseWaits(launch, "sum"), 0);
  auto inputs = inputsOf(launch);
  sim::SweepResult result = sweep(launch, *inputs, 64);
  EXPECT_EQ(result.failedSchedule, -1) << result.failure;
  EXPECT_GT(result.outcomes, 1);
  EXPECT_GT(result.firstDiffering, 0);
  EXPECT_EQ(result.differingRegion, "y");

  // The same sweep on two threads finds the same: each schedule's outcome
  // depends on the schedule only.
  sim::SweepResult threaded = sweep(launch, *inputs, 64, 2);
  EXPECT_EQ(threaded.outcomes, result.outcomes);
  EXPECT_EQ(threaded.firstDiffering, result.firstDiffering);
  EXPECT_EQ(threaded.schedules, 64);
}

TEST(SimulatorSweep, TheUnfusedBaselineRunsInStreamOrder) {
  // mono-unfuse removes the polls: the stream's order of the stage kernels
  // is what keeps @sum behind its producer, and the simulator keeps it.
  mlir::MLIRContext ctx;
  auto module = handOffLaunch(ctx);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  mono::FusionOptions options;
  options.unfused = true;
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(**module, options)));
  auto launch = monodc::testing::launchOf(**module);
  ASSERT_TRUE(launch->hasAttr(mono::MonoDialect::UnfusedAttrHelper::getNameStr()));
  EXPECT_EQ(eraseWaits(launch, "sum"), 0);  // none left to erase
  auto inputs = inputsOf(launch);
  sim::SweepResult result = sweep(launch, *inputs, 64);
  EXPECT_EQ(result.failedSchedule, -1) << result.failure;
  EXPECT_EQ(result.outcomes, 1);

  // Without the mark the same kernels run as one fused body with no polls:
  // the race the stream order prevents shows as several outcomes.
  launch->removeAttr(mono::MonoDialect::UnfusedAttrHelper::getNameStr());
  sim::SweepResult unordered = sweep(launch, *inputs, 64);
  EXPECT_EQ(unordered.failedSchedule, -1) << unordered.failure;
  EXPECT_GT(unordered.outcomes, 1);
  EXPECT_EQ(unordered.differingRegion, "y");
}

/// @make (one task) writes bf16 "weights" into scratch @w and the token
/// into scratch @xs; @use's GEMV polls @make's flag for @xs, which also
/// covers @w. With the GEMV marked mono.prefetched, the GPU (and so the
/// simulator) loads the weights before that poll.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> writtenWeightsLaunch(mlir::MLIRContext &ctx) {
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region src = l.input("src", bf16, {1, 32 * 64});
  Region x = l.input("x", bf16, {1, 64});
  Region w = l.scratch("w", bf16, {32, 64});
  Region xs = l.scratch("xs", bf16, {1, 64});
  Region y = l.output("y", f32, {1, 32});
  l.stage("make", 1, [&](Task &t) {
    t.storeRows(w, t.index(0), t.index(0), 32, t.load(src, t.index(0), 0, 32 * 64));
    t.store(xs, t.index(0), 0, t.load(x, t.index(0), 0, 64));
  });
  l.stage("use", 1, [&](Task &t) {
    t.store(y, t.id(), 0, t.gemvRows(w, t.index(0), 32, xs, t.index(0), 1));
  });
  return l.finish();
}

TEST(SimulatorSweep, WeightsLoadedBeforeThePollAreModelled) {
  mlir::MLIRContext ctx;
  auto module = writtenWeightsLaunch(ctx);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto launch = monodc::testing::launchOf(**module);
  mono::GemvRowsOp gemv;
  launch.walk([&](mono::GemvRowsOp g) { gemv = g; });
  ASSERT_TRUE(gemv);
  ASSERT_TRUE(mlir::isa_and_nonnull<mono::WaitOp>(gemv->getPrevNode()))
      << "the GEMV must poll for @make's rows right before it";
  EXPECT_FALSE(gemv->hasAttr("mono.prefetched"))
      << "mono-plan-waits must not prefetch weights the launch writes";

  sim::LaunchMemory inputs(launch);
  const SmallGemvInputs values;
  ASSERT_FALSE(inputs.setValues("src", values.weight));
  ASSERT_FALSE(inputs.setValues("x", values.x));

  // Read after the poll: every schedule sees @make's rows.
  gemv->removeAttr("mono.prefetched");
  sim::SweepResult after = sweep(launch, inputs, 64);
  EXPECT_EQ(after.failedSchedule, -1) << after.failure;
  EXPECT_EQ(after.outcomes, 1);
  // Read before it: a schedule that runs @use first reads zeros.
  gemv->setAttr("mono.prefetched", mlir::UnitAttr::get(&ctx));
  sim::SweepResult before = sweep(launch, inputs, 64);
  EXPECT_EQ(before.failedSchedule, -1) << before.failure;
  EXPECT_GT(before.outcomes, 1);
  EXPECT_EQ(before.differingRegion, "y");
}

/// @make's 32 tasks each write one row of scratch @w; @use (one task) runs
/// a GEMV over all 32 rows with a read-only token: the weights are its only
/// hand-off. The passes must make @use wait for every @make task and not
/// prefetch the weights; without that wait the GEMV reads whichever rows are
/// written when it runs (the last check).
TEST(SimulatorSweep, AGemvWaitsForWeightsWrittenInTheLaunch) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region src = l.input("src", bf16, {32, 64});
  Region x = l.input("x", bf16, {1, 64});
  Region w = l.scratch("w", bf16, {32, 64});
  Region y = l.output("y", f32, {1, 32});
  l.stage("make", 32, [&](Task &t) { t.store(w, t.id(), 0, t.load(src, t.id(), 0, 64)); });
  l.stage("use", 1, [&](Task &t) {
    t.store(y, t.id(), 0, t.gemvRows(w, t.index(0), 32, x, t.index(0), 1));
  });
  auto module = l.finish();
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto launch = monodc::testing::launchOf(**module);
  mono::GemvRowsOp gemv;
  launch.walk([&](mono::GemvRowsOp g) { gemv = g; });
  ASSERT_TRUE(gemv);
  // Checked, then swept either way: a sweep without the wait shows the race.
  auto wait = mlir::dyn_cast_or_null<mono::WaitOp>(gemv->getPrevNode());
  EXPECT_TRUE(wait) << "the GEMV must poll for @make's rows right before it";
  if (wait)
    EXPECT_EQ(wait.getFlags(), "make.flags");
  EXPECT_FALSE(gemv->hasAttr("mono.prefetched")) << "written weights must be read after the poll";

  sim::LaunchMemory inputs(launch);
  const SmallGemvInputs values;
  ASSERT_FALSE(inputs.setValues("src", values.weight));
  ASSERT_FALSE(inputs.setValues("x", values.x));

  sim::SweepResult result = sweep(launch, inputs, 64);
  EXPECT_EQ(result.failedSchedule, -1) << result.failure;
  EXPECT_EQ(result.schedules, 64);
  EXPECT_EQ(result.outcomes, 1);
  // Small whole numbers: every order of summation gives them exactly.
  std::vector<float> got = result.first[0]->values("y");
  ASSERT_EQ(got.size(), 32u);
  for (int j = 0; j < 32; ++j) {
    float want = 0.0f;
    for (int k = 0; k < 64; ++k)
      want += values.weight[j * 64 + k] * values.x[k];
    EXPECT_EQ(got[j], want) << "output " << j;
  }

  // The check can fail: without @use's poll, the schedules that run it
  // before some of @make read zeros for those rows.
  ASSERT_GT(eraseWaits(launch, "use"), 0);
  sim::SweepResult racy = sweep(launch, inputs, 64);
  EXPECT_EQ(racy.failedSchedule, -1) << racy.failure;
  EXPECT_GT(racy.outcomes, 1);
  EXPECT_EQ(racy.differingRegion, "y");
}

/// @make writes the token into scratch @xs; @use's GEMV (bf16 weights, a
/// read-only region) reads it. A sweep reuses a GEMV's result only for the
/// same bytes read: with @use's poll erased, the schedules that run it
/// before @make must still see other outputs.
TEST(SimulatorSweep, AReusedGemvResultNeverHidesARace) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region x = l.input("x", bf16, {1, 64});
  Region w = l.weight("w", bf16, {32, 64});
  Region xs = l.scratch("xs", bf16, {1, 64});
  Region y = l.output("y", f32, {1, 32});
  l.stage("make", 1, [&](Task &t) { t.store(xs, t.index(0), 0, t.load(x, t.index(0), 0, 64)); });
  l.stage("use", 1, [&](Task &t) {
    t.store(y, t.id(), 0, t.gemvRows(w, t.index(0), 32, xs, t.index(0), 1));
  });
  auto module = l.finish();
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto launch = monodc::testing::launchOf(**module);
  sim::LaunchMemory inputs(launch);
  const SmallGemvInputs values;
  ASSERT_FALSE(inputs.setValues("w", values.weight));
  ASSERT_FALSE(inputs.setValues("x", values.x));
  EXPECT_EQ(sweep(launch, inputs, 64).outcomes, 1);
  ASSERT_GT(eraseWaits(launch, "use"), 0);
  sim::SweepResult racy = sweep(launch, inputs, 64);
  EXPECT_EQ(racy.outcomes, 2) << "outputs from @make's token and from zeros";
  EXPECT_EQ(racy.differingRegion, "y");
}

/// @make's 8 tasks each write 8 columns of the token @xs; @use's GEMV over
/// read-only weights reads it with its poll erased, so the schedules give it
/// many partly written tokens: many results reused, and many new ones kept,
/// on both threads at once. One memo per thread, no locks (what TSan checks
/// in this binary); the outcomes are the one thread's.
TEST(SimulatorSweep, ThreadsKeepTheirOwnReusedResults) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region x = l.input("x", bf16, {1, 64});
  Region w = l.weight("w", bf16, {32, 64});
  Region xs = l.scratch("xs", bf16, {1, 64});
  Region y = l.output("y", f32, {1, 32});
  l.stage("make", 8, [&](Task &t) {
    Index col = t.id() * 8;
    t.store(xs, t.index(0), col, t.load(x, t.index(0), col, 8));
  });
  l.stage("use", 1, [&](Task &t) {
    t.store(y, t.id(), 0, t.gemvRows(w, t.index(0), 32, xs, t.index(0), 1));
  });
  auto module = l.finish();
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto launch = monodc::testing::launchOf(**module);
  ASSERT_GT(eraseWaits(launch, "use"), 0);
  sim::LaunchMemory inputs(launch);
  const SmallGemvInputs values;
  ASSERT_FALSE(inputs.setValues("w", values.weight));
  ASSERT_FALSE(inputs.setValues("x", values.x));
  sim::SweepResult one = sweep(launch, inputs, 400);
  sim::SweepResult two = sweep(launch, inputs, 400, 2);
  EXPECT_EQ(one.failedSchedule, -1) << one.failure;
  EXPECT_EQ(two.failedSchedule, -1) << two.failure;
  EXPECT_GT(one.outcomes, 2) << "the schedules must give the GEMV several partial tokens";
  EXPECT_EQ(two.outcomes, one.outcomes);
  EXPECT_EQ(two.firstDiffering, one.firstDiffering);
  EXPECT_EQ(two.schedules, 400);
}

/// A registered launch on two threads (what TSan checks: scripts/sanitize.sh
/// tsan-sim): the prepared launch, the shared inputs, the weight cache and
/// the reused results are read by both threads at once; the outcome is the
/// one thread's, bit for bit.
TEST(SimulatorSweep, TwoThreadsAgreeWithOneOnAFusedLaunch) {
  mlir::MLIRContext ctx;
  auto module = monodc::testing::buildFusedLaunch(ctx, "moe_router_shared",
                                                  stages::tinyConfig(), 6, 2, 16);
  ASSERT_TRUE(module);
  auto launch = monodc::testing::launchOf(*module);
  std::vector<std::unique_ptr<sim::LaunchMemory>> inputs;
  std::vector<const sim::LaunchMemory *> pointers;
  for (int64_t r = 0; r < launch.getRanks(); ++r) {
    inputs.push_back(std::make_unique<sim::LaunchMemory>(launch));
    for (auto region : launch.getBodyBlock().getOps<mono::RegionOp>()) {
      if (region.isWritable())
        continue;
      const int64_t n = region.getRows() * region.getCols();
      std::vector<float> v(n);
      for (int64_t i = 0; i < n; ++i)
        v[i] = region.getIndexBound() ? float(i % *region.getIndexBound())
                                      : float((i * 7919 + r * 31) % 17 - 8) * 0.25f;
      EXPECT_FALSE(inputs.back()->setValues(region.getSymName().str(), v));
    }
    pointers.push_back(inputs.back().get());
  }
  auto prepared = sim::PreparedLaunch::prepare(launch);
  ASSERT_TRUE(succeeded(prepared));
  sim::SweepResult one = sim::sweepSchedules(**prepared, pointers, {48, 3, 1, false});
  sim::SweepResult two = sim::sweepSchedules(**prepared, pointers, {48, 3, 2, false});
  EXPECT_EQ(one.failedSchedule, -1) << one.failure;
  EXPECT_EQ(two.failedSchedule, -1) << two.failure;
  EXPECT_EQ(one.outcomes, 1);
  EXPECT_EQ(two.outcomes, 1);
  EXPECT_EQ(two.schedules, 48);
  for (int64_t r = 0; r < launch.getRanks(); ++r)
    EXPECT_EQ(one.first[r]->bytes("shared_out"), two.first[r]->bytes("shared_out"));
}

/// @fill is dynamic: its CTAs claim their tasks from the step's counter.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> claimedLaunch(mlir::MLIRContext &ctx) {
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region x = l.input("x", f32, {16, 16});
  Region d = l.scratch("d", f32, {16, 16});
  Region y = l.output("y", f32, {16, 16});
  l.stage("fill", 16, [&](Task &t) {
    t.store(d, t.id(), 0, t.load(x, t.id(), 0, 16) + t.constant(1.0f, 16));
  }, /*dynamic=*/true);
  l.stage("copy", 16, [&](Task &t) {
    t.store(y, t.id(), 0, t.load(d, t.id(), 0, 16));
  });
  return l.finish();
}

TEST(SimulatorSweep, ADynamicStageClaimsOneTaskAhead) {
  mlir::MLIRContext ctx;
  auto module = claimedLaunch(ctx);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto launch = monodc::testing::launchOf(**module);
  sim::LaunchMemory memory(launch);
  auto run = sim::simulate(launch, memory, {sim::SchedulePolicy::RoundRobin, 0, 0, true});
  ASSERT_TRUE(succeeded(run));
  ASSERT_FALSE(run->deadlock) << run->describe();
  // mono_claim_task: a CTA's first claim takes two consecutive tasks with
  // one add and holds the second while it runs the first; when it starts
  // the held one it claims the next. Under round-robin (a turn runs a task
  // to its end) CTA 0 runs 0 and 1 while holding 2, so CTA c starts with
  // 3c and 3c + 1. Claiming one at a time, CTA c would run c, then c + 4.
  std::map<int64_t, std::vector<int64_t>> tasksOf;
  for (const sim::TraceSlice &s : run->trace)
    if (s.stage == "fill" && s.flags.empty() &&
        (tasksOf[s.cta].empty() || tasksOf[s.cta].back() != s.task))
      tasksOf[s.cta].push_back(s.task);
  for (int64_t c = 0; c < 4; ++c) {
    ASSERT_GE(tasksOf[c].size(), 2u) << "CTA " << c;
    EXPECT_EQ(tasksOf[c][0], 3 * c) << "CTA " << c;
    EXPECT_EQ(tasksOf[c][1], 3 * c + 1) << "CTA " << c;
  }
  EXPECT_EQ(tasksOf[0][2], 2) << "CTA 0 runs the task it held";
  // Every task ran once.
  std::set<int64_t> all;
  for (auto &[cta, tasks] : tasksOf)
    all.insert(tasks.begin(), tasks.end());
  EXPECT_EQ(all.size(), 16u);
}

} // namespace
