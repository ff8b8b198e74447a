// The mailbox protocol on the simulator: schedule independence, deadlock
// reports when a publish is missing, consecutive steps of different widths
// with no clearing in between, a gather whose row comes from data.
#include "AttentionFrontFixture.h"

#include "monodc/Transforms/Passes.h"
#include "monodc/dsl/Launch.h"
#include "monodc/stages/Launches.h"

#include <gtest/gtest.h>

using namespace monodc;
using namespace monodc::testing;
namespace ref = monodc::reference;

namespace {

struct BuiltFront {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mono::LaunchOp launch;
};

std::unique_ptr<BuiltFront> buildFront(const stages::ModelConfig &c, int rows, int64_t grid,
                                       const mono::FusionOptions &options = {}) {
  auto built = std::make_unique<BuiltFront>();
  stages::BuildParams params;
  params.rows = rows;
  params.grid = grid;
  auto module = stages::buildLaunch(built->context, "attention_front", c, params);
  EXPECT_TRUE(static_cast<bool>(module));
  built->module = std::move(*module);
  EXPECT_TRUE(succeeded(mono::runFusionPipeline(*built->module, options)));
  built->launch = *built->module->getOps<mono::LaunchOp>().begin();
  return built;
}

TEST(FusionProtocol, TwentyFourSchedulesGiveBitIdenticalOutputs) {
  const auto c = stages::tinyConfig();
  FrontInputs in = makeFrontInputs(c, 6, 99u);
  FrontOutputs first = simulateFront(c, 6, in);
  FrontOutputs want = referenceFront(c, 6, in);
  EXPECT_TRUE(ref::withinStageBounds(ref::compare(first.qn, want.qn)));
  std::vector<sim::Schedule> schedules;
  for (uint64_t seed = 1; seed <= 16; ++seed)
    schedules.push_back({sim::SchedulePolicy::Random, seed, 0});
  for (int64_t starved : {0, 1, 2, 3, 100, 255})
    schedules.push_back({sim::SchedulePolicy::StarveOne, 0, starved});
  schedules.push_back({sim::SchedulePolicy::RoundRobin, 0, 0});
  schedules.push_back({sim::SchedulePolicy::Random, 12345, 0});
  ASSERT_GE(schedules.size(), 20u);
  for (const sim::Schedule &s : schedules) {
    FrontOutputs got = simulateFront(c, 6, in, s);
    EXPECT_EQ(got.qn, first.qn);
    EXPECT_EQ(got.kn, first.kn);
    EXPECT_EQ(got.y, first.y);
  }
}

TEST(FusionProtocol, SmallGridsWorkTooAndAgree) {
  // Fewer CTAs than tasks: every CTA walks several tasks of each stage.
  const auto c = stages::tinyConfig();
  FrontInputs in = makeFrontInputs(c, 6, 5u);
  auto a = buildFront(c, 6, 3), b = buildFront(c, 6, 256);
  sim::LaunchMemory ma(a->launch), mb(b->launch);
  loadFrontInputs(ma, in);
  loadFrontInputs(mb, in);
  auto ra = sim::simulate(a->launch, ma, {sim::SchedulePolicy::Random, 7, 0});
  auto rb = sim::simulate(b->launch, mb);
  ASSERT_TRUE(succeeded(ra) && succeeded(rb));
  ASSERT_FALSE(ra->deadlock) << ra->describe();
  EXPECT_EQ(ma.values("qn"), mb.values("qn"));
  EXPECT_EQ(ma.values("kn"), mb.values("kn"));
}

/// The tiny attention front (2 rows, grid 8), the publishes of stage `omit`
/// left out (none where empty), run on one random schedule.
struct FrontRun {
  std::unique_ptr<BuiltFront> built;
  std::unique_ptr<sim::LaunchMemory> memory;
  mlir::FailureOr<sim::SimulationResult> run = mlir::failure();
};
FrontRun runFront(const std::string &omit) {
  const auto c = stages::tinyConfig();
  mono::FusionOptions options;
  options.testOmitPublish = omit;
  FrontRun f;
  f.built = buildFront(c, 2, 8, options);
  f.memory = std::make_unique<sim::LaunchMemory>(f.built->launch);
  loadFrontInputs(*f.memory, makeFrontInputs(c, 2, 3u));
  f.run = sim::simulate(f.built->launch, *f.memory, {sim::SchedulePolicy::Random, 3, 0});
  return f;
}

TEST(FusionProtocol, AMissingPublishIsReportedAsADeadlock) {
  FrontRun f = runFront("seam.norm");
  auto &run = f.run;
  ASSERT_TRUE(succeeded(run));
  ASSERT_TRUE(run->deadlock);
  ASSERT_FALSE(run->waiters.empty());
  // Every wqkv task waits on the norm's flags for xq/xs, tag 2*0+1.
  bool sawWqkv = false;
  for (const sim::Waiter &w : run->waiters) {
    if (w.stage != "front.wqkv")
      continue;
    sawWqkv = true;
    EXPECT_EQ(w.flags, "seam.norm.flags");
    EXPECT_EQ(w.regions, (std::vector<std::string>{"xq", "xs"}));
    EXPECT_EQ(w.expectedTag, 1u);
    EXPECT_EQ(w.seenTag, 0u);
  }
  EXPECT_TRUE(sawWqkv);
  EXPECT_NE(run->describe().find("stage 'front.wqkv'"), std::string::npos) << run->describe();
}

TEST(FusionProtocol, PastAMissingPublishTheBoundedWaitsGiveUpAndTheLaunchEnds) {
  // The budget runs out: the poll that blocked first writes the record (a
  // wait downstream of the norm may have blocked before the norm's own
  // consumers, as on the GPU), every later miss gives up at once, and every
  // CTA reaches the step's end. The same launch with its
  // publish leaves the record empty.
  for (bool omit : {true, false}) {
    FrontRun f = runFront(omit ? "seam.norm" : "");
    auto &run = f.run;
    const auto &built = f.built;
    sim::LaunchMemory &memory = *f.memory;
    ASSERT_TRUE(succeeded(run));
    EXPECT_TRUE(run->ended) << run->describe();
    const int64_t record = mono::epoch::faultWord(built->launch.getGrid());
    const sim::RegionStorage &epoch = memory.region("epoch");
    if (!omit) {
      EXPECT_FALSE(run->deadlock);
      EXPECT_TRUE(run->gaveUp.empty());
      EXPECT_EQ(epoch.word(record + MONO_FAULT_STATE), 0u);
      continue;
    }
    ASSERT_EQ(run->gaveUp.size(), 1u) << run->describe();
    const sim::Waiter &first = run->gaveUp.front();
    EXPECT_EQ(epoch.word(record + MONO_FAULT_STATE), 1u);
    EXPECT_EQ(epoch.word(record + MONO_FAULT_RANK), 0u);
    EXPECT_EQ(epoch.word(record + MONO_FAULT_CTA), uint64_t(first.cta));
    EXPECT_EQ(epoch.word(record + MONO_FAULT_FLAG), uint64_t(first.blockingFlag));
    EXPECT_EQ(epoch.word(record + MONO_FAULT_EXPECTED), 1u);
    EXPECT_EQ(epoch.word(record + MONO_FAULT_SEEN), 0u);
    const auto sites = mono::waitSites(built->launch);
    const uint64_t site = epoch.word(record + MONO_FAULT_SITE);
    ASSERT_LT(site, sites.size());
    auto wait = mlir::dyn_cast<mono::WaitOp>(sites[site]);
    ASSERT_TRUE(wait);
    EXPECT_EQ(wait.getFlags(), first.flags);
    EXPECT_EQ(wait->getParentOfType<mono::StageOp>().getSymName(), first.stage);
    // Every CTA marked the step's end.
    for (int64_t cta = 0; cta < built->launch.getGrid(); ++cta)
      EXPECT_EQ(epoch.word(mono::epoch::kMarks + cta), 1u) << "CTA " << cta;
  }
}

TEST(FusionProtocol, StepsOfAlternatingWidthsNeedNoClearing) {
  // One epoch buffer for the step sequence; each width its own scratch.
  const auto c = stages::tinyConfig();
  const int64_t grid = 16;
  auto narrow = buildFront(c, 6, grid), wide = buildFront(c, 48, grid);
  sim::LaunchMemory narrowMemory(narrow->launch), wideMemory(wide->launch);
  auto epoch = narrowMemory.storage("epoch");
  ASSERT_FALSE(static_cast<bool>(wideMemory.share("epoch", epoch)));

  struct Step {
    sim::LaunchMemory *memory;
    mono::LaunchOp launch;
    int rows;
    unsigned seed;
  };
  std::vector<Step> steps = {{&narrowMemory, narrow->launch, 6, 1u},
                             {&wideMemory, wide->launch, 48, 2u},
                             {&narrowMemory, narrow->launch, 6, 3u}};
  uint64_t e = 0;
  for (const Step &step : steps) {
    SCOPED_TRACE("step " + std::to_string(e) + ", rows " + std::to_string(step.rows));
    FrontInputs in = makeFrontInputs(c, step.rows, step.seed);
    loadFrontInputs(*step.memory, in);
    auto run = sim::simulate(step.launch, *step.memory, {sim::SchedulePolicy::Random, e + 1, 0});
    ASSERT_TRUE(succeeded(run));
    ASSERT_FALSE(run->deadlock) << run->describe();
    FrontOutputs got = readFrontOutputs(*step.memory), want = referenceFront(c, step.rows, in);
    EXPECT_TRUE(ref::withinStageBounds(ref::compare(got.qn, want.qn)));
    EXPECT_TRUE(ref::withinStageBounds(ref::compare(got.kn, want.kn)));
    ++e;
    EXPECT_EQ(epoch->word(mono::epoch::kEpochWord), e);
  }
}

TEST(FusionProtocol, UnsynchronizedLaunchIsRefused) {
  mlir::MLIRContext ctx;
  auto module = stages::buildLaunch(ctx, "attention_front", stages::tinyConfig(), {});
  ASSERT_TRUE(static_cast<bool>(module));
  auto launch = *(*module)->getOps<mono::LaunchOp>().begin();
  sim::LaunchMemory memory(launch);
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    message = d.str();
    return mlir::success();
  });
  EXPECT_TRUE(failed(sim::simulate(launch, memory)));
  EXPECT_NE(message.find("run the fusion passes first"), std::string::npos) << message;
}

} // namespace

