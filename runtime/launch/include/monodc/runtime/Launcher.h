//===- Launcher.h - load a code object and launch it on a stream -*- C++ -*-===//
#ifndef MONODC_RUNTIME_LAUNCHER_H
#define MONODC_RUNTIME_LAUNCHER_H

#include "monodc/runtime/ArgumentLayout.h"
#include "monodc/runtime/DeviceRuntime.h"
#include "monodc/runtime/WaitFault.h"

#include <map>
#include <memory>
#include <optional>

namespace monodc::runtime {

/// One launch of one build key on one device, over HIP or the CUDA driver
/// (DeviceRuntime). Creating it loads the code object (an AMD code object,
/// or a cubin), lets the kernel take the manifest's dynamic shared memory,
/// checks that the whole grid is resident (a persistent launch whose
/// CTAs cannot all run at once would deadlock), and allocates and zeroes the
/// launch's scratch buffer once; it is never cleared again, as the epoch
/// protocol expects. The caller binds the argument regions (inputs, weights,
/// outputs, peer memory) and the epoch buffer, which every launch of a step
/// sequence shares and which is zeroed once when allocated; then launches any
/// number of times. A launch with peer memory (TP: the all-reduce) also takes
/// `mono_peers`, a device array of every rank's peer buffer
/// (LaunchInterface::peerBufferBytes() each, zeroed once, in rank order; the
/// caller allocates and exchanges them), and its rank (bindRank). Not
/// thread-safe.
class Launcher {
public:
  /// `ranksOnDevice`: how many ranks' launches of this kernel run on the
  /// device at once (TP ranks sharing one GPU, each with this grid); their
  /// grids must be resident together, or a rank's CTAs could wait for
  /// CTAs that never start.
  static Result<std::unique_ptr<Launcher>> create(std::shared_ptr<DeviceRuntime> runtime,
                                                  const std::vector<char> &codeObject,
                                                  const LaunchInterface &interface,
                                                  const ArgumentLayout &layout, int device,
                                                  int ranksOnDevice = 1);
  ~Launcher();
  Launcher(const Launcher &) = delete;
  Launcher &operator=(const Launcher &) = delete;

  /// Binds an argument region, kEpochArgument or kPeersArgument to device memory.
  Status bind(const std::string &region, void *devicePointer);
  /// bind() of a buffer whose size the caller knows: refuses one smaller
  /// than the argument needs (naming both sizes), and for a region sized at
  /// launch, one that is not a whole number of its rows, whose count it then
  /// sets (setRows). A refused call changes nothing.
  Status bindBuffer(const std::string &region, void *devicePointer, int64_t bytes);
  /// The rows a buffer of `bytes` gives `region`: its count for a region
  /// sized at launch, 0 for any other argument the buffer is large enough
  /// for; an error naming the sizes otherwise (bindBuffer's check).
  Result<int64_t> rowsInBuffer(const std::string &region, int64_t bytes) const;
  /// This launch's rank, for a launch with peer memory (0 .. ranks - 1).
  Status bindRank(int rank);
  /// The row count of a region sized at launch (RegionSpec::rowsAtLaunch:
  /// a KV cache's pages), 1 .. kMaxLaunchRows; the bound buffer must hold
  /// that many rows. Every launch takes the last count set.
  Status setRows(const std::string &region, int64_t rows);
  /// The column count of a region whose columns are given at launch
  /// (RegionSpec::colsAtLaunch: a block table's pages a row, its row
  /// stride), 1 .. kMaxLaunchRows; the build's nominal count until set. A
  /// buffer bound through bindBuffer must hold its rows at that many
  /// columns (checked here and there). Every launch takes the last count set.
  Status setCols(const std::string &region, int64_t cols);
  /// setCols()'s refusals, without setting.
  Status checkCols(const std::string &region, int64_t cols) const;
  /// Launches on `stream` (null: the default stream); every region must be
  /// bound. It makes the launch call alone, so a stream being captured into a
  /// graph (hipStreamBeginCapture, cuStreamBeginCapture) captures it.
  Status launch(void *stream);

  /// Bounded waits: every poll of the kernel gives up past the rank's
  /// budget, and the first to give up writes the wait-fault record into the
  /// epoch buffer (WaitFault.h). Writes the budget (microseconds; 0: the
  /// default of 5 s) into the bound epoch buffer, which every launch of the
  /// step sequence shares; call it while none of them runs.
  Status setWaitBudget(uint32_t microseconds);
  /// Waits for `stream`, then reads the wait-fault record: an error naming
  /// the wait (describeWaitFault) where a poll gave up. The launch's outputs
  /// are then not valid, and every later launch gives up at its first poll
  /// that misses until the caller zeroes the epoch and peer buffers and
  /// calls resetScratch.
  Status checkWaits(void *stream);
  /// Waits for `stream`, then the wait-fault record of the bound epoch
  /// buffer (which every launch of the step sequence shares), if any.
  Result<std::optional<WaitFault>> waitFault(void *stream);
  /// Zeroes the launcher's scratch buffer (flags included), as at creation.
  Status resetScratch();
  /// Takes `workspace` (layout().workspaceBytes, zeroed, owned by the
  /// caller) as its scratch buffer instead of its own, which it releases:
  /// launches that run one after another on one epoch buffer (the layers of
  /// a rank) can share one.
  Status shareScratch(void *workspace);

  const ArgumentLayout &layout() const { return layout_; }
  const LaunchInterface &interface() const { return interface_; }
  int device() const { return device_; }
  /// The arguments the caller must still bind (regions, the epoch and peer
  /// buffers, the rank, `<region>.rows` of a region sized at launch), in
  /// argument order.
  std::vector<std::string> unbound() const;

private:
  /// bind()'s and setRows()'s refusals, without binding.
  Status checkBind(const std::string &region, void *devicePointer) const;
  Status checkRows(const std::string &region, int64_t rows) const;
  /// The bytes a region whose columns are given at launch needs at `cols`
  /// columns, or an error naming a count outside 1 .. kMaxLaunchRows.
  Result<int64_t> bytesAtCols(const RegionSpec &spec, int64_t cols) const;

  Launcher(std::shared_ptr<DeviceRuntime> runtime, LaunchInterface interface,
           ArgumentLayout layout, int device)
      : runtime_(std::move(runtime)), interface_(std::move(interface)), layout_(std::move(layout)),
        device_(device) {}

  std::shared_ptr<DeviceRuntime> runtime_;
  LaunchInterface interface_;
  ArgumentLayout layout_;
  int device_;
  void *module_ = nullptr;
  void *function_ = nullptr;
  void *workspace_ = nullptr;
  bool ownsWorkspace_ = true;
  std::map<std::string, uint64_t> bound_;
  /// The sizes bindBuffer was given, for setCols' check.
  std::map<std::string, int64_t> boundBytes_;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_LAUNCHER_H
