//===- LayerStep.h - one rank's decode layer, run as steps -------*- C++ -*-===//
//
// A serving engine runs a decoder layer as one step of K1 then K2 (the 30
// backbone layers) or of the FFN launch alone (the other 10), at the step
// width of each decode step. A LayerStep holds those launches for one rank
// and every width it serves, and does what the manifests say a step needs:
// it runs the launches in step order (step_tag), binds the inputs a launch
// is handed by an earlier one (`from` lines: K2's q, the cache and the
// attention seam's streams from K1) to one buffer, gives every output that
// lives only inside the step (no `result` line) a buffer of the rank's
// StepMemory, and binds the rank's one epoch buffer and one scratch buffer
// a kernel and width (StepMemory) to all of them. The
// caller binds the rest by name once for every launch and width: inputs
// (a row region sized for the widest step), weights, the step results, the
// peer table and the rank. Running only launches, so a stream being
// captured into a graph captures the step; each width's launches keep
// their own scratch, so the steps of several widths can share one graph.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_LAYERSTEP_H
#define MONODC_RUNTIME_LAYERSTEP_H

#include "monodc/runtime/Launcher.h"
#include "monodc/runtime/StepMemory.h"

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace monodc::runtime {

class LayerStep {
public:
  /// `widths`: for each step width, its launchers in step order (K1, K2; or
  /// the FFN launch), each created on `memory`'s device. Refuses launches
  /// out of step order, a step that does not end, a hand-over whose
  /// producer is not an earlier launch of the step or does not match, a
  /// region name two launches use for different memory, a width given
  /// twice, launches of different grids, and launches that
  /// declare no step result (not a layer's launches).
  static Result<std::unique_ptr<LayerStep>>
  create(std::shared_ptr<StepMemory> memory,
         std::vector<std::vector<std::unique_ptr<Launcher>>> widths);

  /// Binds `region` (or kPeersArgument) of every launch and width that has
  /// it. Refuses a region no launch has and one the step binds itself
  /// (handed over, step-internal, the epoch buffer).
  Status bind(const std::string &region, void *devicePointer);
  /// bind() of a buffer of `bytes` bytes, checked against every launch and
  /// width it binds (Launcher::bindBuffer: a row input must hold the widest
  /// step's rows; a region sized at launch gets the rows the buffer holds).
  /// A refused call changes nothing.
  Status bindBuffer(const std::string &region, void *devicePointer, int64_t bytes);
  /// The row count of a region sized at launch (a KV cache's pages) in
  /// every launch and width that has it or is handed it.
  Status setRows(const std::string &region, int64_t rows);
  /// The column count of a region whose columns are given at launch (a
  /// block table's pages a row) in every launch and width that has it. Set
  /// it before binding a buffer through bindBuffer, which checks the buffer
  /// against the columns then set.
  Status setCols(const std::string &region, int64_t cols);
  /// The rank of every launch with peer memory.
  Status bindRank(int rank);

  /// The step widths (rows), ascending.
  std::vector<int64_t> widths() const;
  /// Launches the step of width `rows` on `stream`, in step order; every
  /// argument must be bound (checked before the first launch, naming what
  /// is missing).
  Status run(int64_t rows, void *stream);

  /// The bounded waits' budget (microseconds; 0: the default 5 s) in the
  /// rank's epoch buffer; call it while none of the rank's launches runs.
  Status setWaitBudget(uint32_t microseconds);
  /// Waits for `stream`, then an error naming the wait if a poll of the
  /// last step gave up (the launch whose step tag the record holds).
  Status checkWaits(void *stream);
  /// After a wait gave up: zeroes the epoch buffer and every launch's
  /// scratch (the peer buffers are the caller's to zero).
  Status reset();

private:
  struct Width {
    int64_t rows = 0;
    std::vector<std::unique_ptr<Launcher>> launches;
  };
  LayerStep(std::shared_ptr<StepMemory> memory, std::vector<Width> widths)
      : memory_(std::move(memory)), widths_(std::move(widths)) {}
  Status prepare();
  /// Every (launch, argument) that binding `region` binds: the region where
  /// a launch has it, and each input handed from it.
  std::vector<std::pair<Launcher *, std::string>> bindingsOf(const std::string &region) const;
  /// bind() and bindBuffer()'s binding: each of bindingsOf(region), with its
  /// size (Launcher::bindBuffer) where `bytes` is given.
  Status bindEach(const std::string &region, void *devicePointer, const int64_t *bytes);

  std::shared_ptr<StepMemory> memory_;
  std::vector<Width> widths_;
  /// Regions the step binds itself: the caller may not.
  std::set<std::string> internal_;
  const Width *lastRun_ = nullptr;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_LAYERSTEP_H
