//===- KernelResources.cpp - resource notes of an AMDGPU code object ------===//
#include "monodc/inspect/KernelResources.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELFObjectFile.h"

using namespace llvm;
using namespace monodc::inspect;

namespace {
int64_t intField(msgpack::MapDocNode &map, StringRef key) {
  auto it = map.find(key);
  if (it == map.end())
    return 0;
  msgpack::DocNode &node = it->second;
  if (node.getKind() == msgpack::Type::Int)
    return node.getInt();
  if (node.getKind() == msgpack::Type::UInt)
    return static_cast<int64_t>(node.getUInt());
  return 0;
}
} // namespace

Expected<CodeObjectInfo> monodc::inspect::inspectCodeObject(StringRef bytes) {
  auto file = object::ELF64LEFile::create(bytes);
  if (!file)
    return createStringError("not a 64-bit ELF code object: %s",
                             toString(file.takeError()).c_str());
  const auto &header = file->getHeader();
  if (header.e_machine != ELF::EM_AMDGPU)
    return createStringError("ELF machine is %u, not AMDGPU",
                             static_cast<unsigned>(header.e_machine));

  CodeObjectInfo info;
  auto phdrs = file->program_headers();
  if (!phdrs)
    return phdrs.takeError();
  for (const auto &phdr : *phdrs) {
    if (phdr.p_type != ELF::PT_NOTE)
      continue;
    Error noteError = Error::success();
    for (const auto &note : file->notes(phdr, noteError)) {
      if (note.getName() != "AMDGPU" || note.getType() != ELF::NT_AMDGPU_METADATA)
        continue;
      ArrayRef<uint8_t> desc = note.getDesc(phdr.p_align);
      msgpack::Document doc;
      if (!doc.readFromBlob(StringRef(reinterpret_cast<const char *>(desc.data()), desc.size()),
                            /*Multi=*/false))
        return createStringError("the AMDGPU metadata note is not valid msgpack");
      msgpack::MapDocNode root = doc.getRoot().getMap();
      auto target = root.find("amdhsa.target");
      if (target != root.end() && target->second.getKind() == msgpack::Type::String)
        info.target = target->second.getString().str();
      auto kernels = root.find("amdhsa.kernels");
      if (kernels == root.end())
        continue;
      for (msgpack::DocNode &k : kernels->second.getArray()) {
        msgpack::MapDocNode &map = k.getMap();
        KernelResources r;
        auto name = map.find(".name");
        if (name != map.end())
          r.name = name->second.getString().str();
        r.vgprs = intField(map, ".vgpr_count");
        r.agprs = intField(map, ".agpr_count");
        r.sgprs = intField(map, ".sgpr_count");
        r.vgprSpills = intField(map, ".vgpr_spill_count");
        r.sgprSpills = intField(map, ".sgpr_spill_count");
        r.ldsBytes = intField(map, ".group_segment_fixed_size");
        r.scratchBytes = intField(map, ".private_segment_fixed_size");
        r.wavefrontSize = intField(map, ".wavefront_size");
        r.kernargBytes = intField(map, ".kernarg_segment_size");
        info.kernels.push_back(r);
      }
    }
    if (noteError)
      return std::move(noteError);
  }
  if (info.kernels.empty())
    return createStringError("the code object has no AMDGPU kernel metadata");
  return info;
}
