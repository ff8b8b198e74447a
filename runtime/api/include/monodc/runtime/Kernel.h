//===- Kernel.h - a built launch, ready to load -----------------*- C++ -*-===//
#ifndef MONODC_RUNTIME_KERNEL_H
#define MONODC_RUNTIME_KERNEL_H

#include "monodc/runtime/ArgumentLayout.h"
#include "monodc/runtime/BuildKey.h"
#include "monodc/runtime/CacheEntry.h"
#include "monodc/runtime/CodeObject.h"
#include "monodc/runtime/LaunchInterface.h"

#include <memory>
#include <optional>

namespace monodc {

/// What a session returns: the code object, its kernel symbol, its resources
/// (AMD targets: from the metadata note) and its argument layout.
struct Kernel {
  runtime::BuildKey key;
  std::shared_ptr<const runtime::CacheEntry> entry; ///< shared with the cache
  runtime::LaunchInterface interface;
  std::optional<runtime::KernelInfo> resources; ///< none for cubins (nvrtc)
  runtime::ArgumentLayout arguments;

  const std::vector<char> &codeObject() const { return entry->codeObject; }
  const std::string &symbol() const { return interface.kernelName; }

  /// Reads a cache entry: its launch interface, and for an AMD code object
  /// its kernel's metadata, which must agree with the interface.
  static runtime::Result<Kernel> fromEntry(runtime::BuildKey key,
                                           std::shared_ptr<const runtime::CacheEntry> entry);
};

} // namespace monodc

#endif // MONODC_RUNTIME_KERNEL_H
