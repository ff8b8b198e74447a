#include "monodc/formats/AiterShuffle.h"

#include "monodc/formats/NumberFormats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

// What AITER's aiter/ops/shuffle.py does (read for facts; nothing copied): for
// one-byte elements its default weight layout (16, 16) views the last two dims
// as (N/16, 16, Kb/32, 2, 16) and moves the 16-row axis inside the two 16-byte
// halves of each 32-byte K block; it asserts N % 16 == 0 and Kb % 32 == 0. Its
// scale shuffle pads to multiples of (256, 8) with uninitialized memory and
// applies the (32, 2, 16, 8, 2, 4) view and (0, 3, 5, 2, 4, 1) permutation.

namespace monodc::formats {
namespace {

void require(bool condition, const char* function, const std::string& what) {
  if (!condition) throw std::invalid_argument(std::string(function) + ": " + what);
}

std::string str(size_t v) { return std::to_string(v); }

// The view and permutation of docs/numerics.md, written as data so the code reads as
// the definition.
std::vector<size_t> weightDims(size_t experts, size_t rows, size_t rowBytes) {
  return {experts, rows / kShuffleRows, kShuffleRows, rowBytes / kShuffleBlockBytes,
          kShuffleBlockBytes / kShuffleHalfBytes, kShuffleHalfBytes};
}
const std::vector<size_t> kWeightOrder = {0, 1, 3, 4, 2, 5};

std::vector<size_t> scaleDims(size_t paddedRows, size_t paddedCols) {
  return {paddedRows / 32, 2, 16, paddedCols / 8, 2, 4};
}
const std::vector<size_t> kScaleOrder = {0, 3, 5, 2, 4, 1};

// The permuted shape and the order that undoes a permutation.
std::vector<size_t> permutedDims(const std::vector<size_t>& dims,
                                 const std::vector<size_t>& order) {
  std::vector<size_t> out(order.size());
  for (size_t i = 0; i < order.size(); ++i) out[i] = dims[order[i]];
  return out;
}
std::vector<size_t> inverseOrder(const std::vector<size_t>& order) {
  std::vector<size_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = i;
  return inverse;
}

}  // namespace

// ---------------------------------------------------------------- e2m1 packing

std::vector<uint8_t> packE2m1(const std::vector<uint8_t>& codes, size_t rows, size_t cols) {
  require(cols % 2 == 0, "packE2m1", "cols = " + str(cols) + " is odd");
  require(codes.size() == rows * cols, "packE2m1",
          "codes has " + str(codes.size()) + " elements, not rows x cols = " + str(rows * cols));
  // Rows are whole bytes, so pairing the flat array pairs within each row.
  std::vector<uint8_t> bytes(codes.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>((codes[2 * i] & 0xF) | ((codes[2 * i + 1] & 0xF) << 4));
  return bytes;
}

std::vector<uint8_t> unpackE2m1(const std::vector<uint8_t>& bytes, size_t rows, size_t cols) {
  require(cols % 2 == 0, "unpackE2m1", "cols = " + str(cols) + " is odd");
  require(bytes.size() * 2 == rows * cols, "unpackE2m1",
          "bytes has " + str(bytes.size()) + " elements, not rows x cols / 2 = " +
              str(rows * cols / 2));
  std::vector<uint8_t> codes(bytes.size() * 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    codes[2 * i] = bytes[i] & 0xF;
    codes[2 * i + 1] = bytes[i] >> 4;
  }
  return codes;
}

// ---------------------------------------------------------------- MXFP4

uint8_t mxfp4ScaleCode(float amax) {
  if (!(amax > 0.0f)) return 0;  // zero (and a NaN, which mxGroupAmax never returns)
  if (std::isinf(amax)) return 254;
  // amax = m 2^x with m in [0.5, 1). 6 * 2^p = 0.75 * 2^(p + 3), so the
  // smallest p with 6 * 2^p >= amax is x - 3 when m <= 0.75, else x - 2. Exact:
  // no division by 6 whose rounding could cross a power of two.
  int exponent = 0;
  const float mantissa = std::frexp(amax, &exponent);
  const int p = mantissa <= 0.75f ? exponent - 3 : exponent - 2;
  return static_cast<uint8_t>(std::clamp(p + 127, 0, 254));
}

void quantizeMxfp4(const float* values, size_t n, uint8_t* codes, uint8_t* scales) {
  require(n % kMxGroupSize == 0, "quantizeMxfp4", "n = " + str(n) + " is not a multiple of 32");
  for (size_t group = 0; group < n / kMxGroupSize; ++group) {
    const float* groupValues = values + group * kMxGroupSize;
    const uint8_t code = mxfp4ScaleCode(mxGroupAmax(groupValues, kMxGroupSize));
    scales[group] = code;
    // ldexp is exact unless the result is an f32 denormal, and those lie far
    // below e2m1's smallest step (0.25 rounds to 0), so the code is unaffected.
    const int shift = 127 - static_cast<int>(code);
    for (size_t i = 0; i < kMxGroupSize; ++i)
      codes[group * kMxGroupSize + i] = e2m1Bits(std::ldexp(groupValues[i], shift));
  }
}

float mxfp4Value(uint8_t code, uint8_t scale) {
  // A 2-bit significand times 2^(scale - 127): an exact f32 down to 2^-128.
  return e2m1Value(code) * e8m0Value(scale);
}

// ---------------------------------------------------------------- view/permute

std::vector<uint8_t> permuteDims(const std::vector<uint8_t>& src, const std::vector<size_t>& dims,
                                 const std::vector<size_t>& order) {
  const size_t rank = dims.size();
  std::vector<bool> seen(rank, false);
  require(order.size() == rank, "permuteDims", "order has " + str(order.size()) +
                                                   " entries for " + str(rank) + " dims");
  for (size_t axis : order) {
    require(axis < rank && !seen[axis], "permuteDims",
            "order is not a permutation (entry " + str(axis) + ")");
    seen[axis] = true;
  }
  size_t total = 1;
  for (size_t d : dims) total *= d;
  require(src.size() == total, "permuteDims",
          "src has " + str(src.size()) + " elements, the dims say " + str(total));

  // Row-major strides of the input, taken in output order: walking the output
  // with a mixed-radix counter then adds the matching input stride.
  std::vector<size_t> inputStride(rank, 1);
  for (size_t i = rank; i-- > 1;) inputStride[i - 1] = inputStride[i] * dims[i];
  const std::vector<size_t> outDims = permutedDims(dims, order);
  std::vector<size_t> index(rank, 0);
  std::vector<uint8_t> out(total);
  for (size_t o = 0; o < total; ++o) {
    size_t source = 0;
    for (size_t i = 0; i < rank; ++i) source += index[i] * inputStride[order[i]];
    out[o] = src[source];
    for (size_t i = rank; i-- > 0;) {  // increment the counter, last axis fastest
      if (++index[i] < outDims[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

// ---------------------------------------------------------------- weight shuffle

void checkShuffleWeightShape(size_t rows, size_t rowBytes) {
  require(rows % kShuffleRows == 0, "AITER weight shuffle",
          "N = " + str(rows) + " rows is not a multiple of 16");
  require(rowBytes % kShuffleBlockBytes == 0, "AITER weight shuffle",
          "Kb = " + str(rowBytes) + " bytes a row (K = " + str(2 * rowBytes) +
              ") is not a multiple of 32");
}

std::vector<uint8_t> shuffleWeight(const std::vector<uint8_t>& bytes, size_t experts, size_t rows,
                                   size_t rowBytes) {
  checkShuffleWeightShape(rows, rowBytes);
  require(bytes.size() == experts * rows * rowBytes, "shuffleWeight",
          "bytes has " + str(bytes.size()) + " elements, not E x N x Kb = " +
              str(experts * rows * rowBytes));
  return permuteDims(bytes, weightDims(experts, rows, rowBytes), kWeightOrder);
}

std::vector<uint8_t> unshuffleWeight(const std::vector<uint8_t>& shuffled, size_t experts,
                                     size_t rows, size_t rowBytes) {
  checkShuffleWeightShape(rows, rowBytes);
  require(shuffled.size() == experts * rows * rowBytes, "unshuffleWeight",
          "shuffled has " + str(shuffled.size()) + " elements, not E x N x Kb = " +
              str(experts * rows * rowBytes));
  const std::vector<size_t> dims = weightDims(experts, rows, rowBytes);
  return permuteDims(shuffled, permutedDims(dims, kWeightOrder), inverseOrder(kWeightOrder));
}

// ---------------------------------------------------------------- scale shuffle

std::vector<uint8_t> shuffleScales(const std::vector<uint8_t>& scales, size_t rows, size_t cols,
                                   uint8_t padding) {
  require(scales.size() == rows * cols, "shuffleScales",
          "scales has " + str(scales.size()) + " elements, not rows x cols = " + str(rows * cols));
  const size_t paddedRows = paddedScaleRows(rows), paddedCols = paddedScaleCols(cols);
  std::vector<uint8_t> padded(paddedRows * paddedCols, padding);
  for (size_t r = 0; r < rows; ++r)
    std::copy_n(scales.begin() + r * cols, cols, padded.begin() + r * paddedCols);
  return permuteDims(padded, scaleDims(paddedRows, paddedCols), kScaleOrder);
}

std::vector<uint8_t> unshuffleScales(const std::vector<uint8_t>& shuffled, size_t rows,
                                     size_t cols) {
  const size_t paddedRows = paddedScaleRows(rows), paddedCols = paddedScaleCols(cols);
  require(shuffled.size() == paddedRows * paddedCols, "unshuffleScales",
          "shuffled has " + str(shuffled.size()) + " elements, not the padded " +
              str(paddedRows) + " x " + str(paddedCols));
  const std::vector<size_t> dims = scaleDims(paddedRows, paddedCols);
  const std::vector<uint8_t> padded =
      permuteDims(shuffled, permutedDims(dims, kScaleOrder), inverseOrder(kScaleOrder));
  std::vector<uint8_t> scales(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    std::copy_n(padded.begin() + r * paddedCols, cols, scales.begin() + r * cols);
  return scales;
}

}  // namespace monodc::formats
