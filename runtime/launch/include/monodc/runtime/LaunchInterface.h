//===- LaunchInterface.h - a launch's kernel manifest, read without LLVM -*- C++ -*-===//
//
// The compiler describes each synchronized launch in a plain-text manifest
// (emit::kernelManifest): kernel name, grid, block, rows, the scratch buffer
// and epoch buffer sizes, the stages, the wait sites, one `arg` line per
// kernel argument in order and one `scratch` line per region planned inside
// the scratch buffer.
// The cache keeps it beside the code object, so a runtime-only process can
// size and bind buffers without the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_LAUNCHINTERFACE_H
#define MONODC_RUNTIME_LAUNCHINTERFACE_H

#include "monodc/runtime/Result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace monodc::runtime {

struct RegionSpec {
  std::string name;
  std::string kind;   ///< input, output, weight, peer; scratch, flags inside the scratch buffer
  std::string format; ///< bf16, e4m3, e8m0, f32, i64 ...
  int64_t rows = 1, cols = 0;
  int64_t bytes = 0;   ///< storage bytes
  int64_t offset = -1; ///< in the scratch buffer; -1 for a kernel argument
  /// An input that holds what an earlier launch of the step (kernel
  /// `handedFromKernel`) wrote into its output `handedFromRegion` (a `from`
  /// line); empty otherwise.
  std::string handedFromKernel, handedFromRegion;
  /// An output the step's caller reads after the step (a `result` line).
  bool stepResult = false;
  /// The caller gives the row count at each launch (a `rows_at_launch`
  /// line; a KV cache's pages): `rows` and `bytes` are then only the
  /// build's nominal size, and the kernel takes the count as an 8-byte
  /// argument after the region's pointer.
  bool rowsAtLaunch = false;
  /// The caller gives the column count (the row stride) at each launch (a
  /// `cols_at_launch` line; a block table's pages a row): `cols` and
  /// `bytes` are then only the build's nominal size, and the kernel takes
  /// the count as an 8-byte argument after the region's pointer (and row
  /// count).
  bool colsAtLaunch = false;

  /// Bytes of one row (0 for a region of no rows).
  int64_t rowBytes() const { return rows > 0 ? bytes / rows : 0; }
};

/// An input that holds indices (an `index` line): whole numbers in
/// [0, bound) or -1 (a pad). One that counts rows of a region sized at
/// launch (`rowsOf`: a block table's pages, a slot mapping's slots) has
/// bound / that region's nominal rows of them a row, and its bound grows
/// with the rows given at launch.
struct IndexSpec {
  std::string name;
  int64_t bound = 0;
  std::string rowsOf;
};

struct StageSpec {
  int64_t index = 0;
  std::string name;
  int64_t tasks = 0;
};

/// A wait of the launch (a `wait` line): where a poll that gives up says it
/// waited (the wait-fault record's site).
struct WaitSiteSpec {
  int64_t site = 0;
  std::string stage; ///< the waiting stage
  std::string flags; ///< the flags region it polls
  int64_t peerRank = -1; ///< the rank whose peer flags it polls; -1: its own rank's
};

struct LaunchInterface {
  std::string kernelName;
  int64_t grid = 0, block = 0, rows = 0;
  int64_t scratchBytes = 0; ///< the launch's scratch buffer (one per step width)
  int64_t epochWords = 0;   ///< the epoch buffer, shared by the launches of a step
  /// Its place in a step: tags 2e + stepTag (1: K1, 2: K2/FFN); a launch
  /// that ends the step moves e on, one that does not (K1) must be followed
  /// by one that does before it runs again.
  int64_t stepTag = 1;
  bool endsStep = true;
  /// Shared memory the launcher passes as dynamic (sm_90 launches past
  /// CUDA's 48 KB of static shared memory); 0: all static.
  int64_t dynamicSharedBytes = 0;
  std::vector<IndexSpec> indexBounds;
  /// Tensor parallelism through peer memory: each rank's peer buffer is
  /// 2 (epoch parity) x ranks x peerSlotBytes; 0 when the launch has none.
  int64_t ranks = 1, peerSlotBytes = 0;
  /// Bytes of one rank's peer buffer.
  int64_t peerBufferBytes() const { return 2 * ranks * peerSlotBytes; }
  std::vector<StageSpec> stages;
  std::vector<WaitSiteSpec> waits; ///< by site
  std::vector<RegionSpec> arguments; ///< `arg` lines: kernel arguments, in order
  std::vector<RegionSpec> scratch;   ///< `scratch` lines: regions in the scratch buffer

  const RegionSpec *argument(std::string_view name) const;
  RegionSpec *argument(std::string_view name) {
    return const_cast<RegionSpec *>(std::as_const(*this).argument(name));
  }

  /// The manifest text: the lines emit::kernelManifest prints, in a fixed
  /// order (arg lines, then scratch lines, then index, from, result and
  /// rows_at_launch lines, where the emitter follows region order); parse(text()) gives
  /// this interface back.
  std::string text() const;
  /// The reverse; an unknown line is refused, naming it.
  static Result<LaunchInterface> parse(std::string_view text);
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_LAUNCHINTERFACE_H
