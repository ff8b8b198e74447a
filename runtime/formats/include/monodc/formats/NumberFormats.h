// Exact conversions between f32 and the narrow number formats of docs/numerics.md
// section 2: bf16, e4m3 (OCP "fn"), e2m1 (FP4), E8M0 scale bytes and MXFP8.
//
// Every function here is exact: results are defined bit for bit, and the tests
// check them exhaustively where the format is small enough. No LLVM, no libm
// rounding where it could change a bit (only ldexp/frexp/nearbyint, which are
// exact in the default round-to-nearest mode).
#pragma once

#include <cstddef>
#include <cstdint>

namespace monodc::formats {

// ---------------------------------------------------------------- bf16

// Round-to-nearest-even. Overflow rounds to infinity as RNE does (inf stays
// inf). NaN -> the quiet NaN 0x7FC0 with the input's sign (0xFFC0 if negative).
uint16_t bf16Bits(float v);
float bf16Value(uint16_t bits);
float roundToBf16(float v);  // bf16Value(bf16Bits(v))

// ---------------------------------------------------------------- e4m3 (OCP fn)

inline constexpr float kE4m3Max = 448.0f;

// Saturating: the value is clamped to +-448 first (inf -> +-448), then rounded
// to nearest even, subnormals included (smallest 2^-9). Negative zero and tiny
// negatives keep the sign (0x80). NaN -> 0x7F with the input's sign, so a
// negative NaN gives 0xFF (as torch's float8_e4m3fn cast does).
uint8_t e4m3Bits(float v);
float e4m3Value(uint8_t bits);  // 0x7F and 0xFF decode to NaN
float roundToE4m3(float v);

// ---------------------------------------------------------------- e2m1 (FP4)

// Codes 0..15 = 0, .5, 1, 1.5, 2, 3, 4, 6, -0, -.5, -1, -1.5, -2, -3, -4, -6.
// Saturating to +-6, round to nearest with ties to the even code (the one whose
// mantissa bit, bit 0, is clear). The sign is kept (-0.1 -> 8, i.e. -0). FP4
// has no NaN: NaN of either sign -> code 0 (+0).
uint8_t e2m1Bits(float v);
float e2m1Value(uint8_t code);  // only the low 4 bits are read
float roundToE2m1(float v);

// ---------------------------------------------------------------- E8M0

// 2^(code - 127) exactly: code 0 is 2^-127 (an f32 denormal); 255 is NaN.
float e8m0Value(uint8_t code);
// The code of |v|'s power-of-two floor: floor(log2 |v|) + 127 clamped to
// [0, 254], so a power of two maps to its own code. Zero and values below
// 2^-127 -> 0, inf -> 254, NaN -> 255.
uint8_t e8m0Bits(float v);

// ---------------------------------------------------------------- MXFP8

inline constexpr size_t kMxGroupSize = 32;

enum class Mxfp8Variant {
  // vLLM's mxfp8_e4m3_quantize (activations, shared expert): amax floored at
  // FLT_MIN, code clamped to [0, 254].
  Standard,
  // AITER's a8w4 path (routed-expert activations): amax floored at 1e-10,
  // code clamped to [1, 254].
  Routed,
};

// The E8M0 code of one group: ceil(log2(max(amax, floor) / 448)) + 127, clamped
// to the variant's range. The division is one f32 division and the ceil is
// exact (an exact power of two keeps its exponent). A NaN amax counts as no
// amax at all (the floor applies); an infinite amax gives 254.
uint8_t mxfp8ScaleCode(float amax, Mxfp8Variant variant);

// One row of n values (n a multiple of 32, else std::invalid_argument) to
// e4m3 codes[n] and one E8M0 scale a group of 32, scales[n / 32]:
// codes[i] = e4m3Bits(values[i] * 2^(127 - c)), c = mxfp8ScaleCode(group amax).
// The group amax ignores NaN elements (a NaN element itself encodes as e4m3
// NaN); an infinite element makes the code 254 and encodes as +-448.
void quantizeMxfp8(const float* values, size_t n, uint8_t* codes,
                   uint8_t* scales, Mxfp8Variant variant);

// The group's amax as quantizeMxfp8 sees it: max |v| over the non-NaN values
// (0 when there are none).
float mxGroupAmax(const float* values, size_t count);

}  // namespace monodc::formats
