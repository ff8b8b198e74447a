//===- CodeObject.cpp - kernels of an AMDGPU code object, without LLVM ----===//
#include "monodc/runtime/CodeObject.h"

#include "monodc/runtime/MsgPack.h"

#include <cstring>

using namespace monodc::runtime;

namespace {

// ELF constants (System V gABI and the AMDGPU ABI).
constexpr uint16_t kMachineAmdgpu = 224;
constexpr uint32_t kProgramNote = 4;  // PT_NOTE
constexpr uint32_t kSectionNote = 7;  // SHT_NOTE
constexpr uint32_t kSectionNoBits = 8;  // SHT_NOBITS: takes no file bytes
constexpr uint64_t kFlagExecute = 4;  // SHF_EXECINSTR
constexpr uint32_t kNoteAmdgpuMetadata = 32;
constexpr size_t kElfHeaderBytes = 64, kProgramHeaderBytes = 56, kSectionHeaderBytes = 64;

template <typename T> T read(std::string_view bytes, uint64_t at) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    value |= T(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return value;
}

bool fits(std::string_view bytes, uint64_t offset, uint64_t size) {
  return offset <= bytes.size() && size <= bytes.size() - offset;
}

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// A region of the file holding notes: a PT_NOTE segment or SHT_NOTE section.
struct NoteRange {
  uint64_t offset, size, alignment;
};

/// The descriptor of the first AMDGPU metadata note in `range`, if any.
Result<std::string_view> findMetadataNote(std::string_view bytes, NoteRange range) {
  if (!fits(bytes, range.offset, range.size))
    return makeError("a note segment lies outside the file");
  uint64_t align = range.alignment == 8 ? 8 : 4;
  std::string_view notes = bytes.substr(range.offset, range.size);
  uint64_t at = 0;
  while (at + 12 <= notes.size()) {
    uint32_t nameBytes = read<uint32_t>(notes, at), descBytes = read<uint32_t>(notes, at + 4);
    uint32_t type = read<uint32_t>(notes, at + 8);
    uint64_t nameAt = at + 12, descAt = nameAt + alignUp(nameBytes, align);
    if (!fits(notes, nameAt, nameBytes) || !fits(notes, descAt, descBytes))
      return makeError("a note runs past its segment");
    std::string_view name = notes.substr(nameAt, nameBytes);
    if (type == kNoteAmdgpuMetadata && name == std::string_view("AMDGPU\0", 7))
      return notes.substr(descAt, descBytes);
    at = descAt + alignUp(descBytes, align);
  }
  return std::string_view();
}

std::string stringField(const msgpack::Value &map, std::string_view key) {
  const msgpack::Value *v = map.find(key);
  return v && v->kind == msgpack::Value::Kind::String ? v->text : std::string();
}

int64_t intField(const msgpack::Value &map, std::string_view key) {
  int64_t value = 0;
  if (const msgpack::Value *v = map.find(key))
    v->asInt64(value);
  return value;
}

KernelInfo readKernel(const msgpack::Value &map) {
  KernelInfo k;
  k.name = stringField(map, ".name");
  k.symbol = stringField(map, ".symbol");
  k.vgprs = intField(map, ".vgpr_count");
  k.agprs = intField(map, ".agpr_count");
  k.sgprs = intField(map, ".sgpr_count");
  k.vgprSpills = intField(map, ".vgpr_spill_count");
  k.sgprSpills = intField(map, ".sgpr_spill_count");
  k.ldsBytes = intField(map, ".group_segment_fixed_size");
  k.scratchBytes = intField(map, ".private_segment_fixed_size");
  k.wavefrontSize = intField(map, ".wavefront_size");
  k.kernargBytes = intField(map, ".kernarg_segment_size");
  k.kernargAlign = intField(map, ".kernarg_segment_align");
  k.maxFlatWorkgroupSize = intField(map, ".max_flat_workgroup_size");
  if (const msgpack::Value *stack = map.find(".uses_dynamic_stack"))
    k.usesDynamicStack = stack->kind == msgpack::Value::Kind::Boolean && stack->boolean;
  if (const msgpack::Value *args = map.find(".args")) {
    for (const msgpack::Value &arg : args->items) {
      KernelArgument a;
      a.name = stringField(arg, ".name");
      a.offset = intField(arg, ".offset");
      a.size = intField(arg, ".size");
      a.valueKind = stringField(arg, ".value_kind");
      a.addressSpace = stringField(arg, ".address_space");
      a.access = stringField(arg, ".actual_access");
      k.arguments.push_back(std::move(a));
    }
  }
  return k;
}

Status readMetadata(std::string_view note, CodeObjectInfo &info) {
  Result<msgpack::Value> root = msgpack::decode(note);
  if (!root)
    return makeError("the AMDGPU metadata note is not valid MessagePack: " + root.message());
  if (root->kind != msgpack::Value::Kind::Map)
    return makeError("the AMDGPU metadata note is not a map");
  info.target = stringField(*root, "amdhsa.target");
  if (const msgpack::Value *version = root->find("amdhsa.version"))
    for (const msgpack::Value &part : version->items) {
      int64_t number = 0;
      if (part.asInt64(number))
        info.metadataVersion.push_back(number);
    }
  if (const msgpack::Value *kernels = root->find("amdhsa.kernels"))
    for (const msgpack::Value &kernel : kernels->items)
      if (kernel.kind == msgpack::Value::Kind::Map)
        info.kernels.push_back(readKernel(kernel));
  return Status::success();
}

/// Where each section header starts (none when the file has none), once
/// the table is checked to lie inside the file.
Result<std::vector<uint64_t>> sectionHeaders(std::string_view bytes) {
  uint64_t shoff = read<uint64_t>(bytes, 40);
  uint16_t shentsize = read<uint16_t>(bytes, 58), shnum = read<uint16_t>(bytes, 60);
  std::vector<uint64_t> headers;
  if (shnum == 0)
    return headers;
  if (shentsize != kSectionHeaderBytes || !fits(bytes, shoff, uint64_t(shnum) * shentsize))
    return makeError("the section headers lie outside the file");
  for (uint16_t i = 0; i < shnum; ++i)
    headers.push_back(shoff + uint64_t(i) * shentsize);
  return headers;
}

/// Note ranges from the program headers, else from the section headers (a
/// relocatable object has no program headers).
Result<std::vector<NoteRange>> noteRanges(std::string_view bytes) {
  std::vector<NoteRange> ranges;
  uint64_t phoff = read<uint64_t>(bytes, 32);
  uint16_t phentsize = read<uint16_t>(bytes, 54), phnum = read<uint16_t>(bytes, 56);
  if (phnum != 0) {
    if (phentsize != kProgramHeaderBytes || !fits(bytes, phoff, uint64_t(phnum) * phentsize))
      return makeError("the program headers lie outside the file");
    for (uint16_t i = 0; i < phnum; ++i) {
      uint64_t at = phoff + uint64_t(i) * phentsize;
      if (read<uint32_t>(bytes, at) == kProgramNote)
        ranges.push_back({read<uint64_t>(bytes, at + 8), read<uint64_t>(bytes, at + 32),
                          read<uint64_t>(bytes, at + 48)});
    }
    return ranges;
  }
  Result<std::vector<uint64_t>> headers = sectionHeaders(bytes);
  if (!headers)
    return headers.error();
  for (uint64_t at : *headers)
    if (read<uint32_t>(bytes, at + 4) == kSectionNote)
      ranges.push_back({read<uint64_t>(bytes, at + 24), read<uint64_t>(bytes, at + 32),
                        read<uint64_t>(bytes, at + 48)});
  return ranges;
}

/// The executable sections' sizes summed, from the section headers. Each
/// must lie inside the file (found by fuzzing: a huge sh_size made the sum
/// negative, and a larger one overflowed), so the sum is at most 65535 times
/// the file's size.
Result<int64_t> codeBytes(std::string_view bytes) {
  Result<std::vector<uint64_t>> headers = sectionHeaders(bytes);
  if (!headers)
    return headers.error();
  int64_t total = 0;
  for (size_t i = 0; i < headers->size(); ++i) {
    uint64_t at = (*headers)[i];
    if (read<uint32_t>(bytes, at + 4) == kSectionNoBits ||
        !(read<uint64_t>(bytes, at + 8) & kFlagExecute))
      continue;
    uint64_t offset = read<uint64_t>(bytes, at + 24), size = read<uint64_t>(bytes, at + 32);
    if (!fits(bytes, offset, size))
      return makeError("executable section " + std::to_string(i) + " (offset " +
                       std::to_string(offset) + ", " + std::to_string(size) +
                       " bytes) lies outside the file");
    total += static_cast<int64_t>(size);
  }
  return total;
}

} // namespace

