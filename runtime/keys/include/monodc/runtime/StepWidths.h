// The step widths kernels are built for. A serving engine captures its
// decode graphs at a few widths and pads a step to the next one, marking the
// pad rows with slot_mapping -1 (docs/numerics.md section 7); kernels for
// those widths serve every step of 1..48 rows, instead of one kernel a row
// count.
#ifndef MONODC_RUNTIME_STEPWIDTHS_H
#define MONODC_RUNTIME_STEPWIDTHS_H

#include <array>
#include <cstdint>
#include <optional>

namespace monodc::runtime {

/// The widest step a kernel serves.
inline constexpr int64_t kMaxStepRows = 48;

/// The default widths: 1, 2, 4, 8, then every 8 up to 48 (vLLM's default
/// decode graph sizes up to 48).
inline constexpr std::array<int64_t, 9> kStepWidths = {1, 2, 4, 8, 16, 24, 32, 40, 48};

/// The smallest step width of at least `rows`; none outside 1..kMaxStepRows.
std::optional<int64_t> stepWidthFor(int64_t rows);

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_STEPWIDTHS_H
