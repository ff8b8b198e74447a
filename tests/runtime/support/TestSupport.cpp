//===- TestSupport.cpp - helpers of the runtime tests ---------------------===//
#include "TestSupport.h"

#include "monodc/runtime/BuildId.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

using namespace monodc;
using namespace monodc::testing;

TempDir::TempDir() {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/monodc-test.XXXXXX";
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  // A test may have made the directory read-only.
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ec);
  std::filesystem::remove_all(path_, ec);
}

std::string testing::readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void testing::writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

namespace {
void bigEndian(std::string &out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i)
    out.push_back(static_cast<char>(value >> (8 * i)));
}
void littleEndian(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>(value >> (8 * i)));
}
} // namespace

MsgPackWriter &MsgPackWriter::map(uint32_t entries) {
  bytes_.push_back(static_cast<char>(0xde));
  bigEndian(bytes_, entries, 2);
  return *this;
}

MsgPackWriter &MsgPackWriter::array(uint32_t items) {
  bytes_.push_back(static_cast<char>(0xdc));
  bigEndian(bytes_, items, 2);
  return *this;
}

MsgPackWriter &MsgPackWriter::string(const std::string &text) {
  bytes_.push_back(static_cast<char>(0xd9));
  bigEndian(bytes_, text.size(), 1);
  bytes_ += text;
  return *this;
}

MsgPackWriter &MsgPackWriter::integer(int64_t value) {
  if (value >= 0) {
    bytes_.push_back(static_cast<char>(0xcf));
    bigEndian(bytes_, static_cast<uint64_t>(value), 8);
  } else {
    bytes_.push_back(static_cast<char>(0xd3));
    bigEndian(bytes_, static_cast<uint64_t>(value), 8);
  }
  return *this;
}

MsgPackWriter &MsgPackWriter::boolean(bool value) {
  bytes_.push_back(static_cast<char>(value ? 0xc3 : 0xc2));
  return *this;
}

std::string testing::makeAmdgpuElf(const std::string &target,
                                   const std::vector<TestKernel> &kernels) {
  MsgPackWriter w;
  w.map(3).string("amdhsa.kernels").array(static_cast<uint32_t>(kernels.size()));
  for (const TestKernel &k : kernels) {
    w.map(14).string(".name").string(k.name).string(".symbol").string(k.name + ".kd");
    w.string(".vgpr_count").integer(k.vgprs).string(".agpr_count").integer(k.agprs);
    w.string(".sgpr_count").integer(k.sgprs).string(".vgpr_spill_count").integer(k.vgprSpills);
    w.string(".sgpr_spill_count").integer(k.sgprSpills);
    w.string(".group_segment_fixed_size").integer(k.lds);
    w.string(".private_segment_fixed_size").integer(k.scratch);
    w.string(".wavefront_size").integer(k.wavefront);
    w.string(".kernarg_segment_size").integer(k.kernarg);
    w.string(".kernarg_segment_align").integer(8);
    w.string(".uses_dynamic_stack").boolean(false);
    w.string(".args").array(static_cast<uint32_t>(k.args.size()));
    for (const TestKernelArg &a : k.args)
      w.map(5).string(".name").string(a.name).string(".offset").integer(a.offset)
          .string(".size").integer(a.size).string(".value_kind").string(a.valueKind)
          .string(".address_space").string("global");
  }
  w.string("amdhsa.target").string(target).string("amdhsa.version").array(2).integer(1).integer(2);

  std::string note;
  littleEndian(note, 7, 4);                   // name size: "AMDGPU\0"
  littleEndian(note, w.bytes().size(), 4);    // descriptor size
  littleEndian(note, 32, 4);                  // NT_AMDGPU_METADATA
  note += std::string("AMDGPU\0\0", 8);       // padded to 4
  note += w.bytes();
  while (note.size() % 4)
    note.push_back('\0');

  std::string elf;
  elf += std::string("\x7f" "ELF\x02\x01\x01\x40\x04", 9);
  elf.resize(16, '\0');
  littleEndian(elf, 3, 2);        // ET_DYN
  littleEndian(elf, 224, 2);      // EM_AMDGPU
  littleEndian(elf, 1, 4);        // version
  littleEndian(elf, 0, 8);        // entry
  littleEndian(elf, 64, 8);       // program headers right after the header
  littleEndian(elf, 0, 8);        // no section headers
  littleEndian(elf, 0x54f, 4);    // flags (gfx950)
  littleEndian(elf, 64, 2);       // header size
  littleEndian(elf, 56, 2);       // program header size
  littleEndian(elf, 1, 2);        // one program header
  littleEndian(elf, 64, 2);       // section header size
  littleEndian(elf, 0, 2);
  littleEndian(elf, 0, 2);
  littleEndian(elf, 4, 4);        // PT_NOTE
  littleEndian(elf, 4, 4);        // PF_R
  littleEndian(elf, 120, 8);      // offset
  littleEndian(elf, 120, 8);      // vaddr
  littleEndian(elf, 120, 8);      // paddr
  littleEndian(elf, note.size(), 8);
  littleEndian(elf, note.size(), 8);
  littleEndian(elf, 4, 8);        // align
  return elf + note;
}

std::string testing::makeManifest(const std::string &kernelName,
                                  const std::vector<std::string> &argNames) {
  std::string text = "kernel " + kernelName + "\ngrid 4\nblock 256\nrows 6\nscratch_bytes 512\n"
                     "epoch_words 270\nstage 0 only 6\nwait 0 only only.flags\n";
  for (const std::string &name : argNames)
    text += "arg " + name + " input bf16 1 32 64\n";
  text += "scratch tmp scratch f32 1 128 512 0\n";
  return text;
}

