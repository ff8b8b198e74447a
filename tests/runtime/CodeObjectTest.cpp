// The LLVM-free code-object reader: MessagePack of every type, the AMDGPU
// metadata of a synthetic ELF, and damaged input as errors, never crashes.
// (The JIT suite compares it with LLVM's reader on real gfx950 objects.)
#include "monodc/runtime/CodeObject.h"
#include "monodc/runtime/MsgPack.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

using namespace monodc::runtime;
using namespace monodc::testing;

namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values)
    out.push_back(static_cast<char>(v));
  return out;
}

TEST(MsgPack, DecodesEveryType) {
  // {"a": [nil, true, false, 5, -3, 300, -200, 1.5f, 2.5, "hi", bin 2, ext]}
  std::string input = bytes({0x81, 0xa1, 'a', 0x9c, 0xc0, 0xc3, 0xc2, 0x05, 0xfd, 0xcd, 0x01,
                             0x2c, 0xd1, 0xff, 0x38, 0xca, 0x3f, 0xc0, 0x00, 0x00, 0xcb, 0x40,
                             0x04, 0, 0, 0, 0, 0, 0, 0xd9, 0x02, 'h', 'i', 0xc4, 0x02, 1, 2,
                             0xd4, 0x01, 0x07});
  auto value = msgpack::decode(input);
  ASSERT_TRUE(value.ok()) << value.message();
  const msgpack::Value *a = value->find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items.size(), 12u);
  using Kind = msgpack::Value::Kind;
  EXPECT_EQ(a->items[0].kind, Kind::Nil);
  EXPECT_TRUE(a->items[1].boolean);
  EXPECT_FALSE(a->items[2].boolean);
  int64_t n = 0;
  EXPECT_TRUE(a->items[3].asInt64(n) && n == 5);
  EXPECT_TRUE(a->items[4].asInt64(n) && n == -3);
  EXPECT_TRUE(a->items[5].asInt64(n) && n == 300);
  EXPECT_TRUE(a->items[6].asInt64(n) && n == -200);
  EXPECT_EQ(a->items[7].floatValue, 1.5);
  EXPECT_EQ(a->items[8].floatValue, 2.5);
  EXPECT_EQ(a->items[9].text, "hi");
  EXPECT_EQ(a->items[10].kind, Kind::Binary);
  EXPECT_EQ(a->items[10].text, bytes({1, 2}));
  EXPECT_EQ(a->items[11].kind, Kind::Binary);
  EXPECT_EQ(a->items[11].text, bytes({0x07}));
}

TEST(MsgPack, RefusesDamagedInput) {
  auto refuse = [](const std::string &input, const std::string &why) {
    auto value = msgpack::decode(input);
    ASSERT_FALSE(value.ok());
    EXPECT_NE(value.message().find(why), std::string::npos) << value.message();
  };
  refuse("", "unexpected end");
  refuse(bytes({0xd9, 0x05, 'a'}), "runs past the end");
  refuse(bytes({0xdd, 0x7f, 0xff, 0xff, 0xff}), "runs past the end");
  refuse(bytes({0xc1}), "reserved tag");
  refuse(bytes({0x01, 0x02}), "bytes after the value");
  refuse(std::string(100, static_cast<char>(0x91)) + bytes({0x01}), "nested deeper");
}

TEST(CodeObject, ReadsTheMetadataOfEveryKernel) {
  TestKernel a = makeKernelFor("mono_a", {"u", "y"});
  a.vgprs = 158;
  a.agprs = 4;
  a.sgprs = 64;
  a.lds = 3264;
  TestKernel b = makeKernelFor("mono_b", {});
  b.scratch = 16;
  b.vgprSpills = 3;
  b.sgprSpills = 49;
  std::string elf = makeAmdgpuElf("amdgcn-amd-amdhsa--gfx950", {a, b});
  auto info = readCodeObject(elf);
  ASSERT_TRUE(info.ok()) << info.message();
  EXPECT_EQ(info->target, "amdgcn-amd-amdhsa--gfx950");
  EXPECT_EQ(info->elfFlags, 0x54fu);
  EXPECT_EQ(info->metadataVersion, (std::vector<int64_t>{1, 2}));
  ASSERT_EQ(info->kernels.size(), 2u);
  const KernelInfo *k = info->kernel("mono_a");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->symbol, "mono_a.kd");
  EXPECT_EQ(k->vgprs, 158);
  EXPECT_EQ(k->agprs, 4);
  EXPECT_EQ(k->sgprs, 64);
  EXPECT_EQ(k->ldsBytes, 3264);
  EXPECT_EQ(k->wavefrontSize, 64);
  EXPECT_EQ(k->kernargBytes, 32);
  ASSERT_EQ(k->arguments.size(), 4u);
  EXPECT_EQ(k->arguments[1].name, "r_y.coerce");
  EXPECT_EQ(k->arguments[1].offset, 8);
  EXPECT_EQ(k->arguments[3].name, "mono_epoch.coerce");
  EXPECT_EQ(k->arguments[3].valueKind, "global_buffer");
  EXPECT_TRUE(checkPersistentKernel(*k).ok());

  Status refused = checkPersistentKernel(*info->kernel("mono_b"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("kernel mono_b needs scratch memory (16 bytes per "
                                   "work-item, 3 VGPR spills, 49 SGPR spills into VGPR lanes)"),
            std::string::npos)
      << refused.message();
}

TEST(CodeObject, RefusesWhatIsNotAnAmdgpuCodeObject) {
  EXPECT_NE(readCodeObject("not an elf file at all").message().find("not a 64-bit"),
            std::string::npos);
  std::string elf = makeAmdgpuElf("t", {makeKernelFor("k", {})});
  std::string x86 = elf;
  x86[18] = 62; // EM_X86_64
  EXPECT_NE(readCodeObject(x86).message().find("ELF machine is 62, not AMDGPU"),
            std::string::npos);
  std::string noKernels = makeAmdgpuElf("t", {});
  EXPECT_NE(readCodeObject(noKernels).message().find("no AMDGPU kernel metadata"),
            std::string::npos);
}

TEST(CodeObject, DamagedFilesAreErrorsNeverCrashes) {
  std::string elf = makeAmdgpuElf("amdgcn-amd-amdhsa--gfx950", {makeKernelFor("k", {"a"})});
  for (size_t size = 0; size < elf.size(); ++size)
    EXPECT_FALSE(readCodeObject(elf.substr(0, size)).ok()) << "cut at " << size;
  // Flip every bit of every byte: whatever comes out, nothing crashes.
  for (size_t at = 0; at < elf.size(); ++at)
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = elf;
      damaged[at] = static_cast<char>(damaged[at] ^ (1 << bit));
      (void)readCodeObject(damaged);
    }
}

} // namespace
