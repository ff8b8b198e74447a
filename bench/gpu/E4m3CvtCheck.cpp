// Here (no GPU), wherever CUDA's headers are: does arch_cuda.h's mono_e4m3_bits_cvt keep
// every e4m3 code of the CPU reference? Every f32 bit pattern through the
// reference's encoder against CUDA's own host emulation of
// cvt.rn.satfinite.e4m3x2.f32 (cuda_fp8.hpp, which the instruction
// matches), with NaN given the library's code (sign | 0x7F) as the arch layer
// does; every e4m3 code through the reference's decoder against the
// emulation of cvt.rn.f16x2.e4m3x2 (NaN against NaN). About 20 s.
//   g++ -O2 -std=c++20 -I runtime/formats/include -I $CUDA_HOME/include \
//     bench/gpu/E4m3CvtCheck.cpp runtime/formats/NumberFormats.cpp -o /tmp/e4m3_cvt_check
#include "monodc/formats/NumberFormats.h"

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

int main() {
  uint64_t encodeMismatches = 0;
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; ++u) {
    const uint32_t bits = static_cast<uint32_t>(u);
    float v;
    std::memcpy(&v, &bits, 4);
    const uint8_t reference = monodc::formats::e4m3Bits(v);
    const uint8_t converted = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
    const uint8_t patched = v != v ? static_cast<uint8_t>(((bits >> 31) << 7) | 0x7Fu) : converted;
    if (reference != patched && encodeMismatches++ < 10)
      std::printf("encode %08x: reference %02x, cvt %02x\n", bits, reference, patched);
  }
  unsigned decodeMismatches = 0;
  for (int code = 0; code < 256; ++code) {
    const float converted =
        __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(code), __NV_E4M3)));
    const float reference = monodc::formats::e4m3Value(static_cast<uint8_t>(code));
    const bool same = (std::isnan(converted) && std::isnan(reference)) ||
                      std::memcmp(&converted, &reference, 4) == 0;
    if (!same && decodeMismatches++ < 10)
      std::printf("decode %02x: reference %g, cvt %g\n", code, reference, converted);
  }
  std::printf("e4m3 by cvt: %llu encode mismatches over 2^32 floats, %u decode mismatches over 256 "
              "codes\n",
              static_cast<unsigned long long>(encodeMismatches), decodeMismatches);
  return encodeMismatches || decodeMismatches ? 1 : 0;
}
