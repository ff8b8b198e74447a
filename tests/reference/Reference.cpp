#include "monodc/reference/Reference.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace monodc::reference {
namespace {

using formats::kMxGroupSize;

void require(bool condition, const char* function, const std::string& what) {
  if (!condition) throw std::invalid_argument(std::string(function) + ": " + what);
}

// Every e4m3 code's value and every E8M0 scale's power of two, in double:
// looked up, so that the full-size layer's GEMVs take seconds, not minutes.
struct DequantizeTables {
  double code[256];
  double scale[256];
  DequantizeTables() {
    for (int i = 0; i < 256; ++i) {
      code[i] = formats::e4m3Value(static_cast<uint8_t>(i));
      scale[i] = i == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, i - 127);
    }
  }
  // A value of an e4m3 code under an E8M0 scale, exact in double (the product
  // of a 4-bit significand and a power of two in [2^-127, 2^127]).
  double dequantize(uint8_t c, uint8_t s) const { return code[c] * scale[s]; }
};

const DequantizeTables& dequantizeTables() {
  static const DequantizeTables tables;
  return tables;
}

}  // namespace

double scaleValue(uint8_t scale) { return dequantizeTables().scale[scale]; }

float roundDoubleToBf16(double v) {
  float narrowed = static_cast<float>(v);
  // Round to odd on the way to f32 (truncate, then fold the lost bits into the
  // LSB as a sticky bit): f32 keeps 16 more bits than bf16, so the later RNE to
  // bf16 then rounds exactly as a single rounding of v would.
  if (std::isfinite(v) && static_cast<double>(narrowed) != v) {
    if (std::fabs(static_cast<double>(narrowed)) > std::fabs(v))
      narrowed = std::nextafter(narrowed, 0.0f);
    narrowed = std::bit_cast<float>(std::bit_cast<uint32_t>(narrowed) | 1u);
  }
  return formats::roundToBf16(narrowed);
}

std::vector<float> rmsNorm(const std::vector<float>& x, int rows, int width,
                           const std::vector<float>& weight, double eps) {
  require(rows >= 0 && width > 0, "rmsNorm", "bad shape");
  require(x.size() == static_cast<size_t>(rows) * width, "rmsNorm", "x is not rows x width");
  require(weight.size() == static_cast<size_t>(width), "rmsNorm", "weight is not width wide");
  std::vector<float> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const float* row = x.data() + static_cast<size_t>(r) * width;
    double sumOfSquares = 0.0;
    for (int d = 0; d < width; ++d) sumOfSquares += static_cast<double>(row[d]) * row[d];
    const double inverseRms = 1.0 / std::sqrt(sumOfSquares / width + eps);
    for (int d = 0; d < width; ++d)
      y[static_cast<size_t>(r) * width + d] =
          roundDoubleToBf16(static_cast<double>(row[d]) * inverseRms * weight[d]);
  }
  return y;
}

Mxfp8Tensor quantizeMxfp8Rows(const std::vector<float>& x, int rows, int cols,
                              formats::Mxfp8Variant variant) {
  require(rows >= 0 && cols >= 0 && cols % kMxGroupSize == 0, "quantizeMxfp8Rows",
          "cols must be a multiple of 32");
  require(x.size() == static_cast<size_t>(rows) * cols, "quantizeMxfp8Rows",
          "x is not rows x cols");
  const size_t groupsPerRow = cols / kMxGroupSize;
  Mxfp8Tensor out{std::vector<uint8_t>(x.size()),
                  std::vector<uint8_t>(static_cast<size_t>(rows) * groupsPerRow), rows, cols};
  for (int r = 0; r < rows; ++r)
    formats::quantizeMxfp8(x.data() + static_cast<size_t>(r) * cols, cols,
                           out.codes.data() + static_cast<size_t>(r) * cols,
                           out.scales.data() + r * groupsPerRow, variant);
  return out;
}

BlockScaledE4m3 quantizeBlockE4m3(const std::vector<float>& w, int n, int k) {
  require(n >= 0 && k >= 0 && n % kMxGroupSize == 0 && k % kMxGroupSize == 0,
          "quantizeBlockE4m3", "n and k must be multiples of 32");
  require(w.size() == static_cast<size_t>(n) * k, "quantizeBlockE4m3", "w is not n x k");
  const size_t blockRows = n / kMxGroupSize;
  const size_t blockCols = k / kMxGroupSize;
  BlockScaledE4m3 out{std::vector<uint8_t>(w.size()),
                      std::vector<uint8_t>(blockRows * blockCols), n, k};
  for (size_t br = 0; br < blockRows; ++br) {
    for (size_t bc = 0; bc < blockCols; ++bc) {
      float amax = 0.0f;
      for (size_t i = 0; i < kMxGroupSize; ++i)
        amax = std::max(amax, formats::mxGroupAmax(
                                  w.data() + (br * kMxGroupSize + i) * k + bc * kMxGroupSize,
                                  kMxGroupSize));
      const uint8_t scale = formats::mxfp8ScaleCode(amax, formats::Mxfp8Variant::Standard);
      out.scales[br * blockCols + bc] = scale;
      const int shift = 127 - static_cast<int>(scale);
      for (size_t i = 0; i < kMxGroupSize; ++i) {
        const size_t rowStart = (br * kMxGroupSize + i) * k + bc * kMxGroupSize;
        for (size_t j = 0; j < kMxGroupSize; ++j)
          out.codes[rowStart + j] = formats::e4m3Bits(std::ldexp(w[rowStart + j], shift));
      }
    }
  }
  return out;
}