TestKernel testing::makeKernelFor(const std::string &kernelName,
                                  const std::vector<std::string> &argNames,
                                  const std::vector<std::string> &sizedAtLaunch) {
  TestKernel k;
  k.name = kernelName;
  int64_t offset = 0;
  for (const std::string &name : argNames) {
    k.args.push_back({"r_" + name + ".coerce", offset, 8});
    offset += 8;
    if (std::find(sizedAtLaunch.begin(), sizedAtLaunch.end(), name) != sizedAtLaunch.end()) {
      k.args.push_back({"r_" + name + "_rows", offset, 8, "by_value"});
      offset += 8;
    }
  }
  k.args.push_back({"mono_scratch.coerce", offset, 8});
  k.args.push_back({"mono_epoch.coerce", offset + 8, 8});
  k.kernarg = offset + 16;
  return k;
}

runtime::BuildKey testing::sampleKey(int64_t rows) {
  runtime::BuildKey key;
  key.model = "dsv41";
  key.configDigest = "0123456789abcdef";
  key.launch = "attention_front";
  key.tp = 2;
  key.rows = rows;
  key.ratio = 0;
  key.grid = 256;
  key.block = 256;
  key.arch = "gfx950";
  key.features = "";
  key.backend = "clang";
  key.backendVersion = "clang+lld 22.1.0";
  key.options = "-O3";
  key.compilerId = std::string(runtime::compilerBuildId());
  return key;
}

runtime::CacheEntry testing::sampleEntry(const runtime::BuildKey &key) {
  std::vector<std::string> args = {"u", "w", "y"};
  std::string elf = makeAmdgpuElf("amdgcn-amd-amdhsa--gfx950",
                                  {makeKernelFor("mono_attention_front", args)});
  return {key.text(), makeManifest("mono_attention_front", args),
          std::vector<char>(elf.begin(), elf.end())};
}

std::string testing::stepManifest(const StepLaunch &l) {
  std::string text = "kernel " + l.kernel + "\ngrid 4\nblock 256\nrows " +
                     std::to_string(l.rows) + "\nscratch_bytes 512\nepoch_words 270\nstep_tag " +
                     std::to_string(l.stepTag) + "\nends_step " + (l.endsStep ? "1" : "0") +
                     "\nstage 0 only 4\nwait 0 only only.flags\n";
  for (const std::string &arg : l.args)
    text += "arg " + arg + "\n";
  return text + "scratch tmp scratch f32 1 128 512 0\n" + l.tail;
}

std::string testing::stepCodeObject(const StepLaunch &l) {
  std::vector<std::string> names, sizedAtLaunch;
  for (const std::string &arg : l.args) {
    names.push_back(arg.substr(0, arg.find(' ')));
    // A count given at launch (rows or columns) is an 8-byte argument after it.
    if (l.tail.find("rows_at_launch " + names.back() + "\n") != std::string::npos ||
        l.tail.find("cols_at_launch " + names.back() + "\n") != std::string::npos)
      sizedAtLaunch.push_back(names.back());
  }
  return makeAmdgpuElf("amdgcn-amd-amdhsa--gfx950",
                       {makeKernelFor(l.kernel, names, sizedAtLaunch)});
}

namespace {
std::string rowRegion(const std::string &name, const std::string &kind, int64_t rows) {
  return name + " " + kind + " bf16 " + std::to_string(rows) + " 32 " + std::to_string(64 * rows);
}
} // namespace

testing::StepLaunch testing::sampleK1(int64_t rows) {
  return {"mono_k1",
          rows,
          1,
          false,
          {rowRegion("x", "input", rows), "w1 weight bf16 1 32 64", "cache output byte 4 32 128",
           rowRegion("q", "output", rows), rowRegion("h", "output", rows)},
          "result cache\nrows_at_launch cache\n"};
}

testing::StepLaunch testing::sampleK2(int64_t rows) {
  return {"mono_k2",
          rows,
          2,
          true,
          {rowRegion("q", "input", rows), "cache input byte 4 32 128", rowRegion("x", "input", rows),
           "w2 weight bf16 1 32 64", rowRegion("y", "output", rows),
           rowRegion("t", "output", rows)},
          "from q mono_k1 q\nfrom cache mono_k1 cache\nresult y\nrows_at_launch cache\n"};
}

runtime::CacheEntry testing::sampleStepEntry(const StepLaunch &launch) {
  runtime::BuildKey key = sampleKey(launch.rows);
  key.launch = launch.kernel.substr(std::string("mono_").size());
  key.grid = 4;
  const std::string elf = stepCodeObject(launch);
  return {key.text(), stepManifest(launch), std::vector<char>(elf.begin(), elf.end())};
}

testing::FakeHipLog::FakeHipLog(const char *path, int units, int perUnit)
    : library(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
  if (library)
    get<void (*)(int, int, int)>("fake_hip_configure")(units, perUnit, 1);
}

template <typename F> F testing::FakeHipLog::get(const char *name) const {
  return reinterpret_cast<F>(dlsym(library, name));
}

int testing::FakeHipLog::launches() const { return get<int (*)()>("fake_hip_launches")(); }

std::string testing::FakeHipLog::kernel(int launch) const {
  return get<const char *(*)(int)>("fake_hip_launch_kernel")(launch);
}

void *testing::FakeHipLog::pointerAt(int launch, int64_t offset) const {
  size_t size = 0;
  const unsigned char *kernarg =
      get<const unsigned char *(*)(int, size_t *)>("fake_hip_launch_kernarg")(launch, &size);
  void *value = nullptr;
  if (kernarg && offset >= 0 && size_t(offset) + sizeof value <= size)
    std::memcpy(&value, kernarg + offset, sizeof value);
  return value;
}
