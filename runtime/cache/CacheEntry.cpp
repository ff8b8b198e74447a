//===- CacheEntry.cpp - the file form of a cache entry ---------------------===//
#include "monodc/runtime/CacheEntry.h"

#include "monodc/runtime/Sha256.h"

#include <cstdint>
#include <cstring>

using namespace monodc::runtime;

namespace {

constexpr char kMagic[8] = {'M', 'O', 'N', 'O', 'D', 'C', 'C', 'O'};
constexpr uint32_t kFormatVersion = 1;

// Header layout (little endian):
//   0  magic[8]   8 version u32   12 key bytes u32   16 metadata bytes u32
//  20  zero u32 (refused otherwise)   24 code object bytes u64   32 SHA-256[32]
// The checksum covers bytes 0..31, then the key, metadata and code object.
struct Header {
  uint32_t version = 0, keyBytes = 0, metadataBytes = 0;
  uint64_t codeObjectBytes = 0;

  uint64_t totalBytes() const {
    return kCacheEntryHeaderBytes + uint64_t(keyBytes) + metadataBytes + codeObjectBytes;
  }
};

template <typename T> void put(char *at, T value) {
  for (size_t i = 0; i < sizeof(T); ++i)
    at[i] = static_cast<char>(value >> (8 * i));
}

template <typename T> T get(const char *at) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    value |= T(static_cast<unsigned char>(at[i])) << (8 * i);
  return value;
}

Result<Header> readHeader(std::string_view bytes, size_t fileBytes) {
  if (fileBytes == 0)
    return makeError("empty file (zero bytes)");
  if (bytes.size() < kCacheEntryHeaderBytes)
    return makeError("truncated: " + std::to_string(fileBytes) + " bytes, shorter than the " +
                     std::to_string(kCacheEntryHeaderBytes) + "-byte header");
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return makeError("not a monodc cache entry (bad magic)");
  Header header;
  header.version = get<uint32_t>(bytes.data() + 8);
  header.keyBytes = get<uint32_t>(bytes.data() + 12);
  header.metadataBytes = get<uint32_t>(bytes.data() + 16);
  header.codeObjectBytes = get<uint64_t>(bytes.data() + 24);
  if (header.version != kFormatVersion)
    return makeError("entry format version " + std::to_string(header.version) +
                     ", this library reads version " + std::to_string(kFormatVersion));
  // Written as zero; anything else is not an entry this library wrote (found
  // by fuzzing: it decoded, and re-encoded to other bytes).
  if (uint32_t reserved = get<uint32_t>(bytes.data() + 20); reserved != 0)
    return makeError("bad header: reserved field is " + std::to_string(reserved) +
                     ", not 0");
  if (fileBytes < header.totalBytes())
    return makeError("truncated: " + std::to_string(fileBytes) + " bytes, the header says " +
                     std::to_string(header.totalBytes()));
  if (fileBytes > header.totalBytes())
    return makeError("trailing bytes: " + std::to_string(fileBytes) +
                     " bytes, the header says " + std::to_string(header.totalBytes()));
  return header;
}

Sha256::Digest checksum(std::string_view headerStart, std::string_view key,
                        std::string_view metadata, std::string_view codeObject) {
  return Sha256()
      .update(headerStart.substr(0, 32))
      .update(key)
      .update(metadata)
      .update(codeObject)
      .finish();
}

} // namespace

std::vector<char> monodc::runtime::encodeCacheEntry(const CacheEntry &entry) {
  std::vector<char> bytes(kCacheEntryHeaderBytes + entry.keyText.size() +
                          entry.metadata.size() + entry.codeObject.size());
  char *header = bytes.data();
  std::memcpy(header, kMagic, sizeof(kMagic));
  put<uint32_t>(header + 8, kFormatVersion);
  put<uint32_t>(header + 12, static_cast<uint32_t>(entry.keyText.size()));
  put<uint32_t>(header + 16, static_cast<uint32_t>(entry.metadata.size()));
  put<uint32_t>(header + 20, 0);
  put<uint64_t>(header + 24, entry.codeObject.size());
  char *body = header + kCacheEntryHeaderBytes;
  std::memcpy(body, entry.keyText.data(), entry.keyText.size());
  std::memcpy(body + entry.keyText.size(), entry.metadata.data(), entry.metadata.size());
  std::memcpy(body + entry.keyText.size() + entry.metadata.size(), entry.codeObject.data(),
              entry.codeObject.size());
  Sha256::Digest digest =
      checksum(std::string_view(header, 32), entry.keyText, entry.metadata,
               std::string_view(entry.codeObject.data(), entry.codeObject.size()));
  std::memcpy(header + 32, digest.data(), digest.size());
  return bytes;
}

Result<CacheEntry> monodc::runtime::decodeCacheEntry(std::string_view bytes) {
  Result<Header> header = readHeader(bytes, bytes.size());
  if (!header)
    return header.error();
  std::string_view body = bytes.substr(kCacheEntryHeaderBytes);
  std::string_view key = body.substr(0, header->keyBytes);
  std::string_view metadata = body.substr(header->keyBytes, header->metadataBytes);
  std::string_view codeObject = body.substr(header->keyBytes + header->metadataBytes);
  Sha256::Digest digest = checksum(bytes, key, metadata, codeObject);
  if (std::memcmp(digest.data(), bytes.data() + 32, digest.size()) != 0)
    return makeError("checksum mismatch (the entry is damaged)");
  return CacheEntry{std::string(key), std::string(metadata),
                    std::vector<char>(codeObject.begin(), codeObject.end())};
}

Result<std::string> monodc::runtime::peekCacheEntryKey(std::string_view prefix,
                                                       size_t fileBytes) {
  Result<Header> header = readHeader(prefix, fileBytes);
  if (!header)
    return header.error();
  if (prefix.size() < kCacheEntryHeaderBytes + header->keyBytes)
    return makeError("the key text is cut short");
  return std::string(prefix.substr(kCacheEntryHeaderBytes, header->keyBytes));
}
