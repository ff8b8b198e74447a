// mono.expert_groups through the DSL, the simulator and the emitter: a stage
// cuts the places of a sorted expert list (an index input) into slots and
// stores the four results; the simulator's slots against a walk over the
// places written here, the emitted call, and the DSL's refusal of empty slots.
#include "FusedLaunch.h"

#include "monodc/Emit/EmitPipeline.h"
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/dsl/Launch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace monodc;
using namespace monodc::dsl;

namespace {

constexpr int64_t kPlaces = 288, kGroup = 8;

mlir::OwningOpRef<mlir::ModuleOp> groupsLaunch(mlir::MLIRContext &ctx, const std::string &arch,
                                               int64_t group = kGroup) {
  Launch l(ctx, "plan", {arch, 4, 256, 48});
  Region experts = l.indexInput("experts", {1, kPlaces}, 384);
  Region out = l.output("groups", f32, {4, kPlaces});
  l.stage("cut", 1, [&](Task &t) {
    ExpertGroups g = expertGroups(t.loadRow(experts, t.index(0)), group);
    const Tile *rows[] = {&g.slotExpert, &g.slotFirst, &g.slotCount, &g.placeRow};
    for (int64_t r = 0; r < 4; ++r)
      t.store(out, t.index(r), 0, *rows[r]);
  });
  auto module = l.finish();
  if (!module) {
    ADD_FAILURE() << llvm::toString(module.takeError());
    return nullptr;
  }
  return std::move(*module);
}

TEST(SimulatorExpertGroups, SlotsMatchAWalkOverThePlaces) {
  mlir::MLIRContext ctx;
  auto module = groupsLaunch(ctx, "gfx950");
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(*module)));
  auto launch = monodc::testing::launchOf(*module);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> pick(0, 383);
  std::vector<float> experts(kPlaces);
  for (float &e : experts)
    e = float(pick(rng));
  std::fill(experts.begin(), experts.begin() + 21, 17.0f);  // a run of three slots
  std::sort(experts.begin(), experts.end());
  sim::LaunchMemory memory(launch);
  ASSERT_FALSE(memory.setValues("experts", experts));
  auto run = sim::simulate(launch, memory);
  ASSERT_TRUE(succeeded(run));
  ASSERT_FALSE(run->deadlock) << run->describe();
  const std::vector<float> got = memory.values("groups");

  std::vector<float> want(4 * kPlaces);
  std::fill(want.begin(), want.begin() + kPlaces, -1.0f);
  std::fill(want.begin() + kPlaces, want.begin() + 2 * kPlaces, float(kPlaces));
  int64_t slot = -1, inSlot = 0;
  for (int64_t q = 0; q < kPlaces; ++q) {
    if (q == 0 || experts[q] != experts[q - 1] || inSlot == kGroup) {
      ++slot;
      inSlot = 0;
      want[slot] = experts[q];
      want[kPlaces + slot] = float(q);
    }
    want[3 * kPlaces + q] = float(slot * kGroup + inSlot);
    want[2 * kPlaces + slot] = float(++inSlot);
  }
  EXPECT_EQ(got, want);
  // Expert 17's 21 places (at least) take slots of 8, 8 and the rest.
  const auto firstOf17 = std::find(experts.begin(), experts.end(), 17.0f) - experts.begin();
  const int64_t slot17 = int64_t(got[3 * kPlaces + firstOf17]) / kGroup;
  EXPECT_EQ(got[2 * kPlaces + slot17], 8.0f);
  EXPECT_EQ(got[2 * kPlaces + slot17 + 1], 8.0f);
  EXPECT_EQ(got[slot17 + 1], 17.0f);
}

TEST(SimulatorExpertGroups, TheEmittedCallAndItsSharedMemory) {
  mlir::MLIRContext ctx;
  auto module = groupsLaunch(ctx, "sm_90");
  ASSERT_TRUE(module);
  auto hip = emit::emitHip(*module);
  ASSERT_TRUE(succeeded(hip));
  // 288 places: 2 values a thread; experts, starts and firsts in shared memory.
  EXPECT_NE(hip->find("mono_expert_groups<2, 288, 8>("), std::string::npos);
  EXPECT_NE(hip->find("MONO_SHARED float mono_lds[865];"), std::string::npos) << "3 x 288 + 1 words";
}

TEST(SimulatorExpertGroups, SlotsOfNoPlacesAreRefused) {
  mlir::MLIRContext ctx;
  Launch l(ctx, "plan", {"gfx950", 4, 256, 1});
  Region experts = l.indexInput("experts", {1, 8}, 384);
  Region out = l.output("rows", f32, {1, 8});
  l.stage("groups", 1, [&](Task &t) {
    t.store(out, t.index(0), 0, expertGroups(t.loadRow(experts, t.index(0)), 0).placeRow);
  });
  auto module = l.finish();
  ASSERT_FALSE(static_cast<bool>(module));
  EXPECT_NE(llvm::toString(module.takeError()).find("expertGroups with slots of 0 places"),
            std::string::npos);
}

} // namespace
