// The launcher: with no HIP runtime or CUDA driver, or no GPU, it is a clear
// error; with stand-ins (FakeHip.c, FakeCuda.c) its loading, occupancy
// check, scratch buffer, dynamic shared memory and kernel arguments are
// checked without a GPU, and the wait-fault record it reads after a launch.
#include "monodc/runtime/CudaDriver.h"
#include "monodc/runtime/HipRuntime.h"
#include "monodc/runtime/Launcher.h"
#include "monodc/runtime/WaitFault.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <dlfcn.h>

using namespace monodc::runtime;
using namespace monodc::testing;

namespace {

const std::vector<std::string> kArgs = {"u", "w", "y"};

struct Fake {
  explicit Fake(const char *path = MONODC_FAKE_HIP_PATH)
      : handle(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {}
  void *handle;
  template <typename F> F get(const char *name) { return reinterpret_cast<F>(dlsym(handle, name)); }
};

/// The stand-in's device: `units` compute units holding `perUnit` resident
/// CTAs of the kernel each, `devices` devices (0: none).
void configure(Fake &fake, const char *configureFunction, int units, int perUnit, int devices) {
  fake.get<void (*)(int, int, int)>(configureFunction)(units, perUnit, devices);
}

/// The kernel arguments of the stand-in's last launch (empty unless they
/// are `size` bytes).
std::vector<unsigned char> lastKernelArguments(Fake &fake, const char *kernargFunction,
                                               size_t size) {
  size_t got = 0;
  const unsigned char *kernarg = fake.get<const unsigned char *(*)(size_t *)>(kernargFunction)(&got);
  EXPECT_EQ(got, size);
  return got == size ? std::vector<unsigned char>(kernarg, kernarg + size)
                     : std::vector<unsigned char>();
}

/// The argument of type T at byte `offset` of `arguments`.
template <typename T> T argumentAt(const std::vector<unsigned char> &arguments, size_t offset) {
  T value{};
  if (offset + sizeof(T) <= arguments.size())
    std::memcpy(&value, arguments.data() + offset, sizeof(T));
  return value;
}
/// The i-th pointer of a kernel's arguments (pointers 8 bytes apart).
void *pointerAt(const std::vector<unsigned char> &arguments, size_t i) {
  return argumentAt<void *>(arguments, i * sizeof(void *));
}

struct Prepared {
  std::vector<char> codeObject;
  LaunchInterface interface;
  ArgumentLayout layout;
};

/// An AMD code object and its layout; or, `cubin`, the same bytes standing
/// for a cubin (the fake driver only checks the ELF magic) with nvrtc's
/// layout (no notes: pointers 8 bytes apart) and `dynamicShared` bytes.
Prepared prepare(bool cubin = false, int64_t dynamicShared = 0,
                 const std::string &manifestTail = "") {
  std::string elf = makeAmdgpuElf("amdgcn-amd-amdhsa--gfx950", {makeKernelFor("mono_k", kArgs)});
  Prepared p;
  p.codeObject.assign(elf.begin(), elf.end());
  p.interface = *LaunchInterface::parse(makeManifest("mono_k", kArgs) + manifestTail);
  p.interface.dynamicSharedBytes = dynamicShared;
  auto info = readCodeObject(elf);
  p.layout = *layoutArguments(p.interface, cubin ? nullptr : &info->kernels[0]);
  return p;
}

TEST(HipRuntime, AMissingLibraryIsAClearError) {
  auto hip = HipRuntime::load({"libmonodc-no-such-hip.so", "/nowhere/libamdhip64.so"});
  ASSERT_FALSE(hip.ok());
  EXPECT_NE(hip.message().find("cannot load the HIP runtime (tried libmonodc-no-such-hip.so, "
                               "/nowhere/libamdhip64.so)"),
            std::string::npos)
      << hip.message();
}

TEST(HipRuntime, NoGpuIsAClearError) {
  // ROCm's own libamdhip64 where installed (the setup script installs it for
  // hiprtc), else the loader's error: either way an error naming the runtime.
  Prepared p = prepare();
  auto hip = HipRuntime::load();
  if (!hip.ok()) {
    EXPECT_NE(hip.message().find("cannot load the HIP runtime"), std::string::npos);
    return;
  }
  auto launcher = Launcher::create(*hip, p.codeObject, p.interface, p.layout, 0);
  ASSERT_FALSE(launcher.ok()) << "this test expects a machine without an AMD GPU";
  EXPECT_NE(launcher.message().find("the HIP runtime found no usable GPU: hipInit failed in "),
            std::string::npos)
      << launcher.message();
}

TEST(Launcher, AllocatesZeroesBindsAndLaunches) {
  Fake fake;
  ASSERT_NE(fake.handle, nullptr) << dlerror();
  configure(fake, "fake_hip_configure", 4, 1, 1);
  auto hip = HipRuntime::load({MONODC_FAKE_HIP_PATH});
  ASSERT_TRUE(hip.ok()) << hip.message();
  Prepared p = prepare();
  {
    auto launcher = Launcher::create(*hip, p.codeObject, p.interface, p.layout, 0);
    ASSERT_TRUE(launcher.ok()) << launcher.message();
    EXPECT_STREQ(fake.get<const char *(*)()>("fake_hip_kernel")(), "mono_k");
    EXPECT_EQ(fake.get<size_t (*)()>("fake_hip_allocated")(), 512u);
    EXPECT_EQ(fake.get<size_t (*)()>("fake_hip_zeroed")(), 512u);
    auto *scratch = static_cast<unsigned char *>(fake.get<void *(*)()>("fake_hip_last_allocation")());
    EXPECT_EQ(scratch[0], 0);
    EXPECT_EQ(scratch[511], 0);

    Launcher &l = **launcher;
    EXPECT_EQ(l.launch(nullptr).message(), "region 'u' (input, 64 bytes) is not bound");
    char buffers[4][64];
    ASSERT_TRUE(l.bind("u", buffers[0]).ok());
    ASSERT_TRUE(l.bind("w", buffers[1]).ok());
    ASSERT_TRUE(l.bind("y", buffers[2]).ok());
    EXPECT_EQ(l.launch(nullptr).message(), "region 'mono_epoch' (epoch, 1080 bytes) is not bound");
    ASSERT_TRUE(l.bind("mono_epoch", buffers[3]).ok());
    EXPECT_FALSE(l.bind("v", buffers[0]).ok());
    EXPECT_FALSE(l.bind("mono_scratch", buffers[0]).ok());
    EXPECT_FALSE(l.bind("u", nullptr).ok());
    ASSERT_TRUE(l.launch(nullptr).ok());
    EXPECT_EQ(fake.get<int (*)()>("fake_hip_launches")(), 1);
    EXPECT_EQ(fake.get<unsigned (*)()>("fake_hip_grid")(), 4u);
    EXPECT_EQ(fake.get<unsigned (*)()>("fake_hip_block")(), 256u);
    const std::vector<unsigned char> arguments = lastKernelArguments(fake, "fake_hip_kernarg", 40);
    EXPECT_EQ(pointerAt(arguments, 0), buffers[0]);
    EXPECT_EQ(pointerAt(arguments, 2), buffers[2]);
    EXPECT_EQ(pointerAt(arguments, 3), scratch);
    EXPECT_EQ(pointerAt(arguments, 4), buffers[3]);
    EXPECT_EQ(fake.get<int (*)()>("fake_hip_modules")(), 1);
  }
  // Destroying the launcher frees its scratch and unloads its module.
  EXPECT_EQ(fake.get<size_t (*)()>("fake_hip_allocated")(), 0u);
  EXPECT_EQ(fake.get<int (*)()>("fake_hip_modules")(), 0);
}

TEST(Launcher, SetsTheWaitBudgetAndNamesAWaitThatGaveUp) {
  // The stand-in's device memory is host memory: the test writes the
  // epoch buffer's wait-fault record as a kernel whose poll gave up would.
  Fake fake;
  ASSERT_NE(fake.handle, nullptr) << dlerror();
  configure(fake, "fake_hip_configure", 4, 1, 1);
  auto hip = HipRuntime::load({MONODC_FAKE_HIP_PATH});
  ASSERT_TRUE(hip.ok()) << hip.message();
  Prepared p = prepare(false, 0, "wait 1 only peer.flags 1\n");
  auto launcher = Launcher::create(*hip, p.codeObject, p.interface, p.layout, 0);
  ASSERT_TRUE(launcher.ok()) << launcher.message();
  Launcher &l = **launcher;
  EXPECT_EQ(l.checkWaits(nullptr).message(),
            "checking the waits needs the epoch buffer (mono_epoch) bound first");
  EXPECT_EQ(l.setWaitBudget(1).message(),
            "setting the wait budget needs the epoch buffer (mono_epoch) bound first");

  std::vector<uint32_t> epoch(size_t(p.interface.epochWords), 0u);
  ASSERT_TRUE(l.bind(kEpochArgument, epoch.data()).ok());
  EXPECT_TRUE(l.checkWaits(nullptr).ok()) << "no poll gave up";
  uint32_t *record = epoch.data() + mono_epoch_fault_word(p.interface.grid);
  ASSERT_TRUE(l.setWaitBudget(250000).ok());
  EXPECT_EQ(record[MONO_FAULT_BUDGET_US], 250000u);

  record[MONO_FAULT_STATE] = 1;
  record[MONO_FAULT_RANK] = 1;
  record[MONO_FAULT_CTA] = 3;
  record[MONO_FAULT_SITE] = 1;
  record[MONO_FAULT_FLAG] = 7;
  record[MONO_FAULT_EXPECTED] = 9;
  record[MONO_FAULT_SEEN] = 7;
  EXPECT_EQ(l.checkWaits(nullptr).message(),
            "kernel mono_k: rank 1 CTA 3 gave up waiting after its budget of 250 ms: stage "
            "'only' (wait site 1) polled rank 1's 'peer.flags' flag 7 for the step's tag 9 and "
            "saw tag 7; the launch's outputs are not valid, and the step sequence's buffers "
            "(epoch, peer, scratch) must be zeroed before its next step");
  record[MONO_FAULT_SITE] = 0;
  record[MONO_FAULT_BUDGET_US] = 0;
  EXPECT_NE(l.checkWaits(nullptr).message().find(
                "after its budget of 5000 ms: stage 'only' (wait site 0) polled 'only.flags' flag 7"),
            std::string::npos)
      << l.checkWaits(nullptr).message();
  record[MONO_FAULT_SITE] = 9;
  EXPECT_NE(l.checkWaits(nullptr).message().find("wait site 9 (not in the manifest) flag 7"),
            std::string::npos);

  // After a fault the scratch buffer (flags included) is zeroed again.
  auto *scratch = static_cast<unsigned char *>(fake.get<void *(*)()>("fake_hip_last_allocation")());
  std::memset(scratch, 0x5A, 512);
  ASSERT_TRUE(l.resetScratch().ok());
  EXPECT_EQ(scratch[0], 0);
  EXPECT_EQ(scratch[511], 0);
}

TEST(Launcher, RefusesADeviceThatCannotHoldTheWholeGrid) {
  Fake fake;
  ASSERT_NE(fake.handle, nullptr);
  configure(fake, "fake_hip_configure", 3, 1, 1); // the grid is 4
  auto hip = HipRuntime::load({MONODC_FAKE_HIP_PATH});
  ASSERT_TRUE(hip.ok());
  Prepared p = prepare();
  auto launcher = Launcher::create(*hip, p.codeObject, p.interface, p.layout, 0);
  ASSERT_FALSE(launcher.ok());
  EXPECT_EQ(launcher.message(), "device 0 holds 3 resident CTAs of kernel mono_k (3 compute "
                                "units x 1), fewer than its persistent grid of 4");
  configure(fake, "fake_hip_configure", 4, 1, 0);
  EXPECT_NE(Launcher::create(*hip, p.codeObject, p.interface, p.layout, 0)
                .message()
                .find("found no usable GPU: hipInit failed in " MONODC_FAKE_HIP_PATH
                      ": hipErrorNoDevice (100)"),
            std::string::npos);
}

TEST(Launcher, RanksSharingADeviceMustBeResidentTogether) {
  Fake fake;
  ASSERT_NE(fake.handle, nullptr);
  configure(fake, "fake_hip_configure", 4, 2, 1); // 8 resident; the grid is 4
  auto hip = HipRuntime::load({MONODC_FAKE_HIP_PATH});
  ASSERT_TRUE(hip.ok());
  Prepared p = prepare();
  EXPECT_TRUE(Launcher::create(*hip, p.codeObject, p.interface, p.layout, 0, 2).ok());
  auto three = Launcher::create(*hip, p.codeObject, p.interface, p.layout, 0, 3);
  ASSERT_FALSE(three.ok());
  EXPECT_EQ(three.message(), "device 0 holds 8 resident CTAs of kernel mono_k (4 compute "
                             "units x 2), fewer than 3 ranks' persistent grids of 4 (12)");
  EXPECT_EQ(Launcher::create(*hip, p.codeObject, p.interface, p.layout, 0, 0).message(),
            "a launcher needs at least 1 rank on its device, got 0");
  EXPECT_EQ(fake.get<size_t (*)()>("fake_hip_allocated")(), 0u);
  EXPECT_EQ(fake.get<int (*)()>("fake_hip_modules")(), 0);
}

TEST(HipRuntime, RefusesDynamicSharedMemory) {
  Fake fake;
  ASSERT_NE(fake.handle, nullptr);
  configure(fake, "fake_hip_configure", 4, 1, 1);
  auto hip = HipRuntime::load({MONODC_FAKE_HIP_PATH});
  ASSERT_TRUE(hip.ok());
  Prepared p = prepare(false, 1024);
  EXPECT_EQ(Launcher::create(*hip, p.codeObject, p.interface, p.layout, 0).message(),
            "the HIP launcher passes no dynamic shared memory (the launch asks for 1024 bytes)");
}

TEST(CudaDriver, AMissingLibraryIsAClearError) {
  auto cuda = CudaDriver::load({"libmonodc-no-such-cuda.so", "/nowhere/libcuda.so.1"});
  ASSERT_FALSE(cuda.ok());
  EXPECT_NE(cuda.message().find("cannot load the CUDA driver (tried libmonodc-no-such-cuda.so, "
                                "/nowhere/libcuda.so.1)"),
            std::string::npos)
      << cuda.message();
}

// An sm_90 launch past CUDA's 48 KB of static shared memory (K2 at rows 48:
// 80352 bytes) through the driver: the kernel is let take them, occupancy is
// asked with them, the launch passes them; launching makes the context
// current and the launch call, nothing that waits (stream capture).
TEST(Launcher, OverTheCudaDriver) {
  Fake fake(MONODC_FAKE_CUDA_PATH);
  ASSERT_NE(fake.handle, nullptr) << dlerror();
  configure(fake, "fake_cuda_configure", 4, 1, 1);
  {
    auto cuda = CudaDriver::load({MONODC_FAKE_CUDA_PATH});
    ASSERT_TRUE(cuda.ok()) << cuda.message();
    Prepared p = prepare(true, 80352);
    auto launcher = Launcher::create(*cuda, p.codeObject, p.interface, p.layout, 0);
    ASSERT_TRUE(launcher.ok()) << launcher.message();
    EXPECT_STREQ(fake.get<const char *(*)()>("fake_cuda_kernel")(), "mono_k");
    EXPECT_EQ(fake.get<int (*)()>("fake_cuda_dynamic_attribute")(), 80352);
    EXPECT_EQ(fake.get<size_t (*)()>("fake_cuda_occupancy_shared")(), 80352u);
    EXPECT_EQ(fake.get<int (*)()>("fake_cuda_retained")(), 1);
    EXPECT_EQ(fake.get<size_t (*)()>("fake_cuda_allocated")(), 512u);
    EXPECT_EQ(fake.get<size_t (*)()>("fake_cuda_zeroed")(), 512u);
    auto *scratch =
        static_cast<unsigned char *>(fake.get<void *(*)()>("fake_cuda_last_allocation")());
    EXPECT_EQ(scratch[0], 0);
    EXPECT_EQ(scratch[511], 0);

    Launcher &l = **launcher;
    char buffers[4][64];
    ASSERT_TRUE(l.bind("u", buffers[0]).ok());
    ASSERT_TRUE(l.bind("w", buffers[1]).ok());
    ASSERT_TRUE(l.bind("y", buffers[2]).ok());
    ASSERT_TRUE(l.bind("mono_epoch", buffers[3]).ok());
    const int before = fake.get<int (*)()>("fake_cuda_calls")();
    ASSERT_TRUE(l.launch(nullptr).ok());
    EXPECT_EQ(fake.get<int (*)()>("fake_cuda_calls")() - before, 2);  // cuCtxSetCurrent, cuLaunchKernel
    EXPECT_EQ(fake.get<int (*)()>("fake_cuda_launches")(), 1);
    EXPECT_EQ(fake.get<unsigned (*)()>("fake_cuda_grid")(), 4u);
    EXPECT_EQ(fake.get<unsigned (*)()>("fake_cuda_block")(), 256u);
    EXPECT_EQ(fake.get<unsigned (*)()>("fake_cuda_shared")(), 80352u);
    const std::vector<unsigned char> arguments = lastKernelArguments(fake, "fake_cuda_kernarg", 40);
    EXPECT_EQ(pointerAt(arguments, 0), buffers[0]);
    EXPECT_EQ(pointerAt(arguments, 1), buffers[1]);
    EXPECT_EQ(pointerAt(arguments, 2), buffers[2]);
    EXPECT_EQ(pointerAt(arguments, 3), scratch);
    EXPECT_EQ(pointerAt(arguments, 4), buffers[3]);
    launcher->reset();
    // The launcher frees its scratch and unloads its module; the driver
    // object, its primary context.
    EXPECT_EQ(fake.get<size_t (*)()>("fake_cuda_allocated")(), 0u);
    EXPECT_EQ(fake.get<int (*)()>("fake_cuda_modules")(), 0);
  }
  EXPECT_EQ(fake.get<int (*)()>("fake_cuda_retained")(), 0);
}

// A launch with peer memory (TP 2: K2's all-reduce): the caller binds the
// device array of the ranks' peer buffers and the launch's rank, which go
// after the epoch as the kernel takes them (a pointer, then 4 bytes).
TEST(Launcher, TakesThePeerBuffersAndTheRank) {
  Fake fake(MONODC_FAKE_CUDA_PATH);
  ASSERT_NE(fake.handle, nullptr) << dlerror();
  configure(fake, "fake_cuda_configure", 4, 1, 1);
  auto cuda = CudaDriver::load({MONODC_FAKE_CUDA_PATH});
  ASSERT_TRUE(cuda.ok()) << cuda.message();
  Prepared p = prepare(true, 0, "ranks 2\npeer_slot_bytes 96\n");
  EXPECT_EQ(p.interface.peerBufferBytes(), 2 * 2 * 96);
  auto launcher = Launcher::create(*cuda, p.codeObject, p.interface, p.layout, 0);
  ASSERT_TRUE(launcher.ok()) << launcher.message();
  Launcher &l = **launcher;
  char buffers[5][64];
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(l.bind(kArgs[i], buffers[i]).ok());
  ASSERT_TRUE(l.bind("mono_epoch", buffers[3]).ok());
  EXPECT_EQ(l.launch(nullptr).message(), "region 'mono_peers' (peers, 16 bytes) is not bound");
  ASSERT_TRUE(l.bind("mono_peers", buffers[4]).ok());
  EXPECT_EQ(l.launch(nullptr).message(), "the rank (mono_rank) is not bound");
  EXPECT_EQ(l.bind("mono_rank", buffers[0]).message(),
            "the rank (mono_rank) is a number, not memory: bind it with bindRank");
  EXPECT_EQ(l.bindRank(2).message(), "rank 2 is not one of kernel mono_k's ranks 0..1");
  EXPECT_FALSE(l.bindRank(-1).ok());
  ASSERT_TRUE(l.bindRank(1).ok());
  ASSERT_TRUE(l.launch(nullptr).ok());
  const std::vector<unsigned char> arguments = lastKernelArguments(fake, "fake_cuda_kernarg", 52);
  EXPECT_EQ(pointerAt(arguments, 4), buffers[3]);
  EXPECT_EQ(pointerAt(arguments, 5), buffers[4]);
  EXPECT_EQ(argumentAt<uint32_t>(arguments, 48), 1u);

  // A launch without peer memory takes no rank.
  Prepared single = prepare(true);
  auto plain = Launcher::create(*cuda, single.codeObject, single.interface, single.layout, 0);
  ASSERT_TRUE(plain.ok()) << plain.message();
  EXPECT_EQ((*plain)->bindRank(0).message(), "kernel mono_k uses no peer memory and takes no rank");
}

TEST(Launcher, OverTheCudaDriverRefusesWhatCannotRun) {
  Fake fake(MONODC_FAKE_CUDA_PATH);
  ASSERT_NE(fake.handle, nullptr);
  auto cuda = CudaDriver::load({MONODC_FAKE_CUDA_PATH});
  ASSERT_TRUE(cuda.ok());
  configure(fake, "fake_cuda_configure", 3, 1, 1); // the grid is 4
  Prepared p = prepare(true);
  EXPECT_EQ(Launcher::create(*cuda, p.codeObject, p.interface, p.layout, 0).message(),
            "device 0 holds 3 resident CTAs of kernel mono_k (3 compute units x 1), fewer than "
            "its persistent grid of 4");
  configure(fake, "fake_cuda_configure", 4, 1, 1);
  Prepared tooMuch = prepare(true, 300000);
  EXPECT_EQ(Launcher::create(*cuda, tooMuch.codeObject, tooMuch.interface, tooMuch.layout, 0)
                .message(),
            "cuFuncSetAttribute(max dynamic shared memory) failed in " MONODC_FAKE_CUDA_PATH
            ": CUDA_ERROR_INVALID_VALUE (1) (300000 bytes)");
  p.codeObject.assign({'/', '/', ' ', 'p', 't', 'x'});
  EXPECT_EQ(Launcher::create(*cuda, p.codeObject, p.interface, p.layout, 0).message(),
            "cuModuleLoadData failed in " MONODC_FAKE_CUDA_PATH ": CUDA_ERROR_INVALID_IMAGE (200)");
  configure(fake, "fake_cuda_configure", 4, 1, 0);
  EXPECT_EQ(Launcher::create(*cuda, p.codeObject, p.interface, p.layout, 0).message(),
            "the CUDA driver found no usable GPU: cuInit failed in " MONODC_FAKE_CUDA_PATH
            ": CUDA_ERROR_NO_DEVICE (100)");
}

} // namespace
