// formats::ExactSum and the MFMA steps built on it: one rounding of the
// exact sum, and non-finite terms giving the IEEE sum (they once made the
// rounding loop spin forever: a pad row's NaN through a scaled GEMV).
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "monodc/formats/ExactSum.h"

namespace fmts = monodc::formats;

namespace {
const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();
} // namespace

TEST(ExactSum, RoundsTheExactSumOnce) {
  // 1 + 2^-60 - 1 is 2^-60 exactly; summed in double it is 0.
  fmts::ExactSum sum;
  sum.add(1.0);
  sum.add(std::ldexp(1.0, -60));
  sum.add(-1.0);
  EXPECT_EQ(sum.toFloat(), std::ldexp(1.0f, -60));
  // 1 + 2^-24 + 2^-60 is just above the f32 midpoint: rounds up, where the
  // midpoint alone would go to the even 1.
  fmts::ExactSum above;
  for (double x : {1.0, std::ldexp(1.0, -24), std::ldexp(1.0, -60)})
    above.add(x);
  EXPECT_EQ(above.toFloat(), 1.0f + std::ldexp(1.0f, -23));
  fmts::ExactSum midpoint;
  for (double x : {1.0, std::ldexp(1.0, -24)})
    midpoint.add(x);
  EXPECT_EQ(midpoint.toFloat(), 1.0f);
}

TEST(ExactSum, NonFiniteTermsGiveTheIeeeSum) {
  const double finite[4] = {1.0, 2.0, 3.0, 4.0};
  EXPECT_EQ(fmts::scaledMfmaStep(0.5f, finite), 10.5f);
  const double nan[4] = {1.0, kNan, 3.0, 4.0};
  EXPECT_TRUE(std::isnan(fmts::scaledMfmaStep(0.0f, nan)));
  const double inf[4] = {1.0, kInf, 3.0, 4.0};
  EXPECT_EQ(fmts::scaledMfmaStep(0.0f, inf), INFINITY);
  const double both[4] = {-kInf, kInf, 0.0, 0.0};
  EXPECT_TRUE(std::isnan(fmts::scaledMfmaStep(0.0f, both)));
  EXPECT_TRUE(std::isnan(fmts::scaledMfmaStep(NAN, finite)));
  double products[32] = {};
  products[5] = -kInf;
  EXPECT_EQ(fmts::bf16MfmaStep(1.0f, products), -INFINITY);
}