std::vector<float> gemvMxfp8xE4m3(const Mxfp8Tensor& x, const BlockScaledE4m3& w) {
  require(x.cols == w.k, "gemvMxfp8xE4m3", "x.cols != w.k");
  require(x.cols % kMxGroupSize == 0 && w.n % kMxGroupSize == 0, "gemvMxfp8xE4m3",
          "dimensions must be multiples of 32");
  const size_t k = static_cast<size_t>(w.k);
  const size_t groups = k / kMxGroupSize;
  require(x.codes.size() == static_cast<size_t>(x.rows) * k &&
              x.scales.size() == static_cast<size_t>(x.rows) * groups,
          "gemvMxfp8xE4m3", "x's codes or scales have the wrong size");
  require(w.codes.size() == static_cast<size_t>(w.n) * k &&
              w.scales.size() == static_cast<size_t>(w.n) / kMxGroupSize * groups,
          "gemvMxfp8xE4m3", "w's codes or scales have the wrong size");

  const DequantizeTables& tables = dequantizeTables();
  std::vector<float> out(static_cast<size_t>(x.rows) * w.n);
  for (int r = 0; r < x.rows; ++r) {
    for (int j = 0; j < w.n; ++j) {
      double sum = 0.0;
      for (size_t kk = 0; kk < k; ++kk) {
        const size_t group = kk / kMxGroupSize;
        const double xv = tables.dequantize(x.codes[r * k + kk], x.scales[r * groups + group]);
        const double wv = tables.dequantize(w.codes[j * k + kk],
                                     w.scales[(j / kMxGroupSize) * groups + group]);
        sum += xv * wv;
      }
      out[static_cast<size_t>(r) * w.n + j] = roundDoubleToBf16(sum);
    }
  }
  return out;
}

Comparison compare(const std::vector<float>& got, const std::vector<float>& want) {
  require(got.size() == want.size(), "compare", "got and want differ in size");
  Comparison c;
  double dot = 0.0, gotSquares = 0.0, wantSquares = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (!std::isfinite(g) || !std::isfinite(w)) {
      c.nonFinite = true;
      continue;
    }
    c.maxAbsError = std::max(c.maxAbsError, std::fabs(g - w));
    c.maxAbsRef = std::max(c.maxAbsRef, std::fabs(w));
    dot += g * w;
    gotSquares += g * g;
    wantSquares += w * w;
  }
  if (c.maxAbsRef > 0.0)
    c.relativeError = c.maxAbsError / c.maxAbsRef;
  else
    c.relativeError = c.maxAbsError == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  if (gotSquares == 0.0 && wantSquares == 0.0)
    c.cosine = 1.0;
  else if (gotSquares == 0.0 || wantSquares == 0.0)
    c.cosine = 0.0;
  else
    c.cosine = dot / (std::sqrt(gotSquares) * std::sqrt(wantSquares));
  return c;
}

bool withinStageBounds(const Comparison& c) {
  return c.relativeError <= 1e-2 && c.cosine >= 0.9999 && !c.nonFinite;
}

std::vector<float> allReduce(const std::vector<std::vector<float>>& partials) {
  require(!partials.empty(), "allReduce", "no ranks");
  std::vector<float> out(partials[0].size());
  for (size_t i = 0; i < out.size(); ++i) {
    float sum = partials[0][i];
    for (size_t r = 1; r < partials.size(); ++r) {
      require(partials[r].size() == out.size(), "allReduce", "ranks differ in size");
      sum = sum + partials[r][i];
    }
    out[i] = formats::roundToBf16(sum);
  }
  return out;
}

std::vector<float> keyRope(const std::vector<float>& kn, const std::vector<float>& positions,
                           const std::vector<float>& cosSin, int rows, int dim, int ropeDim) {
  require(kn.size() == static_cast<size_t>(rows) * dim && positions.size() == size_t(rows) &&
              cosSin.size() % ropeDim == 0,
          "keyRope", "shapes");
  const int half = ropeDim / 2, nope = dim - ropeDim;
  std::vector<float> k(kn);
  for (int r = 0; r < rows; ++r) {
    const size_t p = static_cast<size_t>(positions[r]);
    require(p < cosSin.size() / ropeDim, "keyRope", "position outside the table");
    const float* cs = cosSin.data() + p * ropeDim;
    float* row = k.data() + static_cast<size_t>(r) * dim + nope;
    const float* in = kn.data() + static_cast<size_t>(r) * dim + nope;
    for (int j = 0; j < half; ++j) {
      const float e = in[2 * j], o = in[2 * j + 1], c = cs[j], s = cs[half + j];
      const float ec = e * c, os = o * s, es = e * s, oc = o * c;
      row[2 * j] = formats::roundToBf16(ec - os);
      row[2 * j + 1] = formats::roundToBf16(es + oc);
    }
  }
  return k;
}

}  // namespace monodc::reference
