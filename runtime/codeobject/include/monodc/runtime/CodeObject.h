//===- CodeObject.h - kernels of an AMDGPU code object, without LLVM -*- C++ -*-===//
//
// Reads the ELF header and the NT_AMDGPU_METADATA note (MessagePack) of an
// AMDGPU code object: per kernel its registers, LDS, scratch, wavefront size
// and kernel-argument layout. A serving process needs this to launch, and
// must not carry LLVM for it.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_CODEOBJECT_H
#define MONODC_RUNTIME_CODEOBJECT_H

#include "monodc/runtime/Result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace monodc::runtime {

/// One kernel argument as the metadata note describes it.
struct KernelArgument {
  std::string name;        ///< as the source named it (clang may add ".coerce")
  int64_t offset = 0;      ///< in the kernarg segment
  int64_t size = 0;
  std::string valueKind;   ///< global_buffer, by_value, hidden_* ...
  std::string addressSpace;
  std::string access;      ///< read_only, write_only, or empty
};

/// What the metadata note says about one kernel.
struct KernelInfo {
  std::string name;
  std::string symbol;      ///< the kernel descriptor, name + ".kd"
  int64_t vgprs = 0, agprs = 0, sgprs = 0;
  int64_t vgprSpills = 0, sgprSpills = 0;
  int64_t ldsBytes = 0;     ///< group segment
  int64_t scratchBytes = 0; ///< private segment per work-item
  int64_t wavefrontSize = 0;
  int64_t kernargBytes = 0;
  int64_t kernargAlign = 0;
  int64_t maxFlatWorkgroupSize = 0;
  bool usesDynamicStack = false;
  std::vector<KernelArgument> arguments;
};

struct CodeObjectInfo {
  std::string target;       ///< e.g. amdgcn-amd-amdhsa--gfx950
  uint32_t elfFlags = 0;    ///< e_flags (processor and features)
  std::vector<int64_t> metadataVersion; ///< amdhsa.version
  std::vector<KernelInfo> kernels;
  /// Bytes of machine code: the executable sections' sizes summed (0 when
  /// the file has no section headers). A fused launch's CTAs run several
  /// stages' code at once, so this is what competes for the instruction
  /// cache.
  int64_t codeBytes = 0;

  const KernelInfo *kernel(std::string_view name) const;
};

/// Reads a 64-bit little-endian AMDGPU ELF (a loadable code object or a
/// relocatable object) and its metadata note. Every offset is bounds-checked:
/// damaged input is an error, never a crash.
Result<CodeObjectInfo> readCodeObject(std::string_view bytes);

/// True when the bytes start like an ELF file.
bool looksLikeElf(std::string_view bytes);

/// A persistent launch must not touch scratch memory: no private segment, no
/// spills, no dynamic stack. The error names the kernel and the numbers.
Status checkPersistentKernel(const KernelInfo &kernel);

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_CODEOBJECT_H