const KernelInfo *CodeObjectInfo::kernel(std::string_view name) const {
  for (const KernelInfo &k : kernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

bool monodc::runtime::looksLikeElf(std::string_view bytes) {
  return bytes.size() >= 4 && bytes.substr(0, 4) == "\x7f" "ELF";
}

Result<CodeObjectInfo> monodc::runtime::readCodeObject(std::string_view bytes) {
  if (!looksLikeElf(bytes) || bytes.size() < kElfHeaderBytes || bytes[4] != 2 || bytes[5] != 1)
    return makeError("not a 64-bit little-endian ELF code object");
  uint16_t machine = read<uint16_t>(bytes, 18);
  if (machine != kMachineAmdgpu)
    return makeError("ELF machine is " + std::to_string(machine) + ", not AMDGPU (" +
                     std::to_string(kMachineAmdgpu) + ")");
  CodeObjectInfo info;
  info.elfFlags = read<uint32_t>(bytes, 48);
  Result<std::vector<NoteRange>> ranges = noteRanges(bytes);
  if (!ranges)
    return ranges.error();
  for (const NoteRange &range : *ranges) {
    Result<std::string_view> note = findMetadataNote(bytes, range);
    if (!note)
      return note.error();
    if (note->empty())
      continue;
    if (Status read = readMetadata(*note, info); !read)
      return read.error();
    break;
  }
  if (info.kernels.empty())
    return makeError("the code object has no AMDGPU kernel metadata");
  Result<int64_t> code = codeBytes(bytes);
  if (!code)
    return code.error();
  info.codeBytes = *code;
  return info;
}

Status monodc::runtime::checkPersistentKernel(const KernelInfo &k) {
  // SGPR spills land in VGPR lanes, not in scratch memory: allowed.
  if (k.scratchBytes == 0 && k.vgprSpills == 0 && !k.usesDynamicStack)
    return Status::success();
  return makeError("kernel " + k.name + " needs scratch memory (" +
                   std::to_string(k.scratchBytes) + " bytes per work-item, " +
                   std::to_string(k.vgprSpills) + " VGPR spills, " +
                   std::to_string(k.sgprSpills) + " SGPR spills into VGPR lanes" +
                   (k.usesDynamicStack ? ", a dynamic stack" : "") +
                   "); a persistent launch that needs scratch is refused");
}
