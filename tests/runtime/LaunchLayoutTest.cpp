// The device-independent half of launching: reading kernel manifests,
// laying out kernel arguments, sizing buffers, packing the kernarg buffer.
#include "monodc/runtime/ArgumentLayout.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace monodc::runtime;
using namespace monodc::testing;

namespace {

// As emit::kernelManifest prints the tiny attention front (rows 12, sm_90).
const char *kManifest = R"(kernel mono_attention_front
grid 132
block 256
rows 12
scratch_bytes 17664
epoch_words 398
stage 0 seam.norm 12
stage 1 front.wqkv 144
wait 0 front.wqkv seam.norm.flags
wait 1 front.wqkv allreduce.peer_flags 1
arg u input bf16 12 512 12288
arg attn_norm weight bf16 1 512 1024
arg y output bf16 12 512 12288
scratch xq scratch e4m3 12 512 6144 0
scratch seam.norm.flags flags i64 1 12 96 15616
arg qn output bf16 12 256 6144
)";

TEST(LaunchInterface, ReadsAKernelManifest) {
  auto interface = LaunchInterface::parse(kManifest);
  ASSERT_TRUE(interface.ok()) << interface.message();
  EXPECT_EQ(interface->kernelName, "mono_attention_front");
  EXPECT_EQ(interface->grid, 132);
  EXPECT_EQ(interface->block, 256);
  EXPECT_EQ(interface->rows, 12);
  EXPECT_EQ(interface->scratchBytes, 17664);
  EXPECT_EQ(interface->epochWords, 398);
  ASSERT_EQ(interface->stages.size(), 2u);
  EXPECT_EQ(interface->stages[1].name, "front.wqkv");
  EXPECT_EQ(interface->stages[1].tasks, 144);
  ASSERT_EQ(interface->waits.size(), 2u);
  EXPECT_EQ(interface->waits[0].stage, "front.wqkv");
  EXPECT_EQ(interface->waits[0].flags, "seam.norm.flags");
  EXPECT_EQ(interface->waits[0].peerRank, -1);
  EXPECT_EQ(interface->waits[1].peerRank, 1);
  ASSERT_EQ(interface->arguments.size(), 4u);
  EXPECT_EQ(interface->arguments[3].name, "qn"); // kernel order, across scratch lines
  EXPECT_EQ(interface->arguments[1].kind, "weight");
  EXPECT_EQ(interface->arguments[1].bytes, 1024);
  ASSERT_EQ(interface->scratch.size(), 2u);
  EXPECT_EQ(interface->scratch[1].offset, 15616);
  auto again = LaunchInterface::parse(interface->text());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->text(), interface->text());
}

TEST(LaunchInterface, ReadsTheDynamicSharedMemoryOfAnSm90Launch) {
  EXPECT_EQ(LaunchInterface::parse(kManifest)->dynamicSharedBytes, 0); // all static
  auto interface = LaunchInterface::parse(std::string(kManifest) + "dynamic_shared_bytes 99712\n");
  ASSERT_TRUE(interface.ok()) << interface.message();
  EXPECT_EQ(interface->dynamicSharedBytes, 99712);
  auto again = LaunchInterface::parse(interface->text());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->dynamicSharedBytes, 99712);
  EXPECT_NE(LaunchInterface::parse(std::string(kManifest) + "dynamic_shared_bytes 0\n")
                .message()
                .find("cannot read 'dynamic_shared_bytes 0'"),
            std::string::npos);
}

TEST(LaunchInterface, ReadsADecodeStepsMemoryFlow) {
  auto interface =
      LaunchInterface::parse(std::string(kManifest) + "from u mono_k1 residual_out\nresult y\n");
  ASSERT_TRUE(interface.ok()) << interface.message();
  EXPECT_EQ(interface->arguments[0].handedFromKernel, "mono_k1");
  EXPECT_EQ(interface->arguments[0].handedFromRegion, "residual_out");
  EXPECT_TRUE(interface->arguments[2].stepResult);
  EXPECT_FALSE(interface->arguments[3].stepResult);
  auto again = LaunchInterface::parse(interface->text());
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->text(), interface->text());
  EXPECT_EQ(again->arguments[0].handedFromRegion, "residual_out");
  // A hand-over names an input before it; a result, an output.
  for (std::string bad :
       {"from y mono_k1 q", "from v mono_k1 q", "from u mono_k1", "result u", "result v"})
    EXPECT_NE(LaunchInterface::parse(std::string(kManifest) + bad + "\n")
                  .message()
                  .find("cannot read '" + bad + "'"),
              std::string::npos)
        << bad;
}

TEST(LaunchInterface, RefusesWhatItCannotRead) {
  EXPECT_NE(LaunchInterface::parse(std::string(kManifest) + "sync 2\n")
                .message()
                .find("line 17: unknown line 'sync 2'"),
            std::string::npos);
  EXPECT_NE(LaunchInterface::parse("kernel k\ngrid 1\nblock 64\nepoch_words x\n")
                .message()
                .find("cannot read 'epoch_words x'"),
            std::string::npos);
  EXPECT_NE(LaunchInterface::parse("arg u input bf16 1 2 4\n").message().find("needs kernel"),
            std::string::npos);
  // Wait sites come in order, each naming a stage, its flags and a rank.
  EXPECT_NE(LaunchInterface::parse(std::string(kManifest) + "wait 5 s f\n")
                .message()
                .find("cannot read 'wait 5 s f'"),
            std::string::npos);
  EXPECT_NE(LaunchInterface::parse(std::string(kManifest) + "wait 2 s f -1\n")
                .message()
                .find("cannot read 'wait 2 s f -1'"),
            std::string::npos);
  // An epoch buffer without the wait-fault record (an older manifest).
  std::string old = kManifest;
  old.replace(old.find("epoch_words 398"), 15, "epoch_words 390");
  EXPECT_NE(LaunchInterface::parse(old).message().find(
                "epoch_words 390 is not the epoch buffer of grid 132 (398 words"),
            std::string::npos)
      << LaunchInterface::parse(old).message();
}

