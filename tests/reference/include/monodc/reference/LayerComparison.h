// A layer step's outputs against the reference layer (docs/numerics.md section 6):
// every token's x_out cosine (a whole layer: >= 0.999) and the FFN seam's
// streams and gates (stage bounds). Tokens whose routing is a near-tie are
// excluded from x_out and counted, never silently passed.
#pragma once

#include <vector>

#include "monodc/reference/Layer.h"

namespace monodc::reference {

inline constexpr double kLayerCosine = 0.999;

struct LayerComparison {
  std::vector<double> tokenCosines;  // x_out per token
  std::vector<bool> excluded;        // per token: a near-tie, not compared
  int excludedCount() const;
  Comparison x;  // x_out of the compared tokens together
  Comparison residual, pre, post, comb;

  double minCosine() const;  // over the compared tokens (1 when none; NaN when one is)
  // Every compared token's x_out cosine >= kLayerCosine and x_out finite
  // (the seam's comparisons are held to withinStageBounds by the caller).
  bool xPasses() const;
};

// The cosine of got and want over [begin, begin + n) (1 when both are zero).
double cosineOver(const std::vector<float>& got, const std::vector<float>& want, size_t begin,
                  size_t n);

// got's x, residual, pre, post and comb against want's; want.nearTie says
// which tokens are excluded.
LayerComparison compareLayer(const LayerOutputs& got, const LayerOutputs& want, int hidden);

}  // namespace monodc::reference
