// The MoE router, routing and the shared expert (DSV41.md section 5), written
// from the contract: sums in double, roundings where the contract puts them.
#ifndef MONODC_REFERENCE_MOE_H
#define MONODC_REFERENCE_MOE_H

#include "monodc/reference/Reference.h"

#include <vector>

namespace monodc::reference {

/// z = x . gate^T in f32 (bf16 x [rows][h] and gate [experts][h]).
std::vector<float> routerLogits(const std::vector<float> &x, const std::vector<float> &gate,
                                int rows, int hidden, int experts);

struct Routing {
  std::vector<int> indices;       // [rows][k], best first
  std::vector<float> weights;     // [rows][k]
  std::vector<bool> nearTie;      // per row: 6th/7th biased scores within 1e-3 relative
};

/// s = sqrt(softplus(z)) (softplus(z) = z for z > 20, NaN -> 0), top-k of s +
/// bias (lower index wins ties), w = scaling * s / max(sum of the k s, 1e-20).
Routing route(const std::vector<float> &logits, const std::vector<float> &bias, int rows,
              int experts, int k, double scaling);

/// The shared expert on an MXFP8 activation: gs, us = bf16(x . W1^T),
/// bf16(x . W3^T) (gateUp rows: gate then up); g' = min(gs, limit);
/// h = bf16(bf16(g' / (1 + e^-g')) * clamp(us, +-limit)); out = bf16(MXFP8(h) . W2^T).
std::vector<float> sharedExpert(const Mxfp8Tensor &x, const BlockScaledE4m3 &gateUp,
                                const BlockScaledE4m3 &down, int intermediate, double limit);

} // namespace monodc::reference

#endif
