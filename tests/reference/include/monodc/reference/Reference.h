// The CPU reference for the DSV41 decode layer, written from docs/numerics.md alone
// (it shares nothing with the stages it checks except the number formats).
//
// Tensors are row-major std::vector<float>; a tensor of a narrow format holds
// values already exact in that format (a bf16 tensor holds bf16-rounded floats).
// Sums accumulate in double, more accurate than the f32 the spec allows, and
// each output is rounded once, straight from double, as the spec says.
// A shape that breaks a function's contract throws std::invalid_argument.
#pragma once

#include <cstdint>
#include <vector>

#include "monodc/formats/NumberFormats.h"

namespace monodc::reference {

// 2^(scale - 127) of an E8M0 scale byte, exact in double (free of the f32
// overflow the top codes would hit); the NaN code 255 gives NaN.
double scaleValue(uint8_t scale);

// bf16 of a double with a single rounding (nearest even); going through f32
// first could round twice.
float roundDoubleToBf16(double v);

// y[r] = bf16(x[r] * rsqrt(sum(x[r]^2) / width + eps) * weight): the seam norm
// (section 3 step 6) and the q / kv norms (section 4 front step 2).
std::vector<float> rmsNorm(const std::vector<float>& x, int rows, int width,
                           const std::vector<float>& weight, double eps);

// MXFP8 activations: codes [rows][cols] e4m3, scales [rows][cols / 32] E8M0.
struct Mxfp8Tensor {
  std::vector<uint8_t> codes;
  std::vector<uint8_t> scales;
  int rows = 0;
  int cols = 0;
};
Mxfp8Tensor quantizeMxfp8Rows(const std::vector<float>& x, int rows, int cols,
                              formats::Mxfp8Variant variant);

// A weight [n][k] in e4m3 with one E8M0 per 32x32 block: scales [n/32][k/32].
struct BlockScaledE4m3 {
  std::vector<uint8_t> codes;
  std::vector<uint8_t> scales;
  int n = 0;
  int k = 0;
};
// Quantizes w [n][k]: each 32x32 block's amax gives its code by the Standard
// MXFP8 rule; codes = e4m3(w * 2^(127 - code)). Used by tests to make weights.
BlockScaledE4m3 quantizeBlockE4m3(const std::vector<float>& w, int n, int k);

// out[r][j] = bf16(sum_k dequant(x)[r][k] * dequant(w)[j][k]), [x.rows][w.n].
std::vector<float> gemvMxfp8xE4m3(const Mxfp8Tensor& x, const BlockScaledE4m3& w);

// Accuracy of got against want (section 6). The statistics cover the element
// pairs where both are finite; nonFinite says whether any pair was not.
struct Comparison {
  double maxAbsError = 0.0;
  double maxAbsRef = 0.0;
  double relativeError = 0.0;  // maxAbsError / maxAbsRef (0 / 0 -> 0, x / 0 -> inf)
  double cosine = 1.0;         // 1 when both are all zero, 0 when only one is
  bool nonFinite = false;
};
Comparison compare(const std::vector<float>& got, const std::vector<float>& want);

// A stage against its reference: relativeError <= 1e-2, cosine >= 0.9999 and
// every value finite.
bool withinStageBounds(const Comparison& c);

// The all-reduce of docs/numerics.md 4.6: the ranks' partials (bf16 values) summed in
// rank order in f32, then rounded once to bf16. Exact.
std::vector<float> allReduce(const std::vector<std::vector<float>>& partials);

// The key RoPE of docs/numerics.md section 4 (front 3): for each row, dims
// [dim - ropeDim, dim) of kn rotated as interleaved pairs (e, o) by
// c = cosSin[p][j], s = cosSin[p][ropeDim / 2 + j]: e' = e c - o s,
// o' = e s + o c in f32, one bf16 rounding; the other dims unchanged.
std::vector<float> keyRope(const std::vector<float>& kn, const std::vector<float>& positions,
                           const std::vector<float>& cosSin, int rows, int dim, int ropeDim);

}  // namespace monodc::reference
