// The compiler's K1, K2 and FFN launches (tiny config, gfx950) form layer
// steps as their manifests declare them (`from` and `result` lines): K1 then
// K2 with K2's query, cache and attention-seam streams taken from K1's
// outputs, and the FFN launch alone. Run over the HIP stand-in (FakeHip.c),
// which logs each launch's kernel and arguments: nothing executes, the
// binding is what is checked.
#include "monodc/jit/Compiler.h"
#include "monodc/runtime/HipRuntime.h"
#include "monodc/runtime/LayerStep.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <list>

using namespace monodc;
using namespace monodc::runtime;

namespace {

/// The HIP stand-in's log, 256 compute units of one CTA (gfx950's default
/// grid fits); pointers by the kernel's argument name.
struct FakeHip : monodc::testing::FakeHipLog {
  FakeHip() : FakeHipLog(MONODC_FAKE_HIP_PATH, 256, 1) {}
  void *pointer(int launch, const Kernel &kernel, const std::string &name) const {
    const ArgumentSlot *slot = kernel.arguments.slot(name);
    return slot ? pointerAt(launch, slot->offset) : nullptr;
  }
  /// An 8-byte value argument (a region's rows given at launch).
  int64_t value(int launch, const Kernel &kernel, const std::string &name) const {
    return reinterpret_cast<intptr_t>(pointer(launch, kernel, name));
  }
};

Kernel build(Compiler &compiler, const std::string &launch, int64_t ratio) {
  KernelRequest request;
  request.model = "tiny";
  request.launch = launch;
  request.ratio = ratio;
  auto key = compiler.resolve(request);
  EXPECT_TRUE(key.ok()) << key.message();
  auto entry = compiler.build(*key);
  EXPECT_TRUE(entry.ok()) << entry.message();
  auto kernel = Kernel::fromEntry(*key, std::make_shared<const CacheEntry>(std::move(*entry)));
  EXPECT_TRUE(kernel.ok()) << kernel.message();
  return std::move(*kernel);
}

std::unique_ptr<Launcher> load(const std::shared_ptr<DeviceRuntime> &hip, const Kernel &kernel) {
  auto launcher = Launcher::create(hip, kernel.codeObject(), kernel.interface, kernel.arguments, 0);
  EXPECT_TRUE(launcher.ok()) << launcher.message();
  return launcher.ok() ? std::move(*launcher) : nullptr;
}

/// Binds what the caller binds (inputs, weights, step results) of every
/// kernel to host buffers (the stand-in's device memory), and the peers.
void bindCallerRegions(LayerStep &step, const std::vector<const Kernel *> &kernels,
                       std::list<std::vector<char>> &buffers) {
  for (const Kernel *kernel : kernels)
    for (const RegionSpec &region : kernel->interface.arguments)
      if (region.handedFromKernel.empty() && (region.kind != "output" || region.stepResult))
        ASSERT_TRUE(step.bind(region.name, buffers.emplace_back(region.bytes).data()).ok())
            << kernel->symbol() << " " << region.name;
  ASSERT_TRUE(step.bind(kPeersArgument, buffers.emplace_back(64).data()).ok());
  ASSERT_TRUE(step.bindRank(1).ok());
}

TEST(LayerStepKernels, K1AndK2FormAStepAndTheFfnLaunchAnother) {
  FakeHip fake;
  ASSERT_NE(fake.handle(), nullptr) << "cannot load " MONODC_FAKE_HIP_PATH;
  auto hip = HipRuntime::load({MONODC_FAKE_HIP_PATH});
  ASSERT_TRUE(hip.ok()) << hip.message();
  Compiler compiler;
  const Kernel k1 = build(compiler, "k1", 0), k2 = build(compiler, "k2", 2),
               ffn = build(compiler, "ffn", 0);
  auto memory = std::make_shared<StepMemory>(*hip, 0);

  std::vector<std::vector<std::unique_ptr<Launcher>>> backbone(1);
  backbone[0].push_back(load(*hip, k1));
  backbone[0].push_back(load(*hip, k2));
  auto layer = LayerStep::create(memory, std::move(backbone));
  ASSERT_TRUE(layer.ok()) << layer.message();
  std::list<std::vector<char>> buffers;
  bindCallerRegions(**layer, {&k1, &k2}, buffers);
  // The caches' pages are the engine's, given at launch: nothing runs until
  // they are set; a fixed region and a count outside 1..2^24 are refused.
  EXPECT_NE((*layer)->run(6, nullptr).message().find("kv_cache.rows"), std::string::npos);
  EXPECT_EQ(fake.launches(), 0);
  EXPECT_NE((*layer)->setRows("x", 8).message().find("fixed when it was built"),
            std::string::npos);
  EXPECT_NE((*layer)->setRows("kv_cache", 0).message().find("cannot have 0 rows"),
            std::string::npos);
  EXPECT_NE((*layer)->setRows("pages", 8).message().find("no launch"), std::string::npos);
  ASSERT_TRUE((*layer)->setRows("kv_cache", 5000).ok());
  ASSERT_TRUE((*layer)->setRows("compressed_cache", 7000).ok());
  // The positions are the engine's too: the RoPE table's rows, and the
  // block tables' pages a row (the build's 8 until set).
  EXPECT_NE((*layer)->run(6, nullptr).message().find("cos_sin.rows"), std::string::npos);
  ASSERT_TRUE((*layer)->setRows("cos_sin", 131072).ok());
  EXPECT_NE((*layer)->setCols("kv_cache", 8).message().find("fixed when it was built"),
            std::string::npos);
  ASSERT_TRUE((*layer)->setCols("block_table", 4096).ok());
  ASSERT_TRUE((*layer)->run(6, nullptr).ok());
  ASSERT_EQ(fake.launches(), 2);
  // K1 writes the cache K2 reads: both take its pages.
  EXPECT_EQ(fake.value(0, k1, "kv_cache.rows"), 5000);
  EXPECT_EQ(fake.value(1, k2, "kv_cache.rows"), 5000);
  EXPECT_EQ(fake.value(1, k2, "compressed_cache.rows"), 7000);
  EXPECT_EQ(fake.value(0, k1, "cos_sin.rows"), 131072);
  EXPECT_EQ(fake.value(1, k2, "cos_sin.rows"), 131072);
  EXPECT_EQ(fake.value(1, k2, "block_table.cols"), 4096);
  EXPECT_EQ(fake.value(1, k2, "compressed_block_table.cols"), 8) << "the build's, not set";
  EXPECT_EQ(fake.kernel(0), "mono_k1");
  EXPECT_EQ(fake.kernel(1), "mono_k2");
  for (auto [input, output] : std::vector<std::pair<std::string, std::string>>{
           {"q", "q"},
           {"kv_cache", "kv_cache"},
           {"ffn_residual", "residual_out"},
           {"ffn_post_in", "post"},
           {"ffn_comb_in", "comb"},
           {"ffn_pre_in", "pre"}}) {
    void *written = fake.pointer(0, k1, output);
    EXPECT_NE(written, nullptr) << output;
    EXPECT_EQ(fake.pointer(1, k2, input), written) << "K2's " << input << " is K1's " << output;
  }
  EXPECT_EQ(fake.pointer(1, k2, "mono_epoch"), fake.pointer(0, k1, "mono_epoch"));
  EXPECT_NE((*layer)->bind("q", buffers.front().data()).message().find("belongs to the layer step"),
            std::string::npos);

  // The FFN launch alone, on the same rank: the same epoch buffer.
  std::vector<std::vector<std::unique_ptr<Launcher>>> ffnOnly(1);
  ffnOnly[0].push_back(load(*hip, ffn));
  auto ffnLayer = LayerStep::create(memory, std::move(ffnOnly));
  ASSERT_TRUE(ffnLayer.ok()) << ffnLayer.message();
  bindCallerRegions(**ffnLayer, {&ffn}, buffers);
  ASSERT_TRUE((*ffnLayer)->run(6, nullptr).ok());
  ASSERT_EQ(fake.launches(), 3);
  EXPECT_EQ(fake.kernel(2), "mono_ffn");
  EXPECT_EQ(fake.pointer(2, ffn, "mono_epoch"), fake.pointer(0, k1, "mono_epoch"));

  // K2 without its K1 is no step.
  std::vector<std::vector<std::unique_ptr<Launcher>>> lone(1);
  lone[0].push_back(load(*hip, k2));
  EXPECT_EQ(LayerStep::create(memory, std::move(lone)).message(),
            "kernel mono_k2's input 'q' is handed from kernel mono_k1, which does not run before "
            "it in the step of 6 rows");
}

} // namespace
