// The step widths (StepWidths.h): every step of 1..48 rows has a width, the
// smallest one at least as wide, and nothing outside 1..48 has one.
#include "monodc/runtime/StepWidths.h"

#include <gtest/gtest.h>

using monodc::runtime::kMaxStepRows;
using monodc::runtime::kStepWidths;
using monodc::runtime::stepWidthFor;

TEST(StepWidths, EveryStepRunsOnTheSmallestWidthThatHoldsIt) {
  for (int64_t rows = 1; rows <= kMaxStepRows; ++rows) {
    std::optional<int64_t> width = stepWidthFor(rows);
    ASSERT_TRUE(width.has_value()) << rows;
    EXPECT_GE(*width, rows);
    for (int64_t narrower : kStepWidths)
      if (narrower < *width)
        EXPECT_LT(narrower, rows) << rows << " would fit " << narrower;
  }
  EXPECT_EQ(stepWidthFor(6), 8);
  EXPECT_EQ(stepWidthFor(8), 8);
  EXPECT_EQ(stepWidthFor(41), 48);
  EXPECT_EQ(kStepWidths.back(), kMaxStepRows);
}

TEST(StepWidths, NoWidthOutsideOneTo48) {
  EXPECT_FALSE(stepWidthFor(0).has_value());
  EXPECT_FALSE(stepWidthFor(-1).has_value());
  EXPECT_FALSE(stepWidthFor(49).has_value());
}
