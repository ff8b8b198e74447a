//===- Sha256.h - SHA-256 for keys and cache checksums ----------*- C++ -*-===//
#ifndef MONODC_RUNTIME_SHA256_H
#define MONODC_RUNTIME_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace monodc::runtime {

/// FIPS 180-4 SHA-256, incremental. The runtime hashes build keys to file
/// names and checks cache entries with it; no LLVM or OpenSSL needed.
class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  Sha256 &update(const void *data, size_t size);
  Sha256 &update(std::string_view text) { return update(text.data(), text.size()); }
  /// The digest of everything given; the object is spent afterwards.
  Digest finish();

  static Digest digest(std::string_view text) { return Sha256().update(text).finish(); }
  static std::string hex(const Digest &digest);

private:
  void compress(const uint8_t *block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t totalBytes_ = 0;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_SHA256_H
