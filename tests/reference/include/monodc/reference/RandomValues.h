// Random test values in the formats the stages read: n draws from one
// distribution, optionally rounded to bf16. Shared by the numerics tests and
// the GPU harnesses.
#pragma once

#include "monodc/formats/NumberFormats.h"

#include <random>
#include <vector>

namespace monodc::reference {

inline std::vector<float> normalValues(std::mt19937 &rng, size_t n, float mean, float stddev,
                                       bool bf16 = false) {
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> v(n);
  for (float &x : v)
    x = bf16 ? formats::roundToBf16(dist(rng)) : dist(rng);
  return v;
}

inline std::vector<float> uniformValues(std::mt19937 &rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

} // namespace monodc::reference
