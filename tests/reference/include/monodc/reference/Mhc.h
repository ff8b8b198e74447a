// The mHC seam between sublayers (docs/numerics.md section 3), for checking the
// seam stages. Written from the contract: the fold and the collapse follow
// its f32 rounding order exactly; the mixes, gates, Sinkhorn and the norm are
// computed in double and rounded once where the contract rounds.
#ifndef MONODC_REFERENCE_MHC_H
#define MONODC_REFERENCE_MHC_H

#include <vector>

namespace monodc::reference {

struct MhcInputs {
  int rows = 0, hidden = 0;
  std::vector<float> residual;   // R, bf16 values [rows][4][hidden]
  std::vector<float> x;          // the last sublayer's output, bf16 [rows][hidden]
  std::vector<float> post;       // [rows][4]
  std::vector<float> comb;       // [rows][4][4], comb[h][o]
  std::vector<float> preIn;      // [rows][4]
  std::vector<float> fn;         // [24][4 * hidden], stream-major columns
  std::vector<float> base;       // [24]
  std::vector<float> scale;      // [3]
  std::vector<float> normWeight; // bf16 [hidden]
  double eps = 1e-20, hcEps = 1e-6, postMultiplier = 2.0;
  int sinkhornIterations = 20;
};

struct MhcOutputs {
  std::vector<float> residual;   // R', bf16 [rows][4][hidden]
  std::vector<float> u;          // collapsed, bf16 [rows][hidden]
  std::vector<float> pre, post;  // [rows][4]
  std::vector<float> comb;       // [rows][4][4]
  std::vector<float> y;          // the next sublayer's input, bf16 [rows][hidden]
};

MhcOutputs mhcSeam(const MhcInputs &in);

} // namespace monodc::reference

#endif
