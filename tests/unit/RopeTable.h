// The cos/sin table the RoPE stages read, shared by the numerics tests.
#ifndef MONODC_TESTS_ROPETABLE_H
#define MONODC_TESTS_ROPETABLE_H

#include "monodc/stages/ModelConfig.h"

#include <cmath>
#include <vector>

namespace monodc::testing {

/// f32 [positions, ropeDim]: row p holds cos(p w_j) for j < ropeDim / 2, then
/// sin(p w_j), w_j = 10000^(-2j / ropeDim).
inline std::vector<float> ropeTable(const stages::ModelConfig &c) {
  const int half = int(c.ropeDim) / 2;
  std::vector<float> table(size_t(c.ropePositions) * c.ropeDim);
  for (int p = 0; p < int(c.ropePositions); ++p)
    for (int j = 0; j < half; ++j) {
      const double angle = p * std::pow(10000.0, -2.0 * j / c.ropeDim);
      table[size_t(p) * c.ropeDim + j] = float(std::cos(angle));
      table[size_t(p) * c.ropeDim + half + j] = float(std::sin(angle));
    }
  return table;
}

} // namespace monodc::testing

#endif
