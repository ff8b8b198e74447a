// Random f32 test values for the device library's host tests: mantissas in
// (-1, 1) scaled by 2^e for e in [-span, span]; with `specialEvery` > 0,
// about one value in specialEvery each becomes -0, a NaN and -inf, the
// values that tell reduction orders and NaN rules apart.
#pragma once

#include <cmath>
#include <limits>
#include <random>
#include <vector>

inline std::vector<float> randomValues(int n, std::mt19937 &rng, int span, int specialEvery) {
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-span, span),
      pick(0, specialEvery > 0 ? specialEvery - 1 : 0);
  std::vector<float> v(n);
  for (float &x : v) {
    x = std::ldexp(mantissa(rng), exponent(rng));
    if (specialEvery > 0) {
      const int p = pick(rng);
      if (p == 0) x = -0.0f;
      if (p == 1) x = std::numeric_limits<float>::quiet_NaN();
      if (p == 2) x = -std::numeric_limits<float>::infinity();
    }
  }
  return v;
}
