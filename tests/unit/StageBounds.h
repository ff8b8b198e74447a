// The docs/numerics.md section 6 stage bound as a GoogleTest expectation, shared by
// the numerics tests: relative error <= 1e-2, cosine >= 0.9999, all finite.
#ifndef MONODC_TESTS_STAGEBOUNDS_H
#define MONODC_TESTS_STAGEBOUNDS_H

#include "monodc/reference/Reference.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace monodc::testing {

inline void expectWithinBounds(const std::vector<float> &got, const std::vector<float> &want,
                               const std::string &what) {
  reference::Comparison c = reference::compare(got, want);
  EXPECT_TRUE(reference::withinStageBounds(c))
      << what << ": relative error " << c.relativeError << ", cosine " << c.cosine
      << (c.nonFinite ? ", non-finite values" : "");
}

} // namespace monodc::testing

#endif
