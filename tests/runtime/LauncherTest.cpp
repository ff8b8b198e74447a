// The launcher: with no HIP runtime or no GPU it is a clear error; with a
// stand-in runtime (FakeHip.c) its loading, occupancy check, scratch buffer
// and kernel arguments are checked without a GPU.
#include "monodc/runtime/Launcher.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <dlfcn.h>

using namespace monodc::runtime;
using namespace monodc::testing;

namespace {

const std::vector<std::string> kArgs = {"u", "w", "y"};

struct Fake {
  void *handle = dlopen(MONODC_FAKE_HIP_PATH, RTLD_NOW | RTLD_LOCAL);
  template <typename F> F get(const char *name) { return reinterpret_cast<F>(dlsym(handle, name)); }
};

struct Prepared {
  std::vector<char> codeObject;
  LaunchInterface interface;
  ArgumentLayout layout;
};

Prepared prepare() {
  std::string elf = makeAmdgpuElf("amdgcn-amd-amdhsa--gfx950", {makeKernelFor("mono_k", kArgs)});
  Prepared p;
  p.codeObject.assign(elf.begin(), elf.end());
  p.interface = *LaunchInterface::parse(makeManifest("mono_k", kArgs));
  auto info = readCodeObject(elf);
  p.layout = *layoutArguments(p.interface, &info->kernels[0]);
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
  fake.get<void (*)(int, int, int)>("fake_hip_configure")(4, 1, 1);
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
    EXPECT_EQ(l.launch(nullptr).message(), "region 'mono_epoch' (epoch, 40 bytes) is not bound");
    ASSERT_TRUE(l.bind("mono_epoch", buffers[3]).ok());
    EXPECT_FALSE(l.bind("v", buffers[0]).ok());
    EXPECT_FALSE(l.bind("mono_scratch", buffers[0]).ok());
    EXPECT_FALSE(l.bind("u", nullptr).ok());
    ASSERT_TRUE(l.launch(nullptr).ok());
    EXPECT_EQ(fake.get<int (*)()>("fake_hip_launches")(), 1);
    EXPECT_EQ(fake.get<unsigned (*)()>("fake_hip_grid")(), 4u);
    EXPECT_EQ(fake.get<unsigned (*)()>("fake_hip_block")(), 256u);
    size_t size = 0;
    const unsigned char *kernarg =
        fake.get<const unsigned char *(*)(size_t *)>("fake_hip_kernarg")(&size);
    ASSERT_EQ(size, 40u);
    void *pointers[5];
    std::memcpy(pointers, kernarg, 40);
    EXPECT_EQ(pointers[0], buffers[0]);
    EXPECT_EQ(pointers[2], buffers[2]);
    EXPECT_EQ(pointers[3], scratch);
    EXPECT_EQ(pointers[4], buffers[3]);
    EXPECT_EQ(fake.get<int (*)()>("fake_hip_modules")(), 1);
  }
  // Destroying the launcher frees its scratch and unloads its module.
  EXPECT_EQ(fake.get<size_t (*)()>("fake_hip_allocated")(), 0u);
  EXPECT_EQ(fake.get<int (*)()>("fake_hip_modules")(), 0);
}

TEST(Launcher, RefusesADeviceThatCannotHoldTheWholeGrid) {
  Fake fake;
  ASSERT_NE(fake.handle, nullptr);
  fake.get<void (*)(int, int, int)>("fake_hip_configure")(3, 1, 1); // the grid is 4
  auto hip = HipRuntime::load({MONODC_FAKE_HIP_PATH});
  ASSERT_TRUE(hip.ok());
  Prepared p = prepare();
  auto launcher = Launcher::create(*hip, p.codeObject, p.interface, p.layout, 0);
  ASSERT_FALSE(launcher.ok());
  EXPECT_EQ(launcher.message(), "device 0 holds 3 resident CTAs of kernel mono_k (3 compute "
                                "units x 1), fewer than its persistent grid of 4");
  fake.get<void (*)(int, int, int)>("fake_hip_configure")(4, 1, 0);
  EXPECT_NE(Launcher::create(*hip, p.codeObject, p.interface, p.layout, 0)
                .message()
                .find("found no usable GPU: hipInit failed in " MONODC_FAKE_HIP_PATH
                      ": hipErrorNoDevice (100)"),
            std::string::npos);
}

} // namespace
