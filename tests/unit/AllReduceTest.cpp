// The exact all-reduce over TP ranks, each rank a simulated device sharing
// peer memory: every rank ends with the reference sum bit for bit, under
// many schedules and over consecutive steps (both parity halves, nothing
// cleared); a missing peer publish is a deadlock naming the flags.
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

struct Ranks {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mono::LaunchOp launch;
  std::vector<std::unique_ptr<sim::LaunchMemory>> memories;
  std::vector<sim::LaunchMemory *> pointers;
};

std::unique_ptr<Ranks> build(int tp, int rows, const mono::FusionOptions &options = {}) {
  auto r = std::make_unique<Ranks>();
  stages::BuildParams params;
  params.rows = rows;
  params.tp = tp;
  params.grid = 8;
  auto module = stages::buildLaunch(r->context, "allreduce", stages::tinyConfig(), params);
  EXPECT_TRUE(static_cast<bool>(module));
  r->module = std::move(*module);
  EXPECT_TRUE(succeeded(mono::runFusionPipeline(*r->module, options)));
  r->launch = *r->module->getOps<mono::LaunchOp>().begin();
  for (int k = 0; k < tp; ++k) {
    r->memories.push_back(std::make_unique<sim::LaunchMemory>(r->launch));
    r->pointers.push_back(r->memories.back().get());
  }
  return r;
}

std::vector<std::vector<float>> loadPartials(Ranks &r, int rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> partials;
  for (sim::LaunchMemory *memory : r.pointers) {
    std::vector<float> p(size_t(rows) * stages::tinyConfig().hidden);
    for (float &v : p)
      v = formats::roundToBf16(normal(rng));
    EXPECT_FALSE(static_cast<bool>(memory->setValues("partial", p)));
    partials.push_back(p);
  }
  return partials;
}

TEST(AllReduce, EveryRankHoldsTheExactSumUnderManySchedules) {
  for (int tp : {2, 4})
    for (int rows : {1, 6}) {
      SCOPED_TRACE("tp " + std::to_string(tp) + " rows " + std::to_string(rows));
      for (uint64_t seed = 1; seed <= 6; ++seed) {
        auto r = build(tp, rows);
        auto partials = loadPartials(*r, rows, 40u + tp + rows);
        sim::Schedule schedule{seed % 3 == 0 ? sim::SchedulePolicy::StarveOne
                                             : sim::SchedulePolicy::Random,
                               seed, int64_t(seed)};
        auto run = sim::simulateRanks(r->launch, r->pointers, schedule);
        ASSERT_TRUE(succeeded(run));
        ASSERT_FALSE(run->deadlock) << run->describe();
        std::vector<float> want = ref::allReduce(partials);
        for (sim::LaunchMemory *memory : r->pointers)
          EXPECT_EQ(memory->values("reduced"), want);
      }
    }
}

TEST(AllReduce, ConsecutiveStepsUseBothParityHalvesWithoutClearing) {
  auto r = build(2, 6);
  for (unsigned step = 0; step < 4; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    auto partials = loadPartials(*r, 6, 100u + step);
    auto run = sim::simulateRanks(r->launch, r->pointers, {sim::SchedulePolicy::Random, step, 0});
    ASSERT_TRUE(succeeded(run));
    ASSERT_FALSE(run->deadlock) << run->describe();
    for (sim::LaunchMemory *memory : r->pointers) {
      EXPECT_EQ(memory->values("reduced"), ref::allReduce(partials));
      EXPECT_EQ(memory->region("epoch").word(mono::epoch::kEpochWord), step + 1);
    }
  }
}

TEST(AllReduce, AMissingPeerPublishIsADeadlock) {
  mono::FusionOptions options;
  options.testOmitPublish = "allreduce.push";
  auto r = build(2, 2, options);
  loadPartials(*r, 2, 7u);
  auto run = sim::simulateRanks(r->launch, r->pointers, {sim::SchedulePolicy::Random, 1, 0});
  ASSERT_TRUE(succeeded(run));
  ASSERT_TRUE(run->deadlock);
  EXPECT_NE(run->describe().find("waits on 'allreduce.push.peer_flags from rank 0'"),
            std::string::npos)
      << run->describe();
}

