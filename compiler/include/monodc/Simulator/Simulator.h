//===- Simulator.h - execute a synchronized launch on the CPU ---*- C++ -*-===//
#ifndef MONODC_SIMULATOR_SIMULATOR_H
#define MONODC_SIMULATOR_SIMULATOR_H

#include "monodc/Simulator/LaunchMemory.h"

#include <memory>
#include <string>
#include <vector>

namespace monodc::sim {

/// How the scheduler picks the next CTA among those that may run (the
/// CTAs of all ranks numbered rank * grid + cta).
enum class SchedulePolicy {
  RoundRobin, ///< CTAs in increasing order, from the seed's CTA on
  Reverse,    ///< CTAs in decreasing order, from the seed's CTA on
  Random,     ///< a seeded random CTA each turn
  StarveOne,  ///< starvedCta runs only when every other is blocked or done;
              ///< the others in a seeded random order
};

/// The policy's name, as `monodc simulate` prints it.
const char *policyName(SchedulePolicy policy);

struct Schedule {
  SchedulePolicy policy = SchedulePolicy::RoundRobin;
  /// Random and StarveOne: the generator's seed. RoundRobin and Reverse:
  /// seed mod CTAs is the first CTA, and each CTA runs 1 + (seed / CTAs)
  /// mod 3 turns in a row before the next one gets its turn.
  uint64_t seed = 0;
  int64_t starvedCta = 0;
  bool trace = false;  ///< record the slices of SimulationResult::trace
  /// A rank that never runs (a lost process: it launches nothing and
  /// publishes nothing); -1: none. The others' polls of it give up past
  /// their budget (SimulationResult::gaveUp).
  int64_t lostRank = -1;
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
  int64_t site = -1;                ///< the wait's site (waitSites); -1: the stream
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
  /// Past a deadlock, the bounded waits' budgets run out: per rank, the poll
  /// that gave up first (it blocked first), which wrote the rank's
  /// wait-fault record; the rank's later misses gave up at once and the
  /// launch ran to its end. In the order the ranks gave up.
  std::vector<Waiter> gaveUp;
  bool ended = false;          ///< every CTA (but a lost rank's) reached the step's end
  int64_t steps = 0;           ///< tasks executed
  std::vector<TraceSlice> trace; ///< with Schedule::trace, in turn order
  std::string describe() const;
};

/// A launch made ready for many schedules: its stages, placement and
/// claims, and every region an op names resolved once, instead of at each
/// op a schedule executes. Read-only once made, so several threads may run
/// schedules of one PreparedLaunch at once, each with its own memories (the
/// read-only regions may be shared: LaunchMemory::shareReadOnly).
class PreparedLaunch {
public:
  /// Fails (with a diagnostic) on a launch the fusion passes did not
  /// synchronize and place.
  static mlir::FailureOr<std::unique_ptr<PreparedLaunch>> prepare(mono::LaunchOp launch);
  ~PreparedLaunch();
  mono::LaunchOp launch() const;

  struct Plan; ///< (Simulator.cpp)
  const Plan &plan() const { return *plan_; }

private:
  explicit PreparedLaunch(std::unique_ptr<Plan> plan);
  std::unique_ptr<Plan> plan_;
};

/// Executes the IR the HIP printer prints (after the fusion passes): every
/// CTA of the grid is a resumable program walking the stages in order, a
/// poll that is not yet satisfied yields, and `schedule` picks the next CTA.
/// Tile building blocks follow the device library's order of arithmetic, so
/// a GPU run can be compared value for value. A deadlock is reported as the
/// wait-for set, never a hang, and then run on as the bounded waits do on the
/// GPU (SimulationResult::gaveUp) to show that the launch ends; an op error (an access outside a region) is a
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

/// simulateRanks of a prepared launch: what a run of many schedules calls.
mlir::FailureOr<SimulationResult> simulateRanks(const PreparedLaunch &launch,
                                                const std::vector<LaunchMemory *> &memories,
                                                const Schedule &schedule = {});

/// Schedule i of a sweep: round-robin, reverse, starve-one and random in
/// turn. The j-th round-robin (reverse) schedule, j = i / 4, starts at CTA
/// j mod ctas and lets each CTA run 1 + (j / ctas) mod 3 turns in a row;
/// the j-th starve-one starves CTA j mod ctas; the seeded ones take their
/// seed from `seed` and i.
Schedule sweepSchedule(int64_t i, uint64_t seed, int64_t ctas);

struct SweepOptions {
  int64_t schedules = 1000;
  uint64_t seed = 1;
  unsigned threads = 1; ///< schedules run side by side
  bool trace = false;   ///< keep every schedule's trace (SweepResult::traces)
  int64_t lostRank = -1; ///< Schedule::lostRank of every schedule
};

/// What a sweep found. Outputs are the bytes of every output region of
/// every rank; schedule 0's are the reference.
struct SweepResult {
  int64_t schedules = 0; ///< schedules run
  int64_t outcomes = 0;  ///< distinct outputs among them
  /// The first schedule whose outputs differ from schedule 0's, with the
  /// first output region (and its rank) that differs; -1 when none does.
  int64_t firstDiffering = -1;
  std::string differingRegion;
  int64_t differingRank = 0;
  /// A schedule that deadlocked or failed (an op's diagnostic was emitted)
  /// stops the sweep: the lowest such schedule and what happened to it.
  int64_t failedSchedule = -1;
  std::string failure;
  /// Schedule 0's memories, one a rank.
  std::vector<std::unique_ptr<LaunchMemory>> first;
  /// With SweepOptions::trace, each schedule's slices, by schedule.
  std::vector<std::vector<TraceSlice>> traces;
};

/// Runs `options.schedules` schedules (sweepSchedule) of a prepared launch,
/// each on fresh memories whose input and weight regions are those of
/// `inputs` (one a rank, shared read-only, never copied), and compares their
/// outputs. A difference does not stop it; a deadlock or an op error does.
/// Schedules run on `options.threads` threads. The read-only GEMV weights
/// are decoded once, and each thread reuses a gemv_rows or attend_chunk
/// result where the op reads exactly the same bytes again (OpMemo in
/// Simulator.cpp): later schedules cost a fraction of the first, and a
/// race that changes what such an op reads makes it compute again.
SweepResult sweepSchedules(const PreparedLaunch &launch,
                           const std::vector<const LaunchMemory *> &inputs,
                           const SweepOptions &options);

} // namespace monodc::sim

#endif
