// The MoE router, routing and shared expert (DSV41.md section 5).
#include "monodc/reference/Moe.h"

#include "monodc/formats/NumberFormats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace monodc::reference {

std::vector<float> routerLogits(const std::vector<float> &x, const std::vector<float> &gate,
                                int rows, int hidden, int experts) {
  if (x.size() != size_t(rows) * hidden || gate.size() != size_t(experts) * hidden)
    throw std::invalid_argument("routerLogits: shapes");
  std::vector<float> z(size_t(rows) * experts);
  for (int r = 0; r < rows; ++r)
    for (int e = 0; e < experts; ++e) {
      double sum = 0.0;
      for (int d = 0; d < hidden; ++d)
        sum += double(x[size_t(r) * hidden + d]) * gate[size_t(e) * hidden + d];
      z[size_t(r) * experts + e] = float(sum);
    }
  return z;
}

Routing route(const std::vector<float> &logits, const std::vector<float> &bias, int rows,
              int experts, int k, double scaling) {
  if (logits.size() != size_t(rows) * experts || bias.size() != size_t(experts) || k > experts)
    throw std::invalid_argument("route: shapes");
  Routing out;
  out.indices.resize(size_t(rows) * k);
  out.weights.resize(size_t(rows) * k);
  out.nearTie.resize(rows);
  std::vector<double> score(experts), biased(experts);
  std::vector<int> order(experts);
  for (int r = 0; r < rows; ++r) {
    for (int e = 0; e < experts; ++e) {
      double z = logits[size_t(r) * experts + e];
      double softplus = z > 20.0 ? z : std::log1p(std::exp(z));
      score[e] = std::isnan(softplus) ? 0.0 : std::sqrt(softplus);
      biased[e] = score[e] + bias[e];
    }
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return biased[a] > biased[b]; });
    double chosen = 0.0;
    for (int i = 0; i < k; ++i)
      chosen += score[order[i]];
    for (int i = 0; i < k; ++i) {
      out.indices[size_t(r) * k + i] = order[i];
      out.weights[size_t(r) * k + i] = float(scaling * score[order[i]] / std::max(chosen, 1e-20));
    }
    if (k < experts) {
      double kth = biased[order[k - 1]], next = biased[order[k]];
      out.nearTie[r] = std::fabs(kth - next) <= 1e-3 * std::max(std::fabs(kth), 1e-30);
    }
  }
  return out;
}

std::vector<float> sharedExpert(const Mxfp8Tensor &x, const BlockScaledE4m3 &gateUp,
                                const BlockScaledE4m3 &down, int intermediate, double limit) {
  if (gateUp.n != 2 * intermediate || gateUp.k != x.cols || down.k != intermediate)
    throw std::invalid_argument("sharedExpert: shapes");
  const int rows = x.rows;
  std::vector<float> both = gemvMxfp8xE4m3(x, gateUp);  // bf16 gs | us per row
  std::vector<float> h(size_t(rows) * intermediate);
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < intermediate; ++i) {
      double g = std::min<double>(both[size_t(r) * 2 * intermediate + i], limit);
      double u = both[size_t(r) * 2 * intermediate + intermediate + i];
      u = std::max(std::min(u, limit), -limit);
      double silu = roundDoubleToBf16(g / (1.0 + std::exp(-g)));
      h[size_t(r) * intermediate + i] = roundDoubleToBf16(silu * u);
    }
  Mxfp8Tensor hq = quantizeMxfp8Rows(h, rows, intermediate, formats::Mxfp8Variant::Standard);
  return gemvMxfp8xE4m3(hq, down);
}

} // namespace monodc::reference
