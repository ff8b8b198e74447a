// MXFP4 routed-expert weights as the checkpoint loader leaves them on ROCm
// (docs/numerics.md section 2): e2m1 codes packed two a byte, one E8M0 scale per 32
// along K, and AITER's shuffled layouts of both the weight bytes and the scales.
//
// Everything here is exact byte movement (or, for the quantizer, exact
// arithmetic on powers of two). The closed-form offsets are what the kernels
// compute to address the shuffled memory; the whole-array shuffles below are
// written from the view/permute definition instead, and the tests check that
// the two agree at every byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace monodc::formats {

// ---------------------------------------------------------------- e2m1 packing

// codes [rows][cols] (one e2m1 code a byte; only the low 4 bits are read) to
// bytes [rows][cols / 2]: byte i holds code 2i in its low nibble and code 2i+1
// in its high nibble. cols must be even (a byte never straddles two rows);
// otherwise, or when codes is not rows x cols, std::invalid_argument.
std::vector<uint8_t> packE2m1(const std::vector<uint8_t>& codes, size_t rows, size_t cols);
// The inverse: bytes [rows][cols / 2] to codes [rows][cols], each in 0..15.
std::vector<uint8_t> unpackE2m1(const std::vector<uint8_t>& bytes, size_t rows, size_t cols);

// ---------------------------------------------------------------- MXFP4

inline constexpr float kE2m1Max = 6.0f;

// The scale code of a group for test data (the checkpoint's own quantizer is
// not part of the contract; only dequantization is): the smallest c in
// [0, 254] with amax * 2^(127 - c) <= 6, i.e. c = clamp(ceil(log2(amax / 6)) +
// 127, 0, 254) taken exactly (no rounded division). amax 0 -> 0, inf -> 254.
uint8_t mxfp4ScaleCode(float amax);

// One row of n values (n a multiple of 32, else std::invalid_argument) to e2m1
// codes[n] (one a byte) and scales[n / 32]: c = mxfp4ScaleCode(group amax),
// codes[i] = e2m1Bits(values[i] * 2^(127 - c)) (saturating at +-6, RNE, the
// group amax ignoring NaN as mxGroupAmax does).
void quantizeMxfp4(const float* values, size_t n, uint8_t* codes, uint8_t* scales);

// The value the kernels must use: e2m1Value(code) * 2^(scale - 127), exact in
// f32 wherever it is below FLT_MAX (only scales 253 and 254 can overflow to
// inf); scale 255 gives NaN.
float mxfp4Value(uint8_t code, uint8_t scale);

// ---------------------------------------------------------------- weight shuffle
//
// Bytes [E][N][Kb] (Kb = K / 2 packed bytes a row) viewed as
// [E, N/16, 16, Kb/32, 2, 16] and permuted to [E, N/16, Kb/32, 2, 16, 16]: each
// 16-row group is stored K block by K block (32 bytes = 64 codes), and inside a
// block as two halves of 16 rows x 16 bytes. The view needs N % 16 == 0 and
// Kb % 32 == 0; other shapes throw std::invalid_argument naming the value.

inline constexpr size_t kShuffleRows = 16;       // rows of a group
inline constexpr size_t kShuffleBlockBytes = 32; // bytes of a K block (two 16 B halves)
inline constexpr size_t kShuffleHalfBytes = 16;

// Throws std::invalid_argument unless rows % 16 == 0 and rowBytes % 32 == 0.
void checkShuffleWeightShape(size_t rows, size_t rowBytes);

// Where byte `byte` of row `row` of expert `expert` lands in the shuffled
// weight of `rows` x `rowBytes` bytes an expert (shape already checked).
constexpr size_t shuffledWeightOffset(size_t expert, size_t row, size_t byte, size_t rows,
                                      size_t rowBytes) {
  const size_t group = row / kShuffleRows, rowInGroup = row % kShuffleRows;
  const size_t block = byte / kShuffleBlockBytes;
  const size_t half = (byte % kShuffleBlockBytes) / kShuffleHalfBytes;
  const size_t byteInHalf = byte % kShuffleHalfBytes;
  return expert * rows * rowBytes + group * kShuffleRows * rowBytes +
         block * kShuffleRows * kShuffleBlockBytes + half * kShuffleRows * kShuffleHalfBytes +
         rowInGroup * kShuffleHalfBytes + byteInHalf;
}

// bytes [experts][rows][rowBytes] (packed e2m1) -> the shuffled layout, and back.
std::vector<uint8_t> shuffleWeight(const std::vector<uint8_t>& bytes, size_t experts, size_t rows,
                                   size_t rowBytes);
std::vector<uint8_t> unshuffleWeight(const std::vector<uint8_t>& shuffled, size_t experts,
                                     size_t rows, size_t rowBytes);

// ---------------------------------------------------------------- scale shuffle
//
// Scales [rows][cols] (for expert weights the experts are stacked along rows:
// rows = E * N, cols = K / 32) are first padded to rows a multiple of 256 and
// cols a multiple of 8, then viewed as (rows/32, 2, 16, cols/8, 2, 4) and
// permuted (0, 3, 5, 2, 4, 1). The padding is filled with kScalePaddingByte
// (AITER leaves it uninitialized; no kernel reads it).

inline constexpr uint8_t kScalePaddingByte = 127;  // 2^0

constexpr size_t paddedScaleRows(size_t rows) { return (rows + 255) / 256 * 256; }
constexpr size_t paddedScaleCols(size_t cols) { return (cols + 7) / 8 * 8; }

// Where scale (row, col) lands in the shuffled scales whose padded width is
// paddedCols: row = 32 a + 16 b + c, col = 8 d + 4 e + f go to
// [a][d][f][c][e][b] of (rows/32, cols/8, 4, 16, 2, 2).
constexpr size_t shuffledScaleOffset(size_t row, size_t col, size_t paddedCols) {
  const size_t a = row / 32, b = (row / 16) % 2, c = row % 16;
  const size_t d = col / 8, e = (col / 4) % 2, f = col % 4;
  return a * 32 * paddedCols + d * 256 + f * 64 + c * 4 + e * 2 + b;
}

// scales [rows][cols] -> the padded, shuffled scales
// [paddedScaleRows(rows)][paddedScaleCols(cols)] (as one flat array).
std::vector<uint8_t> shuffleScales(const std::vector<uint8_t>& scales, size_t rows, size_t cols,
                                   uint8_t padding = kScalePaddingByte);
// The inverse: the padded, shuffled scales back to [rows][cols], padding dropped.
std::vector<uint8_t> unshuffleScales(const std::vector<uint8_t>& shuffled, size_t rows,
                                     size_t cols);

// ---------------------------------------------------------------- view/permute

// The row-major array src of shape dims, permuted so that output dimension i is
// input dimension order[i] (torch's x.view(dims).permute(order).contiguous()).
// The shuffles above are this with their fixed dims and orders; exposed so that
// tests can build other permutations. Throws std::invalid_argument when order
// is not a permutation of 0..dims.size()-1 or src is not prod(dims) long.
std::vector<uint8_t> permuteDims(const std::vector<uint8_t>& src, const std::vector<size_t>& dims,
                                 const std::vector<size_t>& order);

}  // namespace monodc::formats
