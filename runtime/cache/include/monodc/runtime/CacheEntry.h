//===- CacheEntry.h - one cached code object and its file form --*- C++ -*-===//
#ifndef MONODC_RUNTIME_CACHEENTRY_H
#define MONODC_RUNTIME_CACHEENTRY_H

#include "monodc/runtime/Result.h"

#include <string>
#include <string_view>
#include <vector>

namespace monodc::runtime {

/// What the cache keeps per build key.
struct CacheEntry {
  std::string keyText;          ///< BuildKey::text() of the key it was built for
  std::string metadata;         ///< the kernel manifest (see LaunchInterface.h)
  std::vector<char> codeObject; ///< the loadable code object
};

/// The file form: a 64-byte header (magic, format version, section sizes and a
/// SHA-256 over the header and all sections), then the key text, the metadata
/// and the code object. Nothing follows the code object.
std::vector<char> encodeCacheEntry(const CacheEntry &entry);

/// Bytes of the header; a shorter file is truncated.
constexpr size_t kCacheEntryHeaderBytes = 64;

/// The reverse of encodeCacheEntry(). The error says what is wrong: not an
/// entry, another format version, truncated, trailing bytes, checksum mismatch.
Result<CacheEntry> decodeCacheEntry(std::string_view bytes);

/// The key text of an entry from its first bytes (the header and the key),
/// without the checksum check: for listings. `fileBytes` is the file's size.
Result<std::string> peekCacheEntryKey(std::string_view prefix, size_t fileBytes);

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_CACHEENTRY_H
