// Values to and from a region's storage bytes by the format its manifest
// names (f32, bf16, e4m3, e8m0; a byte region's bytes as whole numbers), as
// the simulator's launch memory encodes them. No CUDA: the host parts of the
// GPU harnesses use it too.
#ifndef MONODC_BENCH_GPU_REGIONCODEC_H
#define MONODC_BENCH_GPU_REGIONCODEC_H

#include "monodc/formats/NumberFormats.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpu {

/// Values in a bf16, f32, i32 or i64 region (bf16 rounds to nearest even;
/// i32 and i64 hold whole numbers).
inline std::vector<uint8_t> encodeRegion(const std::string &format,
                                         const std::vector<float> &values) {
  std::vector<uint8_t> bytes;
  if (format == "f32") {
    bytes.resize(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
  } else if (format == "bf16") {
    bytes.resize(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t b = monodc::formats::bf16Bits(values[i]);
      std::memcpy(bytes.data() + 2 * i, &b, 2);
    }
  } else if (format == "i32" || format == "i64") {
    // Index inputs: whole numbers, as a serving engine's int32/int64 tensors.
    const size_t unit = format == "i32" ? 4 : 8;
    bytes.resize(values.size() * unit);
    for (size_t i = 0; i < values.size(); ++i) {
      const int64_t v = static_cast<int64_t>(values[i]);
      const int32_t narrow = static_cast<int32_t>(v);
      std::memcpy(bytes.data() + unit * i, unit == 4 ? static_cast<const void *>(&narrow)
                                                     : static_cast<const void *>(&v),
                  unit);
    }
  } else {
    throw std::invalid_argument("values cannot be encoded as " + format);
  }
  return bytes;
}

inline std::vector<float> decodeRegion(const std::string &format, const std::string &bytes) {
  namespace fmts = monodc::formats;
  std::vector<float> v;
  if (format == "f32") {
    v.resize(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
  } else if (format == "bf16") {
    for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
      uint16_t b;
      std::memcpy(&b, bytes.data() + i, 2);
      v.push_back(fmts::bf16Value(b));
    }
  } else if (format == "e4m3") {
    for (unsigned char c : bytes)
      v.push_back(fmts::e4m3Value(c));
  } else if (format == "e8m0") {
    for (unsigned char c : bytes)
      v.push_back(fmts::e8m0Value(c));
  } else if (format == "i32") {
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      int32_t w;
      std::memcpy(&w, bytes.data() + i, 4);
      v.push_back(float(w));
    }
  } else if (format == "i64") {
    for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
      int64_t w;
      std::memcpy(&w, bytes.data() + i, 8);
      v.push_back(float(w));
    }
  } else {
    for (unsigned char c : bytes)
      v.push_back(float(c));
  }
  return v;
}

} // namespace gpu

#endif
