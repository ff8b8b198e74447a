#include "monodc/formats/NumberFormats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace monodc::formats {
namespace {

constexpr uint32_t kF32SignMask = 0x8000'0000u;

uint32_t bitsOf(float v) { return std::bit_cast<uint32_t>(v); }
float floatOf(uint32_t bits) { return std::bit_cast<float>(bits); }

// ceil(log2 t) for a finite t > 0, exact: t = m * 2^e with m in [0.5, 1), so
// log2 t lies in (e - 1, e], and equals e - 1 only when m is exactly 0.5.
// frexp is exact on denormals too, which a look at the exponent field is not.
int ceilLog2(float t) {
  int exponent = 0;
  const float mantissa = std::frexp(t, &exponent);
  return mantissa == 0.5f ? exponent - 1 : exponent;
}

}  // namespace

// ---------------------------------------------------------------- bf16

uint16_t bf16Bits(float v) {
  const uint32_t bits = bitsOf(v);
  if (std::isnan(v)) return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7FC0u);
  // Adding 0x7FFF plus the kept LSB rounds the dropped 16 bits to nearest even;
  // a carry moves into the exponent, which is how RNE overflows to inf.
  const uint32_t roundingBias = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

float bf16Value(uint16_t bits) { return floatOf(static_cast<uint32_t>(bits) << 16); }

float roundToBf16(float v) { return bf16Value(bf16Bits(v)); }

// ---------------------------------------------------------------- e4m3

uint8_t e4m3Bits(float v) {
  const uint8_t sign = (bitsOf(v) & kF32SignMask) ? 0x80 : 0x00;
  if (std::isnan(v)) return sign | 0x7F;
  const float magnitude = std::fabs(v);
  if (magnitude >= kE4m3Max) return sign | 0x7E;  // saturate (inf included)

  constexpr float kMinNormal = 0x1p-6f;
  if (magnitude < kMinNormal) {
    // Subnormal range: a multiple of 2^-9. The scaled value is exact and below
    // 8, and nearbyint rounds it to nearest even; 8 itself is code 0x08, the
    // smallest normal (exponent field 1, mantissa 0), so the code is the count.
    const float units = std::nearbyint(magnitude * 0x1p9f);
    return sign | static_cast<uint8_t>(units);
  }
  // Normal range [2^-6, 448): keep 3 of the 23 mantissa bits, round to nearest
  // even at bit 20 (a carry bumps the exponent), then rebias 127 -> 7.
  const uint32_t bits = bitsOf(magnitude);
  const uint32_t rounded = (bits + 0x7FFFFu + ((bits >> 20) & 1u)) >> 20;
  constexpr uint32_t kRebias = (127u - 7u) << 3;
  return sign | static_cast<uint8_t>(rounded - kRebias);
}

float e4m3Value(uint8_t bits) {
  if ((bits & 0x7F) == 0x7F) return std::numeric_limits<float>::quiet_NaN();
  const int exponentField = (bits >> 3) & 0xF;
  const int mantissa = bits & 0x7;
  const float magnitude = exponentField == 0
                              ? std::ldexp(static_cast<float>(mantissa), -9)
                              : std::ldexp(static_cast<float>(8 + mantissa), exponentField - 10);
  return (bits & 0x80) ? -magnitude : magnitude;
}

float roundToE4m3(float v) { return e4m3Value(e4m3Bits(v)); }

// ---------------------------------------------------------------- e2m1

uint8_t e2m1Bits(float v) {
  if (std::isnan(v)) return 0;
  const uint8_t sign = (bitsOf(v) & kF32SignMask) ? 0x8 : 0x0;
  const float a = std::fabs(v);
  // Midpoints between neighbouring magnitudes 0 .5 1 1.5 2 3 4 6; "<=" sends a
  // tie down and "<" sends it up, each time to the even code of the pair.
  uint8_t magnitudeCode;
  if (a <= 0.25f) magnitudeCode = 0;
  else if (a < 0.75f) magnitudeCode = 1;
  else if (a <= 1.25f) magnitudeCode = 2;
  else if (a < 1.75f) magnitudeCode = 3;
  else if (a <= 2.5f) magnitudeCode = 4;
  else if (a < 3.5f) magnitudeCode = 5;
  else if (a <= 5.0f) magnitudeCode = 6;
  else magnitudeCode = 7;  // saturates: everything above 5 is 6
  return sign | magnitudeCode;
}

float e2m1Value(uint8_t code) {
  static constexpr float kMagnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float magnitude = kMagnitudes[code & 0x7];
  return (code & 0x8) ? -magnitude : magnitude;
}

