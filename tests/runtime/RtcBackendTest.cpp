// hiprtc and nvrtc, loaded at run time. hiprtc runs for real on gfx90a with
// Debian's ROCm 5.2 where installed (scripts/setup.sh installs it); its comgr
// cannot build gfx950, which must be an error, not a crash or a hang.
#include "monodc/runtime/CodeObject.h"
#include "monodc/runtime/HiprtcCompiler.h"
#include "monodc/runtime/IsolatedRun.h"
#include "monodc/runtime/NvrtcCompiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <unistd.h>

using namespace monodc::runtime;

namespace {

const char *kKernel = R"(extern "C" __global__ void scale(float *x, float s) {
  x[blockIdx.x * blockDim.x + threadIdx.x] *= s;
})";

/// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name, saved;
  bool had;
  ScopedEnv(const char *n, const char *value) : name(n), had(std::getenv(n) != nullptr) {
    if (had)
      saved = std::getenv(n);
    setenv(n, value, 1);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name.c_str(), saved.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

std::shared_ptr<HiprtcCompiler> hiprtcOrSkip() {
  auto hiprtc = HiprtcCompiler::load();
  if (!hiprtc.ok()) {
#if MONODC_REQUIRE_HIPRTC
    ADD_FAILURE() << "hiprtc is required here (scripts/setup.sh installs it): "
                  << hiprtc.message();
#endif
    return nullptr;
  }
  return *hiprtc;
}

TEST(Hiprtc, BuildsAGfx90aCodeObject) {
  auto hiprtc = hiprtcOrSkip();
  if (!hiprtc)
    GTEST_SKIP() << "no hiprtc on this machine";
  EXPECT_NE(hiprtc->version().find("hiprtc "), std::string::npos);
  HiprtcCompiler::Options options;
  options.arch = "gfx90a";
  options.sourceName = "scale.hip";
  auto code = hiprtc->compile(kKernel, options);
  ASSERT_TRUE(code.ok()) << code.message();
  auto info = readCodeObject(std::string_view(code->data(), code->size()));
  ASSERT_TRUE(info.ok()) << info.message();
  EXPECT_EQ(info->target.rfind("amdgcn-amd-amdhsa--gfx90a", 0), 0u) << info->target;
  const KernelInfo *kernel = info->kernel("scale");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->arguments.size() >= 2, true);
  EXPECT_EQ(kernel->arguments[0].valueKind, "global_buffer");
  EXPECT_EQ(kernel->arguments[1].valueKind, "by_value");
  EXPECT_EQ(kernel->scratchBytes, 0);
}

TEST(Hiprtc, Gfx950IsAnErrorNamingTheLibraryAndTheArch) {
  auto hiprtc = hiprtcOrSkip();
  if (!hiprtc)
    GTEST_SKIP() << "no hiprtc on this machine";
  HiprtcCompiler::Options options;
  options.arch = "gfx950";
  auto start = std::chrono::steady_clock::now();
  auto code = hiprtc->compile(kKernel, options);
  ASSERT_FALSE(code.ok());
  EXPECT_NE(code.message().find("hiprtc (" + hiprtc->libraryName()), std::string::npos)
      << code.message();
  EXPECT_NE(code.message().find("cannot build for arch 'gfx950'"), std::string::npos)
      << code.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(Hiprtc, ACrashInsideHiprtcIsAnError) {
  // Without comgr's processor list the arch check cannot refuse gfx950, so
  // ROCm 5.2's hiprtc gets the request and aborts: in the child process.
  ScopedEnv noComgr("MONODC_COMGR_LIBRARY", "/nonexistent/libamd_comgr.so");
  auto hiprtc = hiprtcOrSkip();
  if (!hiprtc)
    GTEST_SKIP() << "no hiprtc on this machine";
  ASSERT_TRUE(hiprtc->processors().empty());
  HiprtcCompiler::Options options;
  options.arch = "gfx950";
  options.timeoutSeconds = 60;
  auto code = hiprtc->compile(kKernel, options);
  if (code.ok()) // a hiprtc that can build gfx950 has nothing to crash on
    GTEST_SKIP() << "this hiprtc builds gfx950";
  EXPECT_NE(code.message().find("hiprtc (" + hiprtc->libraryName() +
                                ") compiling launch.hip for gfx950: crashed (signal"),
            std::string::npos)
      << code.message();
}

TEST(Hiprtc, CompileErrorsCarryTheProgramLog) {
  auto hiprtc = hiprtcOrSkip();
  if (!hiprtc)
    GTEST_SKIP() << "no hiprtc on this machine";
  HiprtcCompiler::Options options;
  options.sourceName = "broken.hip";
  auto code = hiprtc->compile("extern \"C\" __global__ void k(float *p) { p[0] = nope; }",
                              options);
  ASSERT_FALSE(code.ok());
  EXPECT_NE(code.message().find("failed to compile broken.hip"), std::string::npos)
      << code.message();
  EXPECT_NE(code.message().find("nope"), std::string::npos) << code.message();
}

TEST(Hiprtc, AMissingLibraryIsAClearError) {
  ScopedEnv missing("MONODC_HIPRTC_LIBRARY", "/nonexistent/libhiprtc.so");
  auto hiprtc = HiprtcCompiler::load();
  ASSERT_FALSE(hiprtc.ok());
  EXPECT_NE(hiprtc.message().find("cannot load hiprtc (tried /nonexistent/libhiprtc.so)"),
            std::string::npos)
      << hiprtc.message();
}

TEST(Nvrtc, AMissingLibraryIsAClearError) {
  ScopedEnv missing("MONODC_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so");
  auto nvrtc = NvrtcCompiler::load();
  ASSERT_FALSE(nvrtc.ok());
  EXPECT_NE(nvrtc.message().find("cannot load nvrtc (tried /nonexistent/libnvrtc.so)"),
            std::string::npos)
      << nvrtc.message();
}

TEST(Nvrtc, BuildsAnSm90CubinWhereInstalled) {
  auto nvrtc = NvrtcCompiler::load();
  if (!nvrtc.ok())
    GTEST_SKIP() << "no nvrtc on this machine: " << nvrtc.message();
  EXPECT_FALSE((*nvrtc)->checkArch("gfx950").ok());
  NvrtcCompiler::Options options;
  options.arch = "sm_90";
  auto cubin = (*nvrtc)->compile(kKernel, options);
  ASSERT_TRUE(cubin.ok()) << cubin.message();
  EXPECT_EQ(std::string(cubin->data() + 1, 3), "ELF");
}

TEST(IsolatedRun, ReturnsValuesErrorsCrashesAndTimeouts) {
  auto value = runIsolated([]() -> Result<std::string> { return std::string(200000, 'v'); }, 10,
                           "work");
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(value->size(), 200000u);
  EXPECT_EQ(runIsolated([]() -> Result<std::string> { return makeError("no"); }, 10, "work")
                .message(),
            "no");
  EXPECT_NE(runIsolated(
                []() -> Result<std::string> {
                  std::raise(SIGSEGV);
                  return std::string();
                },
                10, "work")
                .message()
                .find("work: crashed (signal 11"),
            std::string::npos);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(runIsolated(
                []() -> Result<std::string> {
                  ::sleep(30);
                  return std::string();
                },
                1, "work")
                .message(),
            "work: did not finish within 1 s and was stopped");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

} // namespace
