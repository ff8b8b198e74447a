// A layer step against the reference layer (see LayerComparison.h).
#include "monodc/reference/LayerComparison.h"

#include <algorithm>
#include <cmath>

namespace monodc::reference {

double cosineOver(const std::vector<float>& got, const std::vector<float>& want, size_t begin,
                  size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = begin; i < begin + n; ++i) {
    ab += double(got[i]) * want[i];
    aa += double(got[i]) * got[i];
    bb += double(want[i]) * want[i];
  }
  return aa == 0 && bb == 0 ? 1.0 : ab / std::sqrt(aa * bb);
}

int LayerComparison::excludedCount() const {
  return int(std::count(excluded.begin(), excluded.end(), true));
}

double LayerComparison::minCosine() const {
  double least = 1.0;
  for (size_t t = 0; t < tokenCosines.size(); ++t) {
    if (excluded[t]) continue;
    if (std::isnan(tokenCosines[t])) return tokenCosines[t];  // a non-finite output
    least = std::min(least, tokenCosines[t]);
  }
  return least;
}

bool LayerComparison::xPasses() const { return minCosine() >= kLayerCosine && !x.nonFinite; }

LayerComparison compareLayer(const LayerOutputs& got, const LayerOutputs& want, int hidden) {
  const size_t h = size_t(hidden);
  LayerComparison c;
  c.excluded = want.nearTie;
  std::vector<float> gotX, wantX;
  for (size_t t = 0; t < want.nearTie.size(); ++t) {
    c.tokenCosines.push_back(cosineOver(got.x, want.x, t * h, h));
    if (want.nearTie[t]) continue;
    gotX.insert(gotX.end(), got.x.begin() + t * h, got.x.begin() + (t + 1) * h);
    wantX.insert(wantX.end(), want.x.begin() + t * h, want.x.begin() + (t + 1) * h);
  }
  c.x = compare(gotX, wantX);
  c.residual = compare(got.residual, want.residual);
  c.pre = compare(got.pre, want.pre);
  c.post = compare(got.post, want.post);
  c.comb = compare(got.comb, want.comb);
  return c;
}

}  // namespace monodc::reference
