//===- Simulator.h - execute a synchronized launch on the CPU ---*- C++ -*-===//
#ifndef MONODC_SIMULATOR_SIMULATOR_H
#define MONODC_SIMULATOR_SIMULATOR_H

#include "monodc/Simulator/LaunchMemory.h"

#include <string>
#include <vector>

namespace monodc::sim {

enum class SchedulePolicy {
  RoundRobin, ///< CTAs in turn
  Random,     ///< a seeded random CTA each step
  StarveOne,  ///< one CTA runs only when every other is blocked or done
};

struct Schedule {
  SchedulePolicy policy = SchedulePolicy::RoundRobin;
  uint64_t seed = 0;
  int64_t starvedCta = 0;
  bool trace = false;  ///< record the slices of SimulationResult::trace
};

/// What one CTA did over a span of scheduler turns (the simulator's clock:
/// turn t is the t-th time the scheduler let a CTA run): a piece of a task
/// ([begin, begin + 1): the CTA ran until the task finished or a poll
/// blocked it), or a wait ([begin, end): blocked on `flags` until the
/// scheduler picked the CTA again).
struct TraceSlice {
  int64_t rank = 0, cta = 0;
  std::string stage;
  int64_t task = 0;
  std::string flags;  ///< empty for a piece of a task
  int64_t begin = 0, end = 0;
};

/// One CTA that cannot go on: what it waits for.
struct Waiter {
  int64_t rank = 0;
  int64_t cta = 0;
  std::string stage;
  int64_t task = 0;
  std::string flags;                ///< the producer's flags region
  std::vector<std::string> regions; ///< the data behind those flags
  int64_t first = 0, count = 0;
  uint32_t expectedTag = 0;
  int64_t blockingFlag = 0; ///< the first flag without the tag
  uint32_t seenTag = 0;     ///< what that flag holds
};

struct SimulationResult {
  bool deadlock = false;
  std::vector<Waiter> waiters; ///< the wait-for set when deadlocked
  int64_t steps = 0;           ///< tasks executed
  std::vector<TraceSlice> trace; ///< with Schedule::trace, in turn order
  std::string describe() const;
};

/// Executes the IR the HIP printer prints (after the fusion passes): every
/// CTA of the grid is a resumable program walking the stages in order, a
/// poll that is not yet satisfied yields, and `schedule` picks the next CTA.
/// Tile building blocks follow the device library's order of arithmetic, so
/// a GPU run can be compared value for value. A deadlock is reported as the
/// wait-for set, never a hang; an op error (an access outside a region) is a
/// failure with a diagnostic. The simulator never calls the CPU reference.
mlir::FailureOr<SimulationResult> simulate(mono::LaunchOp launch, LaunchMemory &memory,
                                           const Schedule &schedule = {});

/// The same launch on every tensor-parallel rank at once, each rank a
/// separate simulated device with its own memory (memories[r] for rank r);
/// peer stores land in the destination rank's memory. The scheduler picks
/// among all CTAs of all ranks.
mlir::FailureOr<SimulationResult> simulateRanks(mono::LaunchOp launch,
                                                const std::vector<LaunchMemory *> &memories,
                                                const Schedule &schedule = {});

} // namespace monodc::sim

#endif
