//===- WaitFault.h - what a bounded wait that gave up left behind -*- C++ -*-===//
//
// Every poll of a launch is bounded: a poll that waits past the rank's
// budget gives up, the first to do so writes the wait-fault record into the
// epoch buffer (monodc/device/epoch_shape.h), and the launch runs to its end.
// This file reads that record and names the wait through the manifest's
// wait sites.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_WAITFAULT_H
#define MONODC_RUNTIME_WAITFAULT_H

#include "monodc/device/epoch_shape.h"
#include "monodc/runtime/LaunchInterface.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace monodc::runtime {

/// The epoch buffer's record words, as the device writes them.
using WaitFaultWords = std::array<uint32_t, MONO_FAULT_WORDS>;

/// Bytes from the start of the epoch buffer to the record of a launch with
/// this grid.
inline int64_t waitFaultOffsetBytes(int64_t grid) { return 4 * mono_epoch_fault_word(grid); }

struct WaitFault {
  uint32_t rank = 0, cta = 0, site = 0, flag = 0;
  uint32_t expectedTag = 0, seenTag = 0;
  uint32_t budgetMicroseconds = 0; ///< the budget in force (the default where 0 was set)
};

/// The fault the record holds, or none.
std::optional<WaitFault> readWaitFault(const WaitFaultWords &words);

/// One line naming the wait: rank, CTA, stage, flags (and the peer rank),
/// flag, tags and budget, with the stage and flags from `interface`'s wait
/// sites (a site it does not list is named by its number).
std::string describeWaitFault(const WaitFault &fault, const LaunchInterface &interface);

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_WAITFAULT_H