namespace {
/// y[t] = x[t % rows] * (t + 1) by a dynamic stage, then summed per row by a
/// placed one: the dynamic tasks are claimed through the step's counter.
mlir::OwningOpRef<mlir::ModuleOp> buildClaimed(mlir::MLIRContext &ctx, int64_t rows) {
  dsl::Launch l(ctx, "claimed", {"gfx950", 8, 256, rows});
  dsl::Region x = l.input("x", dsl::f32, {rows, 64});
  dsl::Region y = l.scratch("y", dsl::f32, {4 * rows, 64});
  dsl::Region out = l.output("out", dsl::f32, {rows, 64});
  l.stage("work", 4 * rows, [&](dsl::Task &t) {
    dsl::Tile v = t.loadRow(x, t.id() % rows);
    t.store(y, t.id(), 0, v * t.constant(1.0f));
  }, /*dynamic=*/true);
  l.stage("sum", rows, [&](dsl::Task &t) {
    dsl::Tile s = t.loadRow(y, t.id());
    for (int64_t k = 1; k < 4; ++k)
      s = s + t.loadRow(y, t.id() + t.index(k * rows));
    t.store(out, t.id(), 0, s);
  });
  auto module = l.finish();
  EXPECT_TRUE(static_cast<bool>(module));
  EXPECT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  return std::move(*module);
}
} // namespace