TEST(AllReduce, PastAMissingPeerPublishEveryRankGivesUpAndTheLaunchEnds) {
  // As the GPU's bounded waits do: each rank's first blocked poll writes
  // the rank's wait-fault record (its peer wait's site, the flag, the tags),
  // and the launch runs to its end. Without the fault, no record.
  for (bool omit : {true, false}) {
    mono::FusionOptions options;
    if (omit)
      options.testOmitPublish = "allreduce.push";
    auto r = build(2, 2, options);
    loadPartials(*r, 2, 7u);
    auto run = sim::simulateRanks(r->launch, r->pointers, {sim::SchedulePolicy::Random, 1, 0});
    ASSERT_TRUE(succeeded(run));
    EXPECT_TRUE(run->ended) << run->describe();
    const auto sites = mono::waitSites(r->launch);
    const int64_t record = mono::epoch::faultWord(r->launch.getGrid());
    for (int rank = 0; rank < 2; ++rank) {
      const sim::RegionStorage &epoch = r->memories[rank]->region("epoch");
      if (!omit) {
        EXPECT_EQ(epoch.word(record + MONO_FAULT_STATE), 0u) << "rank " << rank;
        continue;
      }
      ASSERT_EQ(run->gaveUp.size(), 2u) << run->describe();
      EXPECT_EQ(epoch.word(record + MONO_FAULT_STATE), 1u);
      EXPECT_EQ(epoch.word(record + MONO_FAULT_RANK), uint64_t(rank));
      const uint64_t site = epoch.word(record + MONO_FAULT_SITE);
      ASSERT_LT(site, sites.size());
      EXPECT_TRUE(mlir::isa<mono::WaitPeerOp>(sites[site]));

      EXPECT_EQ(epoch.word(record + MONO_FAULT_EXPECTED), 1u) << "step 0's tag, tag offset 1";
      EXPECT_EQ(epoch.word(record + MONO_FAULT_SEEN), 0u);
    }
    if (omit)
      EXPECT_NE(run->describe().find("gives up at wait site"), std::string::npos)
          << run->describe();
  }
}

TEST(AllReduce, ALostRankMakesEveryOtherRankGiveUpNamingItsFlags) {
  // One rank never runs (a process that died): each other rank's first
  // blocked poll writes its record, naming a peer wait on the lost rank's
  // flags, and those ranks run to the step's end; the lost rank wrote
  // nothing.
  for (auto [tp, lost] : {std::pair{2, 1}, std::pair{4, 2}}) {
    auto r = build(tp, 2);
    loadPartials(*r, 2, 7u);
    sim::Schedule schedule{sim::SchedulePolicy::Random, 5, 0};
    schedule.lostRank = lost;
    auto run = sim::simulateRanks(r->launch, r->pointers, schedule);
    ASSERT_TRUE(succeeded(run));
    EXPECT_TRUE(run->deadlock);
    EXPECT_TRUE(run->ended) << run->describe();
    ASSERT_EQ(run->gaveUp.size(), size_t(tp - 1)) << run->describe();
    const auto sites = mono::waitSites(r->launch);
    const int64_t record = mono::epoch::faultWord(r->launch.getGrid());
    for (int rank = 0; rank < tp; ++rank) {
      const sim::RegionStorage &epoch = r->memories[rank]->region("epoch");
      if (rank == lost) {
        EXPECT_EQ(epoch.word(record + MONO_FAULT_STATE), 0u);
        EXPECT_EQ(epoch.word(mono::epoch::kMarks), 0u) << "the lost rank never ran";
        continue;
      }
      EXPECT_EQ(epoch.word(record + MONO_FAULT_STATE), 1u) << "TP " << tp << " rank " << rank;
      auto wait = mlir::dyn_cast<mono::WaitPeerOp>(sites[epoch.word(record + MONO_FAULT_SITE)]);
      ASSERT_TRUE(wait);
      EXPECT_EQ(int(wait.getRank()), lost) << "TP " << tp << " rank " << rank;
      EXPECT_EQ(epoch.word(mono::epoch::kMarks), 1u) << "rank " << rank << " reached the end";
    }
  }
}

TEST(AllReduce, AWrongRankOrderIsCaught) {
  // Partials 2^30, 1, -2^30, 1: in rank order f32 gives 1, in reverse 0. The
  // exact check must tell the two orders apart.
  auto r = build(4, 1);
  const int64_t h = stages::tinyConfig().hidden;
  std::vector<std::vector<float>> partials;
  for (float v : {1073741824.0f, 1.0f, -1073741824.0f, 1.0f})
    partials.push_back(std::vector<float>(h, v));
  for (int k = 0; k < 4; ++k)
    ASSERT_FALSE(static_cast<bool>(r->pointers[k]->setValues("partial", partials[k])));
  auto run = sim::simulateRanks(r->launch, r->pointers, {});
  ASSERT_TRUE(succeeded(run) && !run->deadlock);
  std::vector<std::vector<float>> reversed(partials.rbegin(), partials.rend());
  EXPECT_EQ(r->pointers[0]->values("reduced"), ref::allReduce(partials));
  EXPECT_EQ(r->pointers[0]->values("reduced")[0], 1.0f);
  EXPECT_NE(r->pointers[0]->values("reduced"), ref::allReduce(reversed));
}

} // namespace
