//===- FuzzCacheEntry.cpp - the cache-entry reader -------------------------===//
//
// decodeCacheEntry() and peekCacheEntryKey() on any bytes; an entry that
// decodes is re-encoded byte for byte, and its parts are read the way a
// runtime-only process loads an entry: the code object's notes, the
// manifest, and the argument layout from both. The SHA-256 would stop almost
// every mutation at "checksum mismatch", so each input is also tried with its
// checksum re-stamped: the header's sizes and the parts behind them get fuzzed.
//
//===----------------------------------------------------------------------===//
#include "FuzzCheck.h"

#include "monodc/runtime/ArgumentLayout.h"
#include "monodc/runtime/BuildKey.h"
#include "monodc/runtime/CacheEntry.h"
#include "monodc/runtime/CodeObject.h"
#include "monodc/runtime/LaunchInterface.h"
#include "monodc/runtime/Sha256.h"

#include <cstring>
#include <string>

using namespace monodc::runtime;

namespace {

void readEntry(std::string_view bytes) {
  size_t size = bytes.size();
  // A listing reads a prefix of the file: every cut of the first 4 KiB.
  for (size_t cut : {size_t(0), size_t(63), size_t(64), size_t(100), size_t(4096), size})
    (void)peekCacheEntryKey(bytes.substr(0, std::min(cut, size)), size);
  Result<CacheEntry> entry = decodeCacheEntry(bytes);
  if (!entry)
    return;
  std::vector<char> encoded = encodeCacheEntry(*entry);
  MONODC_FUZZ_CHECK(std::string_view(encoded.data(), encoded.size()) == bytes);
  Result<std::string> key = peekCacheEntryKey(bytes, size);
  MONODC_FUZZ_CHECK(key && *key == entry->keyText);

  (void)BuildKey::parse(entry->keyText);
  Result<LaunchInterface> interface = LaunchInterface::parse(entry->metadata);
  Result<CodeObjectInfo> info = readCodeObject(
      std::string_view(entry->codeObject.data(), entry->codeObject.size()));
  if (interface && info) {
    const KernelInfo *notes = info->kernel(interface->kernelName);
    (void)layoutArguments(*interface, notes);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes = fuzzBytes(data, size);
  readEntry(bytes);
  if (size >= kCacheEntryHeaderBytes) {
    std::string stamped(bytes);
    Sha256::Digest digest = Sha256()
                                .update(std::string_view(stamped).substr(0, 32))
                                .update(std::string_view(stamped).substr(kCacheEntryHeaderBytes))
                                .finish();
    std::memcpy(stamped.data() + 32, digest.data(), digest.size());
    readEntry(stamped);
  }
  return 0;
}
