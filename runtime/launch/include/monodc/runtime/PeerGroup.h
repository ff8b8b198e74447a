//===- PeerGroup.h - a rank's peer memory across processes -------*- C++ -*-===//
//
// A tensor-parallel launch pushes each rank's partial sums into every rank's
// peer buffer (docs/fusion.md). Where the ranks are separate processes, each
// allocates its buffer as shareable memory, gives the others a handle, opens
// theirs and builds the peer table the kernel takes as `mono_peers`. The
// caller moves the handles between processes (a serving engine through its
// own process group, or exchangePeerHandles for standalone use).
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_PEERGROUP_H
#define MONODC_RUNTIME_PEERGROUP_H

#include "monodc/runtime/DeviceRuntime.h"

#include <memory>
#include <vector>

namespace monodc::runtime {

class PeerGroup {
public:
  /// Allocates and zeroes this rank's peer buffer of `bufferBytes`
  /// (LaunchInterface::peerBufferBytes) on `device` as shareable memory.
  static Result<std::unique_ptr<PeerGroup>> create(std::shared_ptr<DeviceRuntime> runtime,
                                                   int device, int rank, int ranks,
                                                   int64_t bufferBytes);
  /// One process driving several GPUs: the groups of every rank, rank r's
  /// buffer on `devices[r]` (allocated as create does), peer access enabled
  /// between every two of the devices, and each rank's table built on its
  /// device; already connected (no handles). A table holds the other ranks'
  /// buffers: destroy the groups together.
  static Result<std::vector<std::unique_ptr<PeerGroup>>>
  createLocal(std::shared_ptr<DeviceRuntime> runtime, const std::vector<int> &devices,
              int64_t bufferBytes);
  ~PeerGroup();
  PeerGroup(const PeerGroup &) = delete;
  PeerGroup &operator=(const PeerGroup &) = delete;

  /// What this rank gives every other rank: the group's layout (rank,
  /// ranks, buffer bytes) and the IPC handle of its buffer, as bytes.
  const std::vector<uint8_t> &handle() const { return handle_; }
  /// Takes every rank's handle (handles[r] from rank r, this rank's own
  /// included), checks that they describe one group (each from its rank,
  /// the same ranks and buffer bytes), opens the other ranks' buffers and
  /// builds the peer table. Once only.
  Status connect(const std::vector<std::vector<uint8_t>> &handles);

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  void *buffer() const { return buffer_; }
  /// The device array of every rank's buffer in rank order, to bind as
  /// `mono_peers`; null until connect succeeds.
  void *table() const { return table_; }

private:
  PeerGroup(std::shared_ptr<DeviceRuntime> runtime, int device, int rank, int ranks,
            int64_t bufferBytes)
      : runtime_(std::move(runtime)), device_(device), rank_(rank), ranks_(ranks),
        bufferBytes_(bufferBytes) {}

  /// The group's rank, ranks and buffer, checked; the buffer allocated
  /// shareable on the device and zeroed.
  static Result<std::unique_ptr<PeerGroup>> allocate(std::shared_ptr<DeviceRuntime> runtime,
                                                     int device, int rank, int ranks,
                                                     int64_t bufferBytes);
  /// The peer table of `pointers` (every rank's buffer) on this rank's device.
  Status buildTable(const std::vector<void *> &pointers);

  std::shared_ptr<DeviceRuntime> runtime_;
  int device_, rank_, ranks_;
  int64_t bufferBytes_;
  void *buffer_ = nullptr;
  void *table_ = nullptr;
  std::vector<void *> opened_; ///< the other ranks' buffers, mapped here
  std::vector<uint8_t> handle_;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_PEERGROUP_H
