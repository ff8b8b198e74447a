//===- BuildKey.h - everything that changes a code object -------*- C++ -*-===//
//
// A build key is one record of every value that changes the code of a launch.
// It prints as canonical text (one line, fixed field order), parses back, and
// hashes (SHA-256 of the text) to the cache's file name. The rank is never in
// it: the rank is a kernel argument, so all ranks share one code object.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_BUILDKEY_H
#define MONODC_RUNTIME_BUILDKEY_H

#include "monodc/runtime/Result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace monodc::runtime {

struct BuildKey {
  std::string model;          ///< model config name, e.g. dsv41
  std::string configDigest;   ///< digest of the config's values
  std::string launch;         ///< launch kind, e.g. attention_front
  int64_t tp = 0;             ///< tensor parallelism
  int64_t rows = 0;           ///< step width (tokens)
  int64_t ratio = 0;          ///< the layer's compress ratio (0, 1, 2 for DSV41)
  int64_t grid = 0;           ///< CTAs of the persistent launch
  int64_t block = 0;          ///< threads per CTA
  std::string arch;           ///< gfx950, gfx942, gfx90a, sm_90
  std::string features;       ///< target features, e.g. "xnack-"; empty: the default
  std::string backend;        ///< clang, hiprtc, nvrtc
  std::string backendVersion; ///< the backend's own version
  std::string options;        ///< compile options given to the backend
  std::string compilerId;     ///< build id of the compiler sources (see BuildId.h)

  /// Field names in canonical order, as they appear in the text.
  static const std::vector<std::string_view> &fieldNames();
  /// A field's value by name (integers in decimal); empty for an unknown name.
  std::string field(std::string_view name) const;
  /// Sets a field by name; integers must be canonical decimal.
  Status setField(std::string_view name, std::string_view value);

  /// `monodc-key/1 model=dsv41 config=... compiler=...`: every field, in order,
  /// values percent-encoded outside [A-Za-z0-9._+,:/@-].
  std::string text() const;
  /// The reverse of text(); refuses anything text() would not print.
  static Result<BuildKey> parse(std::string_view text);

  /// The encoding of one value in text(), and its reverse.
  static std::string encodeValue(std::string_view value);
  static Result<std::string> decodeValue(std::string_view text);

  /// SHA-256 of text(), 64 hex digits.
  std::string hash() const;
  /// The cache entry's file name: the first 32 hex digits of hash(), ".mco".
  std::string fileName() const;

  bool operator==(const BuildKey &other) const = default;
};

/// The file name of a key given as its text (same as BuildKey::fileName()).
std::string cacheFileNameForKeyText(std::string_view keyText);

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_BUILDKEY_H
