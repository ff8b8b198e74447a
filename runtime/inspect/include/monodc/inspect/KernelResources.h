//===- KernelResources.h - resource notes of an AMDGPU code object -*- C++ -*-===//
#ifndef MONODC_INSPECT_KERNELRESOURCES_H
#define MONODC_INSPECT_KERNELRESOURCES_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace monodc::inspect {

/// What the AMDGPU metadata note says about one kernel.
struct KernelResources {
  std::string name;
  int64_t vgprs = 0, agprs = 0, sgprs = 0;
  int64_t vgprSpills = 0, sgprSpills = 0;
  int64_t ldsBytes = 0;     ///< group segment
  int64_t scratchBytes = 0; ///< private segment per work-item
  int64_t wavefrontSize = 0;
  int64_t kernargBytes = 0;
};

struct CodeObjectInfo {
  std::string target;  ///< e.g. amdgcn-amd-amdhsa--gfx950
  std::vector<KernelResources> kernels;
};

/// Reads the ELF header and the NT_AMDGPU_METADATA note of a code object.
llvm::Expected<CodeObjectInfo> inspectCodeObject(llvm::StringRef bytes);

} // namespace monodc::inspect

#endif
