//===- Kernel.cpp - a built launch, ready to load -------------------------===//
#include "monodc/runtime/Kernel.h"

using namespace monodc;
using namespace monodc::runtime;

Result<Kernel> Kernel::fromEntry(BuildKey key, std::shared_ptr<const CacheEntry> entry) {
  Kernel kernel;
  kernel.key = std::move(key);
  kernel.entry = std::move(entry);
  Result<LaunchInterface> interface = LaunchInterface::parse(kernel.entry->metadata);
  if (!interface)
    return makeError("the entry for key " + kernel.key.text() + ": " + interface.message());
  kernel.interface = std::move(*interface);
  std::string_view bytes(kernel.entry->codeObject.data(), kernel.entry->codeObject.size());
  if (kernel.key.arch.rfind("gfx", 0) == 0) {
    Result<CodeObjectInfo> info = readCodeObject(bytes);
    if (!info)
      return makeError("the code object for key " + kernel.key.text() + ": " + info.message());
    const KernelInfo *resources = info->kernel(kernel.interface.kernelName);
    if (!resources)
      return makeError("the code object for key " + kernel.key.text() + " has no kernel " +
                       kernel.interface.kernelName);
    kernel.resources = *resources;
  }
  Result<ArgumentLayout> layout =
      layoutArguments(kernel.interface, kernel.resources ? &*kernel.resources : nullptr);
  if (!layout)
    return layout.error();
  kernel.arguments = std::move(*layout);
  return kernel;
}
