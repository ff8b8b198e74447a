// The MoE router, routing, shared and routed experts (docs/numerics.md section 5).
#include "monodc/reference/Moe.h"

#include "monodc/formats/AiterShuffle.h"
#include "monodc/formats/NumberFormats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

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
    // The weights in f32 as the contract pins them: S summed in pick order,
    // r = scaling / max(S, 1e-20), w = s * r (the scores rounded to f32 once).
    float chosen = 0.0f;
    for (int i = 0; i < k; ++i)
      chosen += float(score[order[i]]);
    const float ratio = float(scaling) / std::max(chosen, 1e-20f);
    for (int i = 0; i < k; ++i) {
      out.indices[size_t(r) * k + i] = order[i];
      out.weights[size_t(r) * k + i] = float(score[order[i]]) * ratio;
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

// ---------------------------------------------------------------- routed experts

namespace {

void requireShape(bool condition, const char *function, const std::string &what) {
  if (!condition)
    throw std::invalid_argument(std::string(function) + ": " + what);
}

// MXFP8r (the routed flavour) of one row, dequantized exactly.
std::vector<double> routedActivation(const std::vector<float> &row) {
  const int width = int(row.size());
  const Mxfp8Tensor q = quantizeMxfp8Rows(row, 1, width, formats::Mxfp8Variant::Routed);
  std::vector<double> out(width);
  for (int i = 0; i < width; ++i)
    out[i] = formats::e4m3Value(q.codes[i]) * scaleValue(q.scales[i / formats::kMxGroupSize]);
  return out;
}

// a . W[expert][row]^T summed in double and rounded once to f32 (the spec's f32
// accumulation, without its order-dependent roundings).
float dotRow(const std::vector<double> &a, const Mxfp4Weights &w, int expert, int row) {
  const size_t base = (size_t(expert) * w.n + row) * w.k;
  const size_t scaleBase = (size_t(expert) * w.n + row) * (w.k / formats::kMxGroupSize);
  // The 16 code values and each group's scale looked up once (the same
  // products in the same order: the full-size layer's experts take seconds).
  static const std::array<double, 16> values = [] {
    std::array<double, 16> v;
    for (int c = 0; c < 16; ++c)
      v[c] = formats::e2m1Value(uint8_t(c));
    return v;
  }();
  double sum = 0.0;
  for (int g = 0; g < w.k / int(formats::kMxGroupSize); ++g) {
    const double scale = scaleValue(w.scales[scaleBase + g]);
    for (int k = g * int(formats::kMxGroupSize); k < (g + 1) * int(formats::kMxGroupSize); ++k)
      sum += a[k] * values[w.codes[base + k] & 15] * scale;
  }
  return float(sum);
}

void checkMxfp4(const Mxfp4Weights &w, const char *function) {
  requireShape(w.experts >= 0 && w.n >= 0 && w.k >= 0 && w.k % formats::kMxGroupSize == 0,
               function, "an MXFP4 weight needs k a multiple of 32");
  const size_t elements = size_t(w.experts) * w.n * w.k;
  requireShape(w.codes.size() == elements && w.scales.size() == elements / formats::kMxGroupSize,
               function, "an MXFP4 weight's codes or scales do not match its dims");
}

} // namespace

Mxfp4Weights quantizeMxfp4Weights(const std::vector<float> &w, int experts, int n, int k) {
  requireShape(experts >= 0 && n >= 0 && k >= 0 && k % formats::kMxGroupSize == 0,
               "quantizeMxfp4Weights", "k = " + std::to_string(k) + " is not a multiple of 32");
  requireShape(w.size() == size_t(experts) * n * k, "quantizeMxfp4Weights",
               "w is not experts x n x k");
  Mxfp4Weights out{std::vector<uint8_t>(w.size()),
                   std::vector<uint8_t>(w.size() / formats::kMxGroupSize), experts, n, k};
  for (size_t row = 0; row < size_t(experts) * n; ++row)
    formats::quantizeMxfp4(w.data() + row * k, k, out.codes.data() + row * k,
                           out.scales.data() + row * (k / formats::kMxGroupSize));
  return out;
}

RoutedExpertOutput routedExpert(const std::vector<float> &x, const Mxfp4Weights &w13,
                                const Mxfp4Weights &w2, int expert, double limit) {
  checkMxfp4(w13, "routedExpert");
  checkMxfp4(w2, "routedExpert");
  const int hidden = w13.k, intermediate = w2.k;
  // I is a multiple of 32 (w2's k), so w13's rows are whole 16-row tiles.
  requireShape(w13.n == 2 * intermediate && w2.n == hidden && w13.experts == w2.experts,
               "routedExpert", "w13 must be [E][2I][H] and w2 [E][H][I]");
  requireShape(x.size() == size_t(hidden), "routedExpert", "x is not H wide");
  requireShape(expert >= 0 && expert < w13.experts, "routedExpert",
               "expert " + std::to_string(expert) + " out of range");

  const std::vector<double> xr = routedActivation(x);
  RoutedExpertOutput out{std::vector<float>(intermediate), std::vector<float>(hidden)};
  for (int i = 0; i < intermediate; ++i) {
    // Gate row i sits in tile 2 (i / 16) of w13, up row i in the tile after it.
    const int gateRow = (i / 16) * 32 + i % 16;
    const double g = std::min<double>(dotRow(xr, w13, expert, gateRow), limit);
    const double u = std::clamp<double>(dotRow(xr, w13, expert, gateRow + 16), -limit, limit);
    out.hidden[i] = roundDoubleToBf16(g / (1.0 + std::exp(-g)) * u);
  }
  const std::vector<double> hr = routedActivation(out.hidden);
  for (int j = 0; j < hidden; ++j)
    out.down[j] = dotRow(hr, w2, expert, j);
  return out;
}

std::vector<float> combineRoutedExperts(const std::vector<float> &downs, int rows, int hidden,
                                        const Routing &routing, const std::vector<float> &shared) {
  requireShape(rows > 0 && hidden > 0 && routing.indices.size() % rows == 0 &&
                   routing.weights.size() == routing.indices.size(),
               "combineRoutedExperts", "routing is not rows x k");
  requireShape(downs.size() == routing.indices.size() * hidden &&
                   shared.size() == size_t(rows) * hidden,
               "combineRoutedExperts", "downs must be rows x k x H and shared rows x H");
  const size_t k = routing.indices.size() / rows;
  std::vector<float> out(shared.size());
  for (int r = 0; r < rows; ++r) {
    // o_k = bf16(d_k w_k) (the product of two f32 is exact in double), summed
    // in f32 in pick order, rounded once to bf16; then + the shared expert.
    std::vector<float> routed(hidden, 0.0f);
    for (size_t slot = 0; slot < k; ++slot) {
      const double weight = routing.weights[r * k + slot];
      const float *d = downs.data() + (r * k + slot) * hidden;
      for (int j = 0; j < hidden; ++j)
        routed[j] += roundDoubleToBf16(d[j] * weight);
    }
    for (int j = 0; j < hidden; ++j)
      out[size_t(r) * hidden + j] = roundDoubleToBf16(
          double(roundDoubleToBf16(routed[j])) + shared[size_t(r) * hidden + j]);
  }
  return out;
}

std::vector<float> routedExperts(const std::vector<float> &x, int rows, const Routing &routing,
                                 const Mxfp4Weights &w13, const Mxfp4Weights &w2,
                                 const std::vector<float> &shared, double limit) {
  const int hidden = w13.k;
  requireShape(rows > 0 && routing.indices.size() % rows == 0, "routedExperts",
               "routing is not rows x k");
  requireShape(x.size() == size_t(rows) * hidden, "routedExperts", "x must be rows x H");
  const size_t k = routing.indices.size() / rows;
  std::vector<float> downs;
  for (int r = 0; r < rows; ++r) {
    const std::vector<float> token(x.begin() + size_t(r) * hidden,
                                   x.begin() + size_t(r + 1) * hidden);
    for (size_t slot = 0; slot < k; ++slot) {
      const std::vector<float> d =
          routedExpert(token, w13, w2, routing.indices[r * k + slot], limit).down;
      downs.insert(downs.end(), d.begin(), d.end());
    }
  }
  return combineRoutedExperts(downs, rows, hidden, routing, shared);
}

} // namespace monodc::reference
