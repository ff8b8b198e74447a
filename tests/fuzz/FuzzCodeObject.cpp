//===- FuzzCodeObject.cpp - the AMDGPU ELF and metadata-note reader -------===//
//
// readCodeObject() bounds-checks every offset: damaged input is an error,
// never a crash. What it accepts is then used as the launcher uses it.
//
//===----------------------------------------------------------------------===//
#include "FuzzCheck.h"

#include "monodc/runtime/CodeObject.h"

using namespace monodc::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes = fuzzBytes(data, size);
  (void)looksLikeElf(bytes);
  Result<CodeObjectInfo> info = readCodeObject(bytes);
  if (!info) {
    MONODC_FUZZ_CHECK(!info.message().empty());
    return 0;
  }
  MONODC_FUZZ_CHECK(looksLikeElf(bytes));
  MONODC_FUZZ_CHECK(info->codeBytes >= 0);
  for (const KernelInfo &kernel : info->kernels) {
    MONODC_FUZZ_CHECK(info->kernel(kernel.name) != nullptr);
    Status persistent = checkPersistentKernel(kernel);
    (void)persistent;
  }
  return 0;
}
