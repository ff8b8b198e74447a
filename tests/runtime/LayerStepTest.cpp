// The layer step (LayerStep.h) over the HIP stand-in (FakeHip.c), whose
// device memory is host memory and which logs each launch's kernel and
// arguments: the step's launches run in step order, an input handed from
// an earlier launch gets that launch's buffer, step-internal outputs and
// scratch come from the rank's StepMemory (one epoch buffer for every
// layer, one scratch a kernel and width), and what cannot form a step is
// refused, naming it.
#include "monodc/runtime/HipRuntime.h"
#include "monodc/runtime/LayerStep.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>


using namespace monodc::runtime;
using namespace monodc::testing;

namespace {

/// The HIP stand-in's log; pointers by their index (8 bytes apart).
struct FakeHip : FakeHipLog {
  FakeHip() : FakeHipLog(MONODC_FAKE_HIP_PATH, 4, 1) {}
  void *pointer(int launch, size_t i) const { return pointerAt(launch, int64_t(8 * i)); }
};

std::unique_ptr<Launcher> load(std::shared_ptr<DeviceRuntime> runtime, const StepLaunch &l) {
  auto interface = LaunchInterface::parse(stepManifest(l));
  EXPECT_TRUE(interface.ok()) << interface.message();
  const std::string elf = stepCodeObject(l);
  auto info = readCodeObject(elf);
  auto layout = layoutArguments(*interface, &info->kernels[0]);
  EXPECT_TRUE(layout.ok()) << layout.message();
  auto launcher = Launcher::create(runtime, std::vector<char>(elf.begin(), elf.end()), *interface,
                                   *layout, 0);
  EXPECT_TRUE(launcher.ok()) << launcher.message();
  return launcher.ok() ? std::move(*launcher) : nullptr;
}

struct Rig {
  FakeHip fake;
  std::shared_ptr<DeviceRuntime> hip;
  std::shared_ptr<StepMemory> memory;
  Rig() {
    auto loaded = HipRuntime::load({MONODC_FAKE_HIP_PATH});
    EXPECT_TRUE(loaded.ok()) << loaded.message();
    hip = *loaded;
    memory = std::make_shared<StepMemory>(hip, 0);
  }
  /// Each width's launches, in the order given.
  Result<std::unique_ptr<LayerStep>> step(const std::vector<std::vector<StepLaunch>> &widths) {
    std::vector<std::vector<std::unique_ptr<Launcher>>> launchers;
    for (const auto &width : widths) {
      launchers.emplace_back();
      for (const StepLaunch &l : width)
        launchers.back().push_back(load(hip, l));
    }
    return LayerStep::create(memory, std::move(launchers));
  }
};

// K2 with a block table whose columns are given at launch, after w2: its
// arguments q 0, cache 1, its rows 2, x 3, w2 4, table 5, its columns 6, y 7.
StepLaunch k2WithTable(int64_t rows) {
  StepLaunch k2 = sampleK2(rows);
  k2.args.insert(k2.args.begin() + 4, "table input i32 " + std::to_string(rows) + " 8 " +
                                          std::to_string(rows * 8 * 4));
  k2.tail += "index table 4\ncols_at_launch table\n";
  return k2;
}

// Argument indices (8 bytes each, in manifest order): K1 x 0, w1 1, cache 2,
// its rows 3, q 4, h 5, scratch 6, epoch 7; K2 q 0, cache 1, its rows 2, x 3,
// w2 4, y 5, t 6, scratch 7, epoch 8.
TEST(LayerStep, RunsK1ThenK2WithWhatK1HandsOver) {
  Rig rig;
  auto step = rig.step({{sampleK1(6), sampleK2(6)}, {sampleK1(2), sampleK2(2)}});
  ASSERT_TRUE(step.ok()) << step.message();
  LayerStep &s = **step;
  EXPECT_EQ(s.widths(), (std::vector<int64_t>{2, 6}));
  char x[6 * 64], w1[64], w2[64], cache[128], y[6 * 64];
  for (auto [name, buffer] : {std::pair<const char *, char *>{"x", x}, {"w1", w1}, {"w2", w2}})
    ASSERT_TRUE(s.bind(name, buffer).ok()) << name;
  EXPECT_EQ(s.run(6, nullptr).message(),
            "kernel mono_k1 of the step of 6 rows has unbound arguments: cache, cache.rows");
  ASSERT_TRUE(s.bind("cache", cache).ok());
  // The cache's rows are the caller's, given at launch, to every launch.
  EXPECT_NE(s.bind("cache.rows", cache).message().find("set it with setRows"), std::string::npos);
  EXPECT_NE(s.setRows("x", 4).message().find("fixed when it was built"), std::string::npos);
  ASSERT_TRUE(s.setRows("cache", 4).ok());
  EXPECT_EQ(s.run(6, nullptr).message(),
            "kernel mono_k2 of the step of 6 rows has unbound arguments: y");
  EXPECT_EQ(rig.fake.launches(), 0) << "a step that cannot run whole launches nothing";
  ASSERT_TRUE(s.bind("y", y).ok());

  ASSERT_TRUE(s.run(6, nullptr).ok());
  ASSERT_EQ(rig.fake.launches(), 2);
  EXPECT_EQ(rig.fake.kernel(0), "mono_k1");
  EXPECT_EQ(rig.fake.kernel(1), "mono_k2");
  EXPECT_EQ(rig.fake.pointer(0, 0), x);
  EXPECT_EQ(rig.fake.pointer(1, 3), x) << "one name, one tensor for both launches";
  EXPECT_EQ(rig.fake.pointer(0, 2), cache);
  EXPECT_EQ(rig.fake.pointer(1, 1), cache) << "K2 reads the cache K1 wrote";
  EXPECT_EQ(reinterpret_cast<intptr_t>(rig.fake.pointer(0, 3)), 4);
  EXPECT_EQ(reinterpret_cast<intptr_t>(rig.fake.pointer(1, 2)), 4) << "K2 reads K1's rows";
  void *q6 = rig.fake.pointer(0, 4);
  ASSERT_NE(q6, nullptr);
  EXPECT_EQ(rig.fake.pointer(1, 0), q6) << "K2's q is K1's q";
  EXPECT_NE(rig.fake.pointer(0, 5), nullptr) << "K1's step-internal h has a buffer";
  EXPECT_NE(rig.fake.pointer(0, 5), q6);
  EXPECT_EQ(rig.fake.pointer(1, 5), y);
  void *epoch = rig.fake.pointer(0, 7);
  EXPECT_NE(epoch, nullptr);
  EXPECT_EQ(rig.fake.pointer(1, 8), epoch) << "one epoch buffer for the step";
  EXPECT_NE(rig.fake.pointer(0, 6), rig.fake.pointer(1, 7)) << "each kernel its own scratch";
  EXPECT_EQ(static_cast<unsigned char *>(rig.fake.pointer(0, 6))[0], 0) << "zeroed";

  ASSERT_TRUE(s.run(2, nullptr).ok());
  ASSERT_EQ(rig.fake.launches(), 4);
  EXPECT_EQ(rig.fake.pointer(2, 0), x) << "a row input bound once serves every width";
  EXPECT_NE(rig.fake.pointer(2, 4), q6) << "each width its own hand-over";
  EXPECT_EQ(rig.fake.pointer(3, 0), rig.fake.pointer(2, 4));
  EXPECT_EQ(rig.fake.pointer(3, 8), epoch) << "every width shares the epoch buffer";

  EXPECT_EQ(s.run(3, nullptr).message(), "this layer step has no step width of 3 rows (its widths: 2, 6)");
  EXPECT_NE(s.bind("q", x).message().find("region 'q' belongs to the layer step"), std::string::npos);
  EXPECT_NE(s.bind("h", x).message().find("belongs to the layer step"), std::string::npos);
  EXPECT_NE(s.bind("mono_epoch", x).message().find("belongs to the layer step"), std::string::npos);
  EXPECT_EQ(s.bind("z", x).message(),
            "no launch of this layer step (mono_k1, mono_k2) has a region 'z'");
  EXPECT_EQ(s.bindRank(0).message(), "no launch of this layer step uses peer memory: it takes no rank");
}

TEST(LayerStep, BindsBuffersOfAKnownSizeCheckedAgainstEveryWidth) {
  Rig rig;
  auto step = rig.step({{sampleK1(6), sampleK2(6)}, {sampleK1(2), sampleK2(2)}});
  ASSERT_TRUE(step.ok()) << step.message();
  LayerStep &s = **step;
  char x[6 * 64], w[64], cache[5 * 32], y[6 * 64];
  // A row input holds the widest step's rows; a refused buffer stays unbound.
  EXPECT_EQ(s.bindBuffer("x", x, 2 * 64).message(),
            "region 'x' of kernel mono_k1 needs 384 bytes; a buffer of 128 bytes is too small");
  EXPECT_EQ(s.bindBuffer("w1", w, 63).message(),
            "region 'w1' of kernel mono_k1 needs 64 bytes; a buffer of 63 bytes is too small");
  // The cache is a whole number of its rows, which the buffer then gives
  // every launch (K2 too, handed it).
  EXPECT_EQ(s.bindBuffer("cache", cache, 100).message(),
            "region 'cache' of kernel mono_k1 is sized at launch in rows of 32 bytes; a buffer "
            "of 100 bytes is not a whole number of them");
  EXPECT_NE(s.bindBuffer("cache", cache, ((int64_t(1) << 24) + 1) * 32).message().find(
                "cannot have 16777217 rows (1 .. 16777216)"),
            std::string::npos);
  EXPECT_NE(s.bindBuffer("q", x, 6 * 64).message().find("belongs to the layer step"),
            std::string::npos);
  EXPECT_EQ(s.run(6, nullptr).message(),
            "kernel mono_k1 of the step of 6 rows has unbound arguments: x, w1, cache, cache.rows");
  ASSERT_TRUE(s.bindBuffer("x", x, sizeof x).ok());
  ASSERT_TRUE(s.bindBuffer("w1", w, sizeof w).ok());
  ASSERT_TRUE(s.bindBuffer("w2", w, sizeof w).ok());
  ASSERT_TRUE(s.bindBuffer("cache", cache, sizeof cache).ok());
  ASSERT_TRUE(s.bindBuffer("y", y, sizeof y).ok());
  ASSERT_TRUE(s.run(6, nullptr).ok());
  ASSERT_TRUE(s.run(2, nullptr).ok());
  ASSERT_EQ(rig.fake.launches(), 4);
  for (int launch : {0, 2})
    EXPECT_EQ(reinterpret_cast<intptr_t>(rig.fake.pointer(launch, 3)), 5) << "K1's rows";
  for (int launch : {1, 3})
    EXPECT_EQ(reinterpret_cast<intptr_t>(rig.fake.pointer(launch, 2)), 5) << "K2's rows";
  EXPECT_EQ(rig.fake.pointer(1, 1), cache);
}

TEST(LayerStep, TheLayersOfARankShareTheEpochAndTheStepInternalBuffers) {
  Rig rig;
  auto first = rig.step({{sampleK1(6), sampleK2(6)}});
  auto second = rig.step({{sampleK1(6), sampleK2(6)}});
  ASSERT_TRUE(first.ok() && second.ok()) << first.message() << second.message();
  char x[6 * 64], w[64], cache[2][128], y[6 * 64];
  for (LayerStep *s : {first->get(), second->get()}) {
    for (const char *name : {"x", "w1", "w2"})
      ASSERT_TRUE(s->bind(name, name[0] == 'x' ? x : w).ok());
    ASSERT_TRUE(s->bind("cache", cache[s == second->get()]).ok());
    ASSERT_TRUE(s->setRows("cache", s == second->get() ? 3 : 4).ok());
    ASSERT_TRUE(s->bind("y", y).ok());
    ASSERT_TRUE(s->run(6, nullptr).ok());
  }
  ASSERT_EQ(rig.fake.launches(), 4);
  EXPECT_EQ(rig.fake.pointer(2, 7), rig.fake.pointer(0, 7)) << "one epoch buffer a rank";
  EXPECT_EQ(rig.fake.pointer(2, 4), rig.fake.pointer(0, 4)) << "K1's q, dead after its step";
  EXPECT_EQ(rig.fake.pointer(3, 1), cache[1]) << "each layer its own cache";
  EXPECT_EQ(reinterpret_cast<intptr_t>(rig.fake.pointer(3, 2)), 3) << "and its own rows";
  EXPECT_EQ(rig.memory->epochWords(), 270);
  EXPECT_EQ(rig.fake.pointer(2, 6), rig.fake.pointer(0, 6)) << "K1's scratch, one for both layers";
  EXPECT_EQ(rig.fake.pointer(3, 7), rig.fake.pointer(1, 7)) << "K2's scratch, one for both layers";
  EXPECT_EQ(rig.memory->internalBytes(), 3 * 6 * 64 + 2 * 512)
      << "q, h and t, and K1's and K2's scratch, once for both layers";
}

TEST(LayerStep, RefusesLaunchesThatDoNotFormAStep) {
  Rig rig;
  EXPECT_EQ(rig.step({{sampleK2(6), sampleK1(6)}}).message(),
            "kernel mono_k2 ends the step, and mono_k1 follows it: a step's last launch ends it");
  EXPECT_EQ(rig.step({{sampleK1(6)}}).message(),
            "the step of 6 rows ends with kernel mono_k1, which leaves the step to a launch after "
            "it (K1 needs its K2)");
  EXPECT_EQ(rig.step({{sampleK2(6)}}).message(),
            "kernel mono_k2's input 'q' is handed from kernel mono_k1, which does not run before "
            "it in the step of 6 rows");
  StepLaunch second = sampleK1(6);
  second.kernel = "mono_k1b";
  second.endsStep = true;
  EXPECT_EQ(rig.step({{sampleK1(6), second}}).message(),
            "kernel mono_k1b (step tag 1) follows mono_k1 (step tag 1): a step's launches run in "
            "step-tag order");
  EXPECT_EQ(rig.step({{sampleK1(6), sampleK2(2)}}).message(),
            "kernel mono_k2 is built for 2 rows, and its step's first launch for 6: a step's "
            "launches share its width");
  EXPECT_EQ(rig.step({{sampleK1(6), sampleK2(6)}, {sampleK1(6), sampleK2(6)}}).message(),
            "a layer step was given the step width of 6 rows twice");
  StepLaunch wideQ = sampleK1(6);
  wideQ.args[3] = "q output f32 6 32 768";
  EXPECT_EQ(rig.step({{wideQ, sampleK2(6)}}).message(),
            "kernel mono_k2's input 'q' (bf16 [6, 32]) is handed from kernel mono_k1's output "
            "'q', which is output f32 [6, 32]");
  Rig fresh; // the refused steps above left buffers of another q in rig's memory
  StepLaunch clash = sampleK2(6);
  clash.args[3] = "x weight f32 1 32 128";
  clash.args[2] = "w2 input bf16 6 32 384";
  EXPECT_EQ(fresh.step({{sampleK1(6), clash}}).message(),
            "region 'x' is weight f32 [1, 32] in kernel mono_k2 and input bf16 [6, 32] in kernel "
            "mono_k1: the caller binds a name once for the whole layer step");
  StepLaunch noResult = sampleK2(6);
  noResult.tail = "from q mono_k1 q\nfrom cache mono_k1 cache\n";
  EXPECT_EQ(rig.step({{sampleK1(6), noResult}}).message(),
            "kernel mono_k2 declares no step result: it is not a launch of a layer step (K1 then "
            "K2, or the FFN launch)");
  EXPECT_EQ(rig.fake.launches(), 0);
}

TEST(LayerStep, NamesTheLaunchWhoseWaitGaveUp) {
  // The stand-in's device memory is host memory: the test writes the
  // record as a poll that gave up would; its tag says which launch.
  Rig rig;
  auto step = rig.step({{sampleK1(6), sampleK2(6)}});
  ASSERT_TRUE(step.ok()) << step.message();
  LayerStep &s = **step;
  EXPECT_TRUE(s.checkWaits(nullptr).ok());
  ASSERT_TRUE(s.setWaitBudget(1000).ok());
  auto *epoch = static_cast<uint32_t *>(*rig.memory->epoch(270));
  uint32_t *record = epoch + mono_epoch_fault_word(4);
  EXPECT_EQ(record[MONO_FAULT_BUDGET_US], 1000u);
  record[MONO_FAULT_STATE] = 1;
  record[MONO_FAULT_EXPECTED] = 2 * 5 + 2;
  EXPECT_EQ(s.checkWaits(nullptr).message().rfind("kernel mono_k2: rank 0 CTA 0 gave up", 0), 0u)
      << s.checkWaits(nullptr).message();
  record[MONO_FAULT_EXPECTED] = 2 * 5 + 1;
  EXPECT_EQ(s.checkWaits(nullptr).message().rfind("kernel mono_k1: rank 0 CTA 0 gave up", 0), 0u)
      << s.checkWaits(nullptr).message();
  ASSERT_TRUE(s.reset().ok());
  EXPECT_TRUE(s.checkWaits(nullptr).ok()) << "reset zeroes the epoch buffer, the record with it";
}

} // namespace

