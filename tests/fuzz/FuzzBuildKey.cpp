//===- FuzzBuildKey.cpp - the build-key text parser ------------------------===//
//
// BuildKey::parse() refuses anything text() would not print, so a key it
// accepts prints back as the very input, and hashes to its file name.
//
//===----------------------------------------------------------------------===//
#include "FuzzCheck.h"

#include "monodc/runtime/BuildKey.h"

using namespace monodc::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text = fuzzBytes(data, size);
  Result<BuildKey> key = BuildKey::parse(text);
  if (key) {
    MONODC_FUZZ_CHECK(key->text() == text);
    Result<BuildKey> again = BuildKey::parse(key->text());
    MONODC_FUZZ_CHECK(again && *again == *key);
    MONODC_FUZZ_CHECK(key->fileName() == cacheFileNameForKeyText(text));
    for (std::string_view name : BuildKey::fieldNames()) {
      BuildKey copy = *key;
      MONODC_FUZZ_CHECK(copy.setField(name, key->field(name)).ok());
      MONODC_FUZZ_CHECK(copy == *key);
    }
  } else {
    MONODC_FUZZ_CHECK(!key.message().empty());
  }
  // One value's encoding on its own: decode(encode(x)) == x, and a value
  // that decodes encodes back to itself only if it was canonical.
  Result<std::string> value = BuildKey::decodeValue(text);
  if (value)
    MONODC_FUZZ_CHECK(*BuildKey::decodeValue(BuildKey::encodeValue(*value)) == *value);
  std::string encoded = BuildKey::encodeValue(text);
  Result<std::string> decoded = BuildKey::decodeValue(encoded);
  MONODC_FUZZ_CHECK(decoded && *decoded == text);
  return 0;
}
