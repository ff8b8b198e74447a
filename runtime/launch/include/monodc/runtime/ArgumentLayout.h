//===- ArgumentLayout.h - kernel arguments and the launcher's buffers -*- C++ -*-===//
//
// Device-independent half of launching: where each argument goes in the
// kernarg buffer and how large the buffer behind each pointer must be. The
// kernel takes one pointer per `arg` region of its manifest, then the scratch
// buffer (one per launch and step width: the launcher allocates it) and the
// epoch buffer (shared by every launch of a step sequence: the caller binds
// it). Unit-tested without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_ARGUMENTLAYOUT_H
#define MONODC_RUNTIME_ARGUMENTLAYOUT_H

#include "monodc/runtime/CodeObject.h"
#include "monodc/runtime/LaunchInterface.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace monodc::runtime {

/// The names of the two trailing arguments, as the emitted kernel has them.
inline constexpr const char *kScratchArgument = "mono_scratch";
inline constexpr const char *kEpochArgument = "mono_epoch";
/// Launches with peer memory also take the ranks' peer buffers (a device
/// array of pointers) and this rank's index (a 4-byte integer).
inline constexpr const char *kPeersArgument = "mono_peers";
inline constexpr const char *kRankArgument = "mono_rank";
/// A region sized at launch (RegionSpec::rowsAtLaunch) is followed by its
/// row count, an 8-byte integer: the argument `<region>` + kRowsSuffix.
inline constexpr const char *kRowsSuffix = ".rows";
/// A region whose columns are given at launch (RegionSpec::colsAtLaunch) is
/// followed by its column count, an 8-byte integer: `<region>` + kColsSuffix.
inline constexpr const char *kColsSuffix = ".cols";
/// The most rows a region sized at launch may be given: a row index stays
/// exact in the f32 the kernels compute slots in.
inline constexpr int64_t kMaxLaunchRows = int64_t(1) << 24;

struct ArgumentSlot {
  std::string name;           ///< region name, kScratchArgument, kEpochArgument, ...
  std::string kind;           ///< region kind; "scratch", "epoch", "peers", "rank", "rows"
  std::string region;         ///< a "rows" slot: the region whose rows it holds
  int64_t offset = 0;         ///< in the kernarg buffer
  int64_t size = 8;           ///< a device pointer
  int64_t bytes = 0;          ///< bytes the buffer behind the pointer holds
  bool launcherOwned = false; ///< the scratch buffer
  std::string format;         ///< a region's number format ("bf16", "i64", ...); "" for the others
};

struct ArgumentLayout {
  std::vector<ArgumentSlot> slots;
  int64_t kernargBytes = 0;
  /// The launcher's own allocation: the scratch buffer.
  int64_t workspaceBytes = 0;

  const ArgumentSlot *slot(const std::string &name) const;
};

/// Lays out the arguments of `interface`. With the code object's metadata
/// (`notes`, AMD targets), its offsets and kernarg size are used once they
/// agree with the interface (count, pointer sizes, scratch and epoch last);
/// without (nvrtc), pointers are packed 8 bytes apart.
Result<ArgumentLayout> layoutArguments(const LaunchInterface &interface,
                                       const KernelInfo *notes);

/// The kernarg buffer. `bound` maps every caller-bound region (and
/// kEpochArgument) to its device address, kRankArgument and every
/// `<region>.rows` to its value; the scratch buffer is `workspace`.
/// Refuses a missing, null or unknown binding, naming it.
Result<std::vector<uint8_t>> packArguments(const ArgumentLayout &layout,
                                           const std::map<std::string, uint64_t> &bound,
                                           uint64_t workspace);

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_ARGUMENTLAYOUT_H
