//===- CacheDirectory.h - what a cache directory holds ----------*- C++ -*-===//
//
// For `monodc cache ls | verify | clear` and for runtime-only lookups, which
// find entries by the key fields they know.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_CACHEDIRECTORY_H
#define MONODC_RUNTIME_CACHEDIRECTORY_H

#include "monodc/runtime/Result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace monodc::runtime {

struct CacheFile {
  std::string fileName;
  uint64_t bytes = 0;
  std::string keyText; ///< empty when the header cannot be read
  /// Empty for a good entry; else why it would be refused.
  std::string problem;
};

/// Every `*.mco` file of `directory`, sorted by name. With `verify`, each file
/// is read whole and its checksum checked; else only its header and key are
/// read (the name must still be the hash of the key). A missing directory is
/// an empty cache.
Result<std::vector<CacheFile>> listCacheFiles(const std::string &directory, bool verify);

struct ClearedFiles {
  uint64_t files = 0;
  uint64_t bytes = 0;
};

/// Removes every entry and every leftover temporary file of `directory`, and
/// the build lock files no process holds (not counted in the result); other
/// files are left alone.
Result<ClearedFiles> clearCacheFiles(const std::string &directory);

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_CACHEDIRECTORY_H