TEST(FusionProtocol, DynamicStagesClaimEveryTaskForSeventyStepsOfTheCounterRing) {
  // 70 steps go past the 64 steps of the counter ring: a counter that was not
  // zeroed half a ring ahead would start past its tasks and leave them undone.
  mlir::MLIRContext ctx;
  auto module = buildClaimed(ctx, 3);
  auto launch = *module->getOps<mono::LaunchOp>().begin();
  sim::LaunchMemory memory(launch);
  for (uint64_t step = 0; step < 70; ++step) {
    std::vector<float> x(3 * 64);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(step * 1000 + i);
    ASSERT_FALSE(static_cast<bool>(memory.setValues("x", x)));
    auto run = sim::simulate(launch, memory, {sim::SchedulePolicy::Random, step + 1, 0});
    ASSERT_TRUE(succeeded(run));
    ASSERT_FALSE(run->deadlock) << run->describe();
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      want[i] = ((x[i] + x[i]) + x[i]) + x[i];
    ASSERT_EQ(memory.values("out"), want) << "step " << step;
  }
  EXPECT_EQ(memory.region("epoch").word(mono::epoch::kEpochWord), 70u);
}

namespace {

/// A gather: @fill writes row t of s = 2 x[t]; @pick reads the row `where`
/// names. The row comes from data, so @pick waits for every @fill task.
struct Gather {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mono::LaunchOp launch;
};

std::unique_ptr<Gather> buildGather() {
  using namespace monodc::dsl;
  auto g = std::make_unique<Gather>();
  Launch l(g->context, "gather", {"gfx950", 4, 256, 1});
  Region where = l.indexInput("where", {1, 1}, 4);
  Region x = l.input("x", f32, {4, 64});
  Region s = l.scratch("s", f32, {4, 64});
  Region y = l.output("y", f32, {1, 64});
  l.stage("fill", 4, [&](Task &t) { t.store(s, t.id(), 0, t.loadRow(x, t.id()) * 2.0f); });
  l.stage("pick", 1, [&](Task &t) {
    Index row = t.toIndex(t.load(where, t.id(), 0, 1));
    t.store(y, t.id(), 0, t.loadRow(s, row));
  });
  auto module = l.finish();
  EXPECT_TRUE(static_cast<bool>(module)) << (module ? "" : llvm::toString(module.takeError()));
  if (!module)
    return nullptr;
  g->module = std::move(*module);
  EXPECT_TRUE(succeeded(mono::runFusionPipeline(*g->module)));
  g->launch = *g->module->getOps<mono::LaunchOp>().begin();
  return g;
}

TEST(FusionProtocol, AGatherByDataWaitsForEveryProducerTask) {
  auto g = buildGather();
  ASSERT_TRUE(g);
  std::vector<float> x(4 * 64);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 97) + 1.0f;
  // Each row in turn, with the CTA that fills it starved: it runs only when
  // every other CTA is blocked or done, so a wait on fewer producer tasks
  // would let @pick read the row before it is written.
  for (int row = 0; row < 4; ++row)
    for (int64_t starved = 0; starved < 4; ++starved) {
      sim::LaunchMemory memory(g->launch);
      ASSERT_FALSE(memory.setValues("where", {float(row)}));
      ASSERT_FALSE(memory.setValues("x", x));
      auto run = sim::simulate(g->launch, memory, {sim::SchedulePolicy::StarveOne, 0, starved});
      ASSERT_TRUE(succeeded(run));
      ASSERT_FALSE(run->deadlock) << run->describe();
      std::vector<float> y = memory.values("y");
      for (int i = 0; i < 64; ++i)
        ASSERT_EQ(y[i], 2.0f * x[row * 64 + i]) << "row " << row << " starved CTA " << starved;
    }
}

} // namespace
