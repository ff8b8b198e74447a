// The step widths kernels are built for (StepWidths.h).
#include "monodc/runtime/StepWidths.h"

std::optional<int64_t> monodc::runtime::stepWidthFor(int64_t rows) {
  if (rows < 1 || rows > kMaxStepRows)
    return std::nullopt;
  for (int64_t width : kStepWidths)
    if (width >= rows)
      return width;
  return std::nullopt;
}
