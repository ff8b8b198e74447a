// The LLVM-free code-object reader against LLVM's own MessagePack reader, on a
// real gfx950 code object of the DSV41 attention front: every field of every
// kernel and argument agrees.
#include "monodc/jit/Compiler.h"
#include "monodc/runtime/CodeObject.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELFObjectFile.h"

#include <gtest/gtest.h>

using namespace monodc;

namespace {

int64_t llvmInt(llvm::msgpack::MapDocNode &map, llvm::StringRef key) {
  auto it = map.find(key);
  if (it == map.end())
    return 0;
  return it->second.getKind() == llvm::msgpack::Type::Int
             ? it->second.getInt()
             : static_cast<int64_t>(it->second.getUInt());
}

std::string llvmString(llvm::msgpack::MapDocNode &map, llvm::StringRef key) {
  auto it = map.find(key);
  return it == map.end() ? "" : it->second.getString().str();
}

TEST(CodeObjectReader, AgreesWithLlvmOnARealGfx950Object) {
  Compiler compiler;
  auto key = compiler.resolve(KernelRequest());
  ASSERT_TRUE(key.ok()) << key.message();
  auto entry = compiler.build(*key);
  ASSERT_TRUE(entry.ok()) << entry.message();
  llvm::StringRef bytes(entry->codeObject.data(), entry->codeObject.size());
  auto ours = runtime::readCodeObject(std::string_view(bytes.data(), bytes.size()));
  ASSERT_TRUE(ours.ok()) << ours.message();

  auto file = llvm::object::ELF64LEFile::create(bytes);
  ASSERT_TRUE(static_cast<bool>(file));
  llvm::msgpack::Document doc;
  bool found = false;
  for (const auto &phdr : *file->program_headers()) {
    if (phdr.p_type != llvm::ELF::PT_NOTE)
      continue;
    llvm::Error error = llvm::Error::success();
    for (const auto &note : file->notes(phdr, error))
      if (note.getType() == llvm::ELF::NT_AMDGPU_METADATA) {
        auto desc = note.getDesc(phdr.p_align);
        ASSERT_TRUE(doc.readFromBlob(
            llvm::StringRef(reinterpret_cast<const char *>(desc.data()), desc.size()), false));
        found = true;
      }
    ASSERT_FALSE(static_cast<bool>(error));
  }
  ASSERT_TRUE(found);
  auto root = doc.getRoot().getMap();
  EXPECT_EQ(ours->target, root["amdhsa.target"].getString().str());
  auto kernels = root["amdhsa.kernels"].getArray();
  ASSERT_EQ(ours->kernels.size(), kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    auto map = kernels[i].getMap();
    const runtime::KernelInfo &k = ours->kernels[i];
    EXPECT_EQ(k.name, llvmString(map, ".name"));
    EXPECT_EQ(k.symbol, llvmString(map, ".symbol"));
    EXPECT_EQ(k.vgprs, llvmInt(map, ".vgpr_count"));
    EXPECT_EQ(k.agprs, llvmInt(map, ".agpr_count"));
    EXPECT_EQ(k.sgprs, llvmInt(map, ".sgpr_count"));
    EXPECT_EQ(k.vgprSpills, llvmInt(map, ".vgpr_spill_count"));
    EXPECT_EQ(k.sgprSpills, llvmInt(map, ".sgpr_spill_count"));
    EXPECT_EQ(k.ldsBytes, llvmInt(map, ".group_segment_fixed_size"));
    EXPECT_EQ(k.scratchBytes, llvmInt(map, ".private_segment_fixed_size"));
    EXPECT_EQ(k.wavefrontSize, llvmInt(map, ".wavefront_size"));
    EXPECT_EQ(k.kernargBytes, llvmInt(map, ".kernarg_segment_size"));
    EXPECT_EQ(k.kernargAlign, llvmInt(map, ".kernarg_segment_align"));
    EXPECT_EQ(k.maxFlatWorkgroupSize, llvmInt(map, ".max_flat_workgroup_size"));
    auto args = map[".args"].getArray();
    ASSERT_EQ(k.arguments.size(), args.size());
    for (size_t a = 0; a < args.size(); ++a) {
      auto arg = args[a].getMap();
      EXPECT_EQ(k.arguments[a].name, llvmString(arg, ".name"));
      EXPECT_EQ(k.arguments[a].offset, llvmInt(arg, ".offset"));
      EXPECT_EQ(k.arguments[a].size, llvmInt(arg, ".size"));
      EXPECT_EQ(k.arguments[a].valueKind, llvmString(arg, ".value_kind"));
      EXPECT_EQ(k.arguments[a].addressSpace, llvmString(arg, ".address_space"));
      EXPECT_EQ(k.arguments[a].access, llvmString(arg, ".actual_access"));
    }
  }
  // The code size: LLVM's executable sections, summed.
  int64_t code = 0;
  auto sections = file->sections();
  ASSERT_TRUE(static_cast<bool>(sections));
  for (const auto &section : *sections)
    if (section.sh_type != llvm::ELF::SHT_NOBITS && (section.sh_flags & llvm::ELF::SHF_EXECINSTR))
      code += section.sh_size;
  EXPECT_EQ(ours->codeBytes, code);
  EXPECT_GT(ours->codeBytes, 1024);
  EXPECT_GT(ours->kernels[0].vgprs, 0);
  EXPECT_GT(ours->kernels[0].arguments.size(), 3u);
}

} // namespace