float roundToE2m1(float v) { return e2m1Value(e2m1Bits(v)); }

// ---------------------------------------------------------------- E8M0

float e8m0Value(uint8_t code) {
  if (code == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  if (code == 0) return floatOf(0x0040'0000u);  // 2^-127, an f32 denormal
  return floatOf(static_cast<uint32_t>(code) << 23);
}

uint8_t e8m0Bits(float v) {
  if (std::isnan(v)) return 0xFF;
  const float magnitude = std::fabs(v);
  if (std::isinf(magnitude)) return 254;
  if (magnitude == 0.0f) return 0;
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude in [2^(e-1), 2^e)
  return static_cast<uint8_t>(std::clamp(exponent - 1 + 127, 0, 254));
}

// ---------------------------------------------------------------- MXFP8
//
// What the public sources do (read for facts; nothing copied):
// - vLLM's ROCm mxfp8_e4m3_quantize (a fused Triton kernel for 2-D rows, a
//   torch fallback otherwise) floors the group amax at FLT_MIN, divides it by
//   448 in f32, takes ceil(log2(.)) + 127, clamps to [0, 254], and divides the
//   values by 2^(code - 127) before the e4m3 cast. An older upstream torch path
//   used floor(log2(amax)) with no division by 448; DSV41 follows the ceil rule.
// - The mono FlyDSL kernels in vllm/models/deepseek_v41/amd/mono reproduce it
//   with a correctly rounded f32 division (a reciprocal multiply plus an FMA
//   correction), the ceil taken from the quotient's bits, and a multiply by
//   2^(127 - code) followed by a clamp to +-448 and a hardware RNE cast.
// - The routed experts' path (AITER's fused MX quant) floors amax at 1e-10,
//   multiplies by RN(1/448) instead of dividing, and clamps the code to
//   [1, 254]. For every normal f32 amax the multiply and the division give the
//   same ceil(log2), checked over all of them, so one formula serves both.
// - NaN: the Triton max-reduction does not propagate NaN (its default), so a
//   NaN element leaves the group amax to the other elements, and the NaN itself
//   stays NaN through the scaling and the cast. The torch fallback would turn
//   the whole group into NaN instead; we follow the Triton (ROCm) path.
// - inf: log2 of an infinite amax is inf, so the code clamps to 254; the
//   element then saturates to +-448 through the clamp before the cast.
//
// Consequences of the floors and clamps: the Standard code is 0 for any amax
// up to 448 * 2^-127 (zeros included) and at most 247 for a finite amax
// (FLT_MAX / 448 < 2^120), so 254 needs an infinity. The Routed floor makes its
// smallest code 85 (1e-10 / 448 lies in (2^-43, 2^-42]); the lower clamp to 1
// is never reached.

float mxGroupAmax(const float* values, size_t count) {
  float amax = 0.0f;
  for (size_t i = 0; i < count; ++i) amax = std::fmax(amax, std::fabs(values[i]));  // fmax skips NaN
  return amax;
}

uint8_t mxfp8ScaleCode(float amax, Mxfp8Variant variant) {
  const bool routed = variant == Mxfp8Variant::Routed;
  const float floorValue = routed ? 1e-10f : std::numeric_limits<float>::min();
  const int lowestCode = routed ? 1 : 0;
  const float floored = std::fmax(amax, floorValue);  // a NaN amax takes the floor
  if (std::isinf(floored)) return 254;
  const float ratio = floored / kE4m3Max;  // one f32 division, nonzero (>= 2^-135)
  return static_cast<uint8_t>(std::clamp(ceilLog2(ratio) + 127, lowestCode, 254));
}

void quantizeMxfp8(const float* values, size_t n, uint8_t* codes, uint8_t* scales,
                   Mxfp8Variant variant) {
  if (n % kMxGroupSize != 0)
    throw std::invalid_argument("quantizeMxfp8: n = " + std::to_string(n) +
                                " is not a multiple of 32");
  for (size_t group = 0; group < n / kMxGroupSize; ++group) {
    const float* groupValues = values + group * kMxGroupSize;
    const uint8_t code = mxfp8ScaleCode(mxGroupAmax(groupValues, kMxGroupSize), variant);
    scales[group] = code;
    // Scaling by a power of two with ldexp is exact wherever the result is not
    // an f32 denormal, and a denormal result is below e4m3's half-ulp at zero.
    const int shift = 127 - static_cast<int>(code);
    for (size_t i = 0; i < kMxGroupSize; ++i)
      codes[group * kMxGroupSize + i] = e4m3Bits(std::ldexp(groupValues[i], shift));
  }
}

}  // namespace monodc::formats
