// The MoE router, routing, the shared and the routed experts (docs/numerics.md section
// 5), written from the contract: sums in double, roundings where the contract
// puts them.
#ifndef MONODC_REFERENCE_MOE_H
#define MONODC_REFERENCE_MOE_H

#include "monodc/reference/Reference.h"

#include <cstdint>
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

/// An MXFP4 weight [experts][n][k], plain (unshuffled): e2m1 codes one a byte
/// (low 4 bits), one E8M0 scale per 32 along k: scales [experts][n][k / 32].
struct Mxfp4Weights {
  std::vector<uint8_t> codes;
  std::vector<uint8_t> scales;
  int experts = 0;
  int n = 0;
  int k = 0;
};

/// Quantizes w [experts][n][k] row by row with formats::quantizeMxfp4 (test
/// data; the value of a code is exactly code * 2^(scale - 127)).
Mxfp4Weights quantizeMxfp4Weights(const std::vector<float> &w, int experts, int n, int k);

/// One routed expert on one token (docs/numerics.md section 5, a8w4).
struct RoutedExpertOutput {
  std::vector<float> hidden; // h [I], bf16 values
  std::vector<float> down;   // d [H], f32
};

/// xr = MXFP8r(x) (x bf16 [H]); g, u = xr . W1^T, xr . W3^T in f32, where
/// w13 [E][2I][H] holds gate and up interleaved in 16-row tiles (w13 row
/// 32 t + j is gate row 16 t + j, row 32 t + 16 + j is up row 16 t + j);
/// g' = min(g, limit); h = bf16(g' * sigmoid(g') * clamp(u, +-limit));
/// d = MXFP8r(h) . W2^T in f32 (w2 [E][H][I]).
RoutedExpertOutput routedExpert(const std::vector<float> &x, const Mxfp4Weights &w13,
                                const Mxfp4Weights &w2, int expert, double limit);

/// The MoE output partial from each (token, slot)'s expert output d (downs
/// [rows][k][H] f32, slots in routing order): per token, routed = 0, then
/// routed = bf16(routed + bf16(d_k * w_k)) over its slots; out =
/// bf16(routed + shared) (shared [rows][H]).
std::vector<float> combineRoutedExperts(const std::vector<float> &downs, int rows, int hidden,
                                        const Routing &routing, const std::vector<float> &shared);

/// The MoE output partial for rows tokens (x bf16 [rows][H]): per token,
/// routed = 0, then routed = bf16(routed + bf16(d_k * w_k)) over its top-k in
/// routing order; out = bf16(routed + shared) (shared: the shared expert's ds
/// [rows][H]). k is routing.indices.size() / rows.
std::vector<float> routedExperts(const std::vector<float> &x, int rows, const Routing &routing,
                                 const Mxfp4Weights &w13, const Mxfp4Weights &w2,
                                 const std::vector<float> &shared, double limit);

} // namespace monodc::reference

#endif
