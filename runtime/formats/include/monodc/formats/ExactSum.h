// A sum of doubles kept exact and rounded once to f32, and the steps of
// gfx950's MFMAs that the project models with it (and gfx942's block step,
// fp8MfmaBlockStep): the scaled form's four
// scaled 32-k block sums, or the bf16 form's 32 products, and the
// accumulator C summed exactly, rounded once (docs/gfx950-matrix-cores.md;
// CDNA4's internal rounding is not public, so this is the modelled
// behaviour). Used by the host models of the instructions
// (tests/device/HostMfma.h) and by the simulator's MFMA GEMVs, so the two
// apply the same assumption.
#ifndef MONODC_FORMATS_EXACTSUM_H
#define MONODC_FORMATS_EXACTSUM_H

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace monodc::formats {

/// An exact sum of doubles as a nonoverlapping expansion, smallest part
/// first (Shewchuk's grow-expansion over Knuth's two-sum). Exact while no
/// part overflows, which the terms here (|x| < 2^278) never approach.
class ExactSum {
public:
  void add(double x) {
    double q = x;
    for (double &part : parts_) {
      const double s = q + part, bv = s - q;
      const double err = (q - (s - bv)) + (part - bv);
      part = err;
      q = s;
    }
    parts_.push_back(q);
    ieee_ = count_++ == 0 ? x : ieee_ + x;
  }
  /// The sign of the exact sum: its largest nonzero part's.
  int sign() const {
    for (auto it = parts_.rbegin(); it != parts_.rend(); ++it)
      if (*it != 0)
        return *it > 0 ? 1 : -1;
    return 0;
  }
  /// The sign of (sum - m), exactly.
  int compare(double m) const {
    ExactSum d = *this;
    d.add(-m);
    return d.sign();
  }
  /// The sum rounded once to f32, to nearest even; with a NaN or infinite
  /// term, the terms' IEEE sum (NaN or that infinity), as the hardware's.
  float toFloat() const {
    if (!std::isfinite(ieee_))
      return float(ieee_);
    if (sign() == 0)
      return float(ieee_);  // a zero: IEEE's sign rule, as the terms' plain sum
    double approx = 0;
    for (double part : parts_)
      approx += part;
    float f = float(approx);  // the rounded result or a neighbour of it
    if (std::isinf(f))
      f = std::copysign(FLT_MAX, f);
    const double past = std::ldexp(1.0, 128);  // the step past FLT_MAX
    for (;;) {
      const double up = f == FLT_MAX ? past : double(std::nextafter(f, INFINITY));
      const double down = f == -FLT_MAX ? -past : double(std::nextafter(f, -INFINITY));
      const bool odd = (std::bit_cast<uint32_t>(f) & 1u) != 0;
      const int above = compare((double(f) + up) / 2), below = compare((double(f) + down) / 2);
      if (above > 0 || (above == 0 && odd)) {
        if (up == past)
          return INFINITY;
        f = float(up);
      } else if (below < 0 || (below == 0 && odd)) {
        if (down == -past)
          return -INFINITY;
        f = float(down);
      } else {
        return f;
      }
    }
  }

private:
  std::vector<double> parts_;
  double ieee_ = 0;
  int count_ = 0;
};

/// One scaled-MFMA step for one output: C plus the four scaled block sums
/// (each exact in double), summed exactly and rounded once to f32; a NaN or
/// infinite term gives the terms' IEEE sum.
inline float scaledMfmaStep(float c, const double (&scaledBlocks)[4]) {
  ExactSum sum;
  sum.add(double(c));
  for (double b : scaledBlocks)
    sum.add(b);
  return sum.toFloat();
}

/// One bf16 MFMA instruction for one output: C plus its N products (each
/// exact in double), summed exactly and rounded once to f32; a NaN or
/// infinite term gives the terms' IEEE sum (NaN or that infinity).
template <size_t N>
inline float bf16MfmaStep(float c, const double (&products)[N]) {
  ExactSum sum;
  sum.add(double(c));
  for (double p : products)
    sum.add(p);
  return sum.toFloat();
}

/// A 32-k bf16 step as gfx942 runs it: two 16x16x16 instructions, the
/// first over the products at k % 8 < 4 (each lane's lower half of its 8 k),
/// the second over the rest, each rounded once.
inline void bf16MfmaHalves(const double (&products)[32], double (&first)[16],
                           double (&second)[16]) {
  for (int k = 0; k < 32; ++k)
    (k % 8 < 4 ? first[k / 8 * 4 + k % 4] : second[k / 8 * 4 + k % 4]) = products[k];
}
inline float bf16MfmaStepAsHalves(float c, const double (&products)[32]) {
  double first[16], second[16];
  bf16MfmaHalves(products, first, second);
  return bf16MfmaStep(bf16MfmaStep(c, first), second);
}

/// One 32-k MX block as gfx942's GEMV runs it (gemv_mfma.h,
/// mono_gemv_fp8_step): the fp8 MFMA with C = 0 over the codes' FNUZ halves
/// (the block's exact sum / 4, rounded once to f32), that times 4 x the
/// block's two E8M0 scales (`scale`, a power of two; v_ldexp_f32, rounded
/// once), added to acc in f32. `exactSum` must be the block's exact sum of
/// code products.
inline float fp8MfmaBlockStep(float acc, double exactSum, double scale) {
  const float d = float(exactSum * 0.25);
  return acc + float(double(d) * scale * 4.0);
}

} // namespace monodc::formats

#endif
