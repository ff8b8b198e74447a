// Full JIT: requests become whole keys, keys become checked code objects, and
// a session builds once, then hits in memory and on disk.
#include "monodc/jit/Compiler.h"
#include "monodc/runtime/BuildId.h"
#include "monodc/runtime/CodeObject.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

using namespace monodc;
using namespace monodc::runtime;
using namespace monodc::testing;

namespace {

KernelRequest tinyRequest() {
  KernelRequest request;
  request.model = "tiny";
  return request;
}

/// The compiler, counting its builds.
class CountingCompiler : public KernelBuilder {
public:
  Result<BuildKey> resolve(const KernelRequest &request) override {
    return compiler.resolve(request);
  }
  Result<CacheEntry> build(const BuildKey &key) override {
    ++builds;
    return compiler.build(key);
  }
  Compiler compiler;
  int builds = 0;
};

TEST(Compiler, ResolvesARequestIntoAWholeKey) {
  Compiler compiler;
  auto key = compiler.resolve(tinyRequest());
  ASSERT_TRUE(key.ok()) << key.message();
  EXPECT_EQ(key->model, "tiny");
  EXPECT_EQ(key->configDigest.size(), 16u);
  EXPECT_EQ(key->grid, 256); // gfx950's compute units
  EXPECT_EQ(key->compilerId, compilerBuildId());
  EXPECT_EQ(key->backendVersion.rfind("clang+lld 22", 0), 0u) << key->backendVersion;
  auto dsv41 = compiler.resolve(KernelRequest());
  ASSERT_TRUE(dsv41.ok());
  EXPECT_NE(dsv41->configDigest, key->configDigest);

  auto refuse = [&](KernelRequest request, const std::string &why) {
    auto result = compiler.resolve(request);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.message().find(why), std::string::npos) << result.message();
  };
  KernelRequest r = tinyRequest();
  r.model = "llama";
  refuse(r, "unknown model config 'llama'");
  r = tinyRequest();
  r.ratio = 3;
  refuse(r, "compress ratio must be 0, 1 or 2");
  r = tinyRequest();
  r.backend = "gcc";
  refuse(r, "unknown backend 'gcc'");
  r = tinyRequest();
  r.arch = "sm_90";
  refuse(r, "the in-process clang backend cannot build for arch 'sm_90'");
  r = tinyRequest();
  r.rows = 49;
  refuse(r, "rows must be in 1..48");
}

TEST(Compiler, BuildsAKernelThatAgreesWithItsManifest) {
  Compiler compiler;
  auto key = compiler.resolve(tinyRequest());
  ASSERT_TRUE(key.ok());
  auto entry = compiler.build(*key);
  ASSERT_TRUE(entry.ok()) << entry.message();
  EXPECT_EQ(entry->keyText, key->text());
  auto kernel = Kernel::fromEntry(*key, std::make_shared<const CacheEntry>(std::move(*entry)));
  ASSERT_TRUE(kernel.ok()) << kernel.message();
  EXPECT_EQ(kernel->symbol(), "mono_attention_front");
  EXPECT_EQ(kernel->interface.grid, 256);
  EXPECT_EQ(kernel->interface.rows, 6);
  ASSERT_TRUE(kernel->resources.has_value());
  EXPECT_EQ(kernel->resources->scratchBytes, 0);
  EXPECT_EQ(kernel->resources->wavefrontSize, 64);
  // Every argument of the manifest, then scratch and epoch, at the offsets
  // the code object's metadata gives.
  // A region sized at launch (the KV cache, the RoPE table) is followed by
  // its rows.
  const ArgumentLayout &layout = kernel->arguments;
  ASSERT_EQ(layout.slots.size(), kernel->interface.arguments.size() + 4);
  EXPECT_TRUE(kernel->interface.argument("cos_sin")->rowsAtLaunch);
  const ArgumentSlot *cache = layout.slot("kv_cache"), *pages = layout.slot("kv_cache.rows");
  ASSERT_TRUE(cache && pages);
  EXPECT_TRUE(kernel->interface.argument("kv_cache")->rowsAtLaunch);
  EXPECT_EQ(pages->kind, "rows");
  EXPECT_EQ(pages->offset, cache->offset + 8);
  EXPECT_EQ(pages->size, 8);
  EXPECT_EQ(layout.kernargBytes, kernel->resources->kernargBytes);
  EXPECT_EQ(layout.slots.back().name, "mono_epoch");
  EXPECT_EQ(layout.slot("mono_scratch")->bytes, kernel->interface.scratchBytes);
  EXPECT_GT(kernel->interface.scratchBytes, 0);
}

TEST(Compiler, RefusesAKernelThatNeedsScratchAtBuildTime) {
  Compiler compiler;
  auto key = compiler.resolve(tinyRequest());
  ASSERT_TRUE(key.ok());
  Compiler::Emitted emitted;
  // A private array indexed by a loaded value lives in scratch memory.
  emitted.source = R"(extern "C" __attribute__((global)) void mono_spill(float *p, int *i) {
  float local[512];
  for (int k = 0; k < 512; ++k) local[k] = p[k];
  p[0] = local[i[0]];
})";
  emitted.sourceName = "spill.hip";
  emitted.manifest = "kernel mono_spill\ngrid 1\nblock 64\nrows 1\nscratch_bytes 0\n"
                     "epoch_words 267\n";  // grid 1's epoch buffer
  emitted.interface = *LaunchInterface::parse(emitted.manifest);
  auto entry = compiler.compile(*key, emitted);
  ASSERT_FALSE(entry.ok());
  EXPECT_NE(entry.message().find("kernel mono_spill needs scratch memory ("), std::string::npos)
      << entry.message();
  EXPECT_NE(entry.message().find("a persistent launch that needs scratch is refused"),
            std::string::npos);
}