// A block table as long as the engine's longest sequence: its columns are
// given at launch (8 when built), to every launch and width that has it; a
// buffer is checked against the columns set, the columns against a buffer
// bound with its size, and a refusal changes nothing.
TEST(LayerStep, TakesABlockTablesColumnsAtLaunch) {
  Rig rig;
  auto step = rig.step({{sampleK1(6), k2WithTable(6)}, {sampleK1(2), k2WithTable(2)}});
  ASSERT_TRUE(step.ok()) << step.message();
  LayerStep &s = **step;
  char x[6 * 64], w1[64], w2[64], cache[128], y[6 * 64];
  std::vector<int32_t> table(6 * 40);
  for (auto [name, buffer] : {std::pair<const char *, char *>{"x", x}, {"w1", w1}, {"w2", w2},
                              {"cache", cache}, {"y", y}})
    ASSERT_TRUE(s.bind(name, buffer).ok()) << name;
  ASSERT_TRUE(s.setRows("cache", 4).ok());
  EXPECT_NE(s.bindBuffer("table", table.data(), 6 * 8 * 4 - 4)
                .message()
                .find("needs 192 bytes (6 rows of 8 columns)"),
            std::string::npos);
  EXPECT_NE(s.setCols("x", 4).message().find("columns fixed when it was built"),
            std::string::npos);
  EXPECT_NE(s.setCols("table", 0).message().find("cannot have 0 columns"), std::string::npos);
  EXPECT_NE(s.bind("table.cols", table.data()).message().find("set it with setCols"),
            std::string::npos);
  ASSERT_TRUE(s.setCols("table", 40).ok());
  ASSERT_TRUE(s.bindBuffer("table", table.data(), 6 * 40 * 4).ok());
  EXPECT_NE(s.setCols("table", 41).message().find("at 41 columns needs 984 bytes; its bound "
                                                  "buffer holds 960"),
            std::string::npos);
  for (int64_t rows : {6, 2}) {
    ASSERT_TRUE(s.run(rows, nullptr).ok()) << rows;
    const int k2 = rig.fake.launches() - 1;
    EXPECT_EQ(rig.fake.kernel(k2), "mono_k2");
    EXPECT_EQ(rig.fake.pointer(k2, 5), table.data());
    EXPECT_EQ(reinterpret_cast<intptr_t>(rig.fake.pointer(k2, 6)), 40)
        << "the columns set, not the refused 41, at width " << rows;
  }
}
