// One output region of a launch on the GPU against the simulator's bytes:
// byte records exactly, values within the docs/numerics.md stage bounds, or, where
// a stage re-quantizes a tensor-core sum (see LaunchCheck.cpp), within the
// whole layer's bound (every row's cosine >= 0.999). Shared by the launch
// check (the harness's own driver calls) and the launcher check (the
// runtime library's C ABI).
#ifndef MONODC_BENCH_GPU_REGIONCOMPARE_H
#define MONODC_BENCH_GPU_REGIONCOMPARE_H

#include "monodc/reference/Reference.h"

#include "RegionCodec.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gpu {

/// The whole layer's bound, row by row: every row's cosine >= 0.999.
inline bool withinLayerBound(const std::vector<float> &got, const std::vector<float> &want,
                             int64_t rows) {
  namespace ref = monodc::reference;
  if (rows <= 0 || got.size() != want.size() || got.size() % size_t(rows) != 0)
    return false;
  const size_t cols = got.size() / size_t(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> a(got.begin() + r * cols, got.begin() + (r + 1) * cols),
        b(want.begin() + r * cols, want.begin() + (r + 1) * cols);
    const ref::Comparison c = ref::compare(a, b);
    if (c.nonFinite || c.cosine < 0.999)
      return false;
  }
  return true;
}

struct RegionVerdict {
  size_t equalUnits = 0, units = 0;  // values (bytes of a byte region) equal to the simulator's
  monodc::reference::Comparison comparison;
  bool ok = false;
  bool layerBound = false;  // passed on the layer's bound, not the stage's
  bool identical = false;
};

/// `got` against `want`, both a region's storage bytes in `format`, `rows` rows.
inline RegionVerdict compareRegion(const std::string &format, int64_t rows, const std::string &got,
                                   const std::string &want) {
  namespace ref = monodc::reference;
  RegionVerdict v;
  const size_t unit = format == "f32" ? 4 : (format == "bf16" ? 2 : 1);
  for (size_t i = 0; i + unit <= got.size() && i + unit <= want.size(); i += unit)
    v.equalUnits += std::memcmp(got.data() + i, want.data() + i, unit) == 0;
  v.units = got.size() / unit;
  v.identical = got == want;
  if (format == "byte") {
    v.comparison.relativeError = v.identical ? 0.0 : 1.0;
    v.comparison.cosine = v.identical ? 1.0 : 0.0;
    v.ok = v.identical;
    return v;
  }
  const std::vector<float> g = decodeRegion(format, got), w = decodeRegion(format, want);
  v.comparison = ref::compare(g, w);
  v.ok = ref::withinStageBounds(v.comparison);
  if (!v.ok && withinLayerBound(g, w, rows))
    v.ok = v.layerBound = true;
  return v;
}

} // namespace gpu

#endif // MONODC_BENCH_GPU_REGIONCOMPARE_H
