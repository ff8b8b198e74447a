// Token groups of the GEMV stages with few weight row blocks: a step of up
// to 6 tokens is one group; wider steps split into groups of the largest
// divisor not above 6, so that every group has the same tokens.
#include "monodc/stages/GemvStage.h"

#include <gtest/gtest.h>

namespace {

TEST(GemvTokenGroup, OneRequestIsOneGroup) {
  for (int64_t rows = 1; rows <= 6; ++rows)
    EXPECT_EQ(monodc::stages::gemvTokenGroup(rows), rows) << rows;
}

TEST(GemvTokenGroup, WiderStepsSplitEvenly) {
  EXPECT_EQ(monodc::stages::gemvTokenGroup(12), 6);
  EXPECT_EQ(monodc::stages::gemvTokenGroup(48), 6);
  EXPECT_EQ(monodc::stages::gemvTokenGroup(10), 5);
  EXPECT_EQ(monodc::stages::gemvTokenGroup(9), 3);
  EXPECT_EQ(monodc::stages::gemvTokenGroup(8), 4);
  EXPECT_EQ(monodc::stages::gemvTokenGroup(7), 1);  // a prime: one token a task
}

} // namespace