TEST(JitSession, BuildsOnceThenHitsInMemoryAndOnDisk) {
  TempDir dir;
  auto compiler = std::make_shared<CountingCompiler>();
  SessionOptions options;
  options.cacheDirectory = dir.path();
  options.builder = compiler;
  const Kernel *first = nullptr;
  {
    Session session(options);
    auto kernel = session.kernel(tinyRequest());
    ASSERT_TRUE(kernel.ok()) << kernel.message();
    first = kernel->get();
    auto again = session.kernel(tinyRequest());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->get(), first);
    EXPECT_EQ(compiler->builds, 1);
  }
  Session fresh(options);
  auto fromDisk = fresh.kernel(tinyRequest());
  ASSERT_TRUE(fromDisk.ok()) << fromDisk.message();
  EXPECT_EQ(compiler->builds, 1); // a disk hit
  // A damaged entry is rebuilt, in a session that has not seen it yet.
  std::string path = dir.file((*fromDisk)->key.fileName());
  std::string bytes = readBytes(path);
  bytes[bytes.size() / 2] ^= 1;
  writeBytes(path, bytes);
  Session third(options);
  auto rebuilt = third.kernel(tinyRequest());
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.message();
  EXPECT_EQ(compiler->builds, 2);
  EXPECT_EQ((*rebuilt)->codeObject(), (*fromDisk)->codeObject());
}

TEST(RtcBackends, HiprtcBuildsTheGenericPathForGfx90a) {
  auto hiprtc = loadHiprtcBackend();
  if (!hiprtc.ok())
    FAIL() << "scripts/setup.sh installs ROCm 5.2's hiprtc: " << hiprtc.message();
  TempDir dir;
  SessionOptions options;
  options.cacheDirectory = dir.path();
  auto session = openJitSession(options);
  KernelRequest request = tinyRequest();
  request.arch = "gfx90a";
  request.backend = "hiprtc";
  auto kernel = session->kernel(request);
  ASSERT_TRUE(kernel.ok()) << kernel.message();
  EXPECT_EQ((*kernel)->key.backendVersion.rfind("hiprtc ", 0), 0u);
  auto info = readCodeObject(
      std::string_view((*kernel)->codeObject().data(), (*kernel)->codeObject().size()));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->target.rfind("amdgcn-amd-amdhsa--gfx90a", 0), 0u) << info->target;
  EXPECT_EQ((*kernel)->resources->scratchBytes, 0);
  EXPECT_EQ((*kernel)->arguments.slots.size(), (*kernel)->interface.arguments.size() + 4);

  request.arch = "gfx950";
  auto refused = session->kernel(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("cannot build for arch 'gfx950'"), std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("hiprtc (lib"), std::string::npos) << refused.message();
}

TEST(RtcBackends, AMissingNvrtcIsAnErrorNamingItAndTheArch) {
  setenv("MONODC_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so", 1);
  Compiler compiler;
  KernelRequest request = tinyRequest();
  request.arch = "sm_90";
  request.backend = "nvrtc";
  auto key = compiler.resolve(request);
  unsetenv("MONODC_NVRTC_LIBRARY");
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.message(), "backend nvrtc for arch sm_90: the nvrtc backend is unavailable: "
                           "cannot load nvrtc (tried /nonexistent/libnvrtc.so): "
                           "/nonexistent/libnvrtc.so: cannot open shared object file: No such "
                           "file or directory");
}

TEST(RtcBackends, NvrtcBuildsTheSm90SourceWhereInstalled) {
  if (!loadNvrtcBackend().ok())
    GTEST_SKIP() << "no nvrtc on this machine";
  Compiler compiler;
  KernelRequest request = tinyRequest();
  request.arch = "sm_90";
  request.backend = "nvrtc";
  auto key = compiler.resolve(request);
  ASSERT_TRUE(key.ok()) << key.message();
  EXPECT_EQ(key->grid, 132); // H200 multiprocessors
  EXPECT_EQ(key->backendVersion.rfind("nvrtc ", 0), 0u);
  auto entry = compiler.build(*key);
  ASSERT_TRUE(entry.ok()) << entry.message();
  auto kernel = Kernel::fromEntry(*key, std::make_shared<const CacheEntry>(std::move(*entry)));
  ASSERT_TRUE(kernel.ok()) << kernel.message();
  EXPECT_EQ(std::string(kernel->codeObject().data() + 1, 3), "ELF"); // a cubin
  EXPECT_FALSE(kernel->resources.has_value());
  // Without AMD metadata the pointers are packed 8 bytes apart.
  EXPECT_EQ(kernel->arguments.kernargBytes, int64_t(8 * kernel->arguments.slots.size()));
}

} // namespace