TEST(ArgumentLayout, PointersInOrderThenScratchAndEpoch) {
  auto interface = LaunchInterface::parse(kManifest);
  ASSERT_TRUE(interface.ok());
  auto layout = layoutArguments(*interface, nullptr);
  ASSERT_TRUE(layout.ok()) << layout.message();
  ASSERT_EQ(layout->slots.size(), 6u);
  const char *names[] = {"u", "attn_norm", "y", "qn", "mono_scratch", "mono_epoch"};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(layout->slots[i].name, names[i]);
    EXPECT_EQ(layout->slots[i].offset, int64_t(8 * i));
  }
  EXPECT_EQ(layout->kernargBytes, 48);
  EXPECT_EQ(layout->slot("mono_scratch")->bytes, 17664);
  EXPECT_TRUE(layout->slot("mono_scratch")->launcherOwned);
  EXPECT_EQ(layout->slot("mono_epoch")->bytes, 398 * 4);
  EXPECT_FALSE(layout->slot("mono_epoch")->launcherOwned);
  EXPECT_EQ(layout->slot("y")->bytes, 12288);
  EXPECT_EQ(layout->workspaceBytes, 17664);
}

TEST(ArgumentLayout, TakesOffsetsFromAgreeingMetadata) {
  std::vector<std::string> args = {"u", "w", "y"};
  auto interface = LaunchInterface::parse(makeManifest("mono_k", args));
  ASSERT_TRUE(interface.ok());
  TestKernel k = makeKernelFor("mono_k", args);
  k.args[2].offset = 24; // a gap, as an alignment rule might leave
  k.args[3].offset = 32;
  k.args[4].offset = 40;
  k.kernarg = 56;
  auto info = readCodeObject(makeAmdgpuElf("amdgcn-amd-amdhsa--gfx950", {k}));
  ASSERT_TRUE(info.ok());
  auto layout = layoutArguments(*interface, &info->kernels[0]);
  ASSERT_TRUE(layout.ok()) << layout.message();
  EXPECT_EQ(layout->slot("y")->offset, 24);
  EXPECT_EQ(layout->slot("mono_epoch")->offset, 40);
  EXPECT_EQ(layout->kernargBytes, 56);

  TestKernel fewer = makeKernelFor("mono_k", {"u", "w"});
  auto fewerInfo = readCodeObject(makeAmdgpuElf("t", {fewer}));
  EXPECT_NE(layoutArguments(*interface, &fewerInfo->kernels[0])
                .message()
                .find("takes 4 arguments, its launch interface names 5"),
            std::string::npos);
  TestKernel swapped = makeKernelFor("mono_k", args);
  std::swap(swapped.args[3].name, swapped.args[2].name);
  auto swappedInfo = readCodeObject(makeAmdgpuElf("t", {swapped}));
  EXPECT_NE(layoutArguments(*interface, &swappedInfo->kernels[0]).message().find("does not match"),
            std::string::npos);
}

TEST(ArgumentLayout, PacksBoundAddressesAndRefusesMissingOnes) {
  auto interface = LaunchInterface::parse(kManifest);
  auto layout = layoutArguments(*interface, nullptr);
  ASSERT_TRUE(layout.ok());
  std::map<std::string, uint64_t> bound = {{"u", 0x1000},       {"attn_norm", 0x2000},
                                           {"y", 0x3000},       {"qn", 0x4000},
                                           {"mono_epoch", 0x5000}};
  auto packed = packArguments(*layout, bound, 0x9000);
  ASSERT_TRUE(packed.ok()) << packed.message();
  ASSERT_EQ(packed->size(), 48u);
  uint64_t words[6];
  std::memcpy(words, packed->data(), 48);
  EXPECT_EQ(words[0], 0x1000u);
  EXPECT_EQ(words[3], 0x4000u);
  EXPECT_EQ(words[4], 0x9000u); // the launcher's scratch buffer
  EXPECT_EQ(words[5], 0x5000u);

  auto missing = bound;
  missing.erase("qn");
  EXPECT_EQ(packArguments(*layout, missing, 0x9000).message(),
            "region 'qn' (output, 6144 bytes) is not bound");
  auto unknown = bound;
  unknown["v"] = 0x6000;
  EXPECT_EQ(packArguments(*layout, unknown, 0x9000).message(),
            "the launch has no region 'v' to bind");
  auto scratch = bound;
  scratch["mono_scratch"] = 0x6000;
  EXPECT_NE(packArguments(*layout, scratch, 0x9000).message().find("belongs to the launcher"),
            std::string::npos);
  EXPECT_NE(packArguments(*layout, bound, 0).message().find("17664 bytes) is not allocated"),
            std::string::npos);
}

} // namespace
