//===- Passes.h - mono passes -----------------------------------*- C++ -*-===//
#ifndef MONODC_TRANSFORMS_PASSES_H
#define MONODC_TRANSFORMS_PASSES_H

#include "monodc/Dialect/Mono/MonoDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "monodc/runtime/Target.h"
#include "monodc/device/epoch_shape.h"

#include <optional>
#include <string>

namespace monodc::mono {

#define GEN_PASS_DECL
#include "monodc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "monodc/Transforms/Passes.h.inc"

/// The architectures the HIP printer and the device library serve: those
/// of the target description (monodc/runtime/Target.h).
bool isSupportedArch(llvm::StringRef arch);
/// The description of a supported arch (a launch's arch is verified first).
const monodc::runtime::Target &targetOf(llvm::StringRef arch);

/// Number of values of a `size`-value tile one thread of `block` holds.
inline int64_t slotsPerThread(int64_t size, int64_t block) {
  return size == 1 ? 1 : (size + block - 1) / block;
}

/// Bytes of a region in its storage format.
int64_t regionBytes(RegionOp region);

/// The flags region plan-memory declares for a stage.
inline std::string flagsRegionName(StageOp stage) {
  return (stage.getSymName() + ".flags").str();
}

/// The flags in the peer buffer of a stage that stores to peer memory.
inline std::string peerFlagsRegionName(StageOp stage) {
  return (stage.getSymName() + ".peer_flags").str();
}

/// The epoch buffer (monodc/device/epoch_shape.h): word 0 the epoch e, word
/// 1 the arrival counter, then one mark per CTA, a 256-slot ring of task
/// counters (index e mod 256) and the wait-fault record.
namespace epoch {
constexpr int64_t kEpochWord = MONO_EPOCH_WORD;
constexpr int64_t kArrivals = MONO_EPOCH_ARRIVALS;
constexpr int64_t kMarks = MONO_EPOCH_MARKS;
constexpr int64_t kCounterSlots = MONO_EPOCH_COUNTER_SLOTS;
inline int64_t countersWord(int64_t grid) { return mono_epoch_counters_word(grid); }
inline int64_t faultWord(int64_t grid) { return mono_epoch_fault_word(grid); }
/// Dynamic stages a launch may have: the counter of claim k of the launch
/// with tag offset o in step e is slot (4e + 2(o - 1) + k) mod 256, and the
/// launch that ends step e zeroes step e + 32's four slots (half a ring on).
constexpr int64_t kClaimsPerLaunch = 2;
constexpr int64_t kClaimsPerStep = 4;
constexpr int64_t kZeroAhead = 32;
/// 2(o - 1) + k: the place of claim k of the launch with tag offset o among
/// a step's four counters.
inline int64_t claimInStep(int64_t tagOffset, int64_t claim) {
  return kClaimsPerLaunch * (tagOffset - 1) + claim;
}
} // namespace epoch
inline int64_t epochWords(int64_t grid) { return mono_epoch_words(grid); }

/// The launch's waits (mono.wait, mono.wait_peer) in IR order: a wait's
/// place in this list is its site, which a wait that gives up writes into
/// the epoch buffer's wait-fault record (epoch_shape.h) and which the
/// manifest's `wait` lines name.
llvm::SmallVector<mlir::Operation *> waitSites(LaunchOp launch);

/// Adds the fusion passes, in order, then the emission preparation (and
/// mono-unfuse where asked).
struct FusionOptions {
  int64_t tagOffset = 1;
  bool advanceEpoch = true;
  std::string testOmitPublish;
  /// Ends with mono-unfuse: the unfused baseline, a kernel a stage.
  bool unfused = false;
};
void addFusionPipeline(mlir::OpPassManager &pm, const FusionOptions &options = {});
/// Runs that pipeline on `module`.
mlir::LogicalResult runFusionPipeline(mlir::ModuleOp module, const FusionOptions &options = {});

/// The most tokens of activations a gemv_rows stages in shared memory at
/// once: bf16 activations and f32 partials of a chunk take 40 KB at most,
/// which keeps a launch without weight rings within CUDA's 48 KB of static
/// shared memory (sm_90's rings and f32 tokens add to it, as dynamic shared
/// memory); and at most 8, so the per-token accumulators of a short k do
/// not crowd out registers (the dsv41 K2 at 48 rows and TP 4 spilled with
/// 18).
inline int64_t gemvRowsChunkTokensLimit(int64_t k, int64_t tokens, int64_t block) {
  constexpr int64_t kMaxChunkTokens = 8;
  return std::max<int64_t>(
      1, std::min({tokens, kMaxChunkTokens, 40960 / (2 * k + 4 * block)}));
}

/// Tokens an fma-chains gemv_rows stages a pass on `arch` (the device
/// library's TC); mono-prepare-emission records it as mono.chunk_tokens.
int64_t gemvRowsChunkTokens(GemvRowsOp g, int64_t block, llvm::StringRef arch);

/// How a gemv_rows' weight is stored (the device library's WKIND): 0 e4m3
/// with 32x32 E8M0 blocks, 1 bf16, 2 f32, 3 MXFP4 in AITER's layouts.
int64_t gemvRowsWeightKind(GemvRowsOp g);

/// Why a gemv_rows or attend_chunk cannot run the lowering it carries on
/// `arch` ("lowered to L: reason"), or a rearrangement its `via`
/// (rearrangementRefusal); nullopt when it can, carries none, or is
/// another op. mono-lower-tiles and mono-prepare-emission both refuse
/// through it, so a preset lowering never reaches the shape functions.
std::optional<std::string> loweringRefusal(mlir::Operation *op, int64_t block,
                                           llvm::StringRef arch);

/// The shared memory an attend_chunk's matrix-core form lays out for itself
/// (attend_shape.h); 0 for f32 chains.
int64_t attendMatrixSharedBytes(AttendChunkOp a, AttendLowering lowering, int64_t block);

/// Whether a gemv_rows runs on tensor cores (the device library's
/// mono_gemv_mma): on sm_90, for e4m3 and MXFP4 weights whose rows and k
/// make whole 16 x 32 tiles over the block's warps (gemv_shape.h).
bool gemvRowsUsesMma(GemvRowsOp g, int64_t block, llvm::StringRef arch);
/// Tokens such a gemv_rows stages at a time (its weights are read once a pass).
int64_t gemvRowsMmaPassTokens(GemvRowsOp g, int64_t block);

/// Bytes of the ring through which a gemv_rows streams its weights with
/// asynchronous copies (mono_weight_ring: 4 stages of a streaming group's
/// chunks, each with its scale word); 0 on an arch without such copies,
/// for weights that stay in registers, for more than one token, and on
/// tensor cores.
int64_t gemvRowsRingBytes(GemvRowsOp g, int64_t block, llvm::StringRef arch);

/// Shared memory (bytes) the building block of `op` needs on `arch`, 0 for
/// none.
int64_t sharedBytesFor(mlir::Operation *op, int64_t block, llvm::StringRef arch);

/// A small rearrangement (slice, expand, gather, a small axis reduction: a
/// tile of at most kSmallRearrangementWords values) goes through one of
/// kRearrangementAreas areas of shared memory, that many f32 words apart:
/// its writes go to an area nobody has read since the last barrier, so it
/// needs one barrier instead of three, and a tile still in an area is read
/// again from there, with none (mono-plan-shared). routed.ug's
/// gate and up slices of its 1024 values are one write; the mHC seam's gate
/// cycles through three tiles.
constexpr int64_t kSmallRearrangementWords = 1024;
constexpr int64_t kRearrangementAreas = 3;
/// Rearrangements: a slice, expand, gather or axis reduction moves values
/// between threads; mono-lower-tiles records how in its `via`
/// (Rearrangement), the printer prints that and mono-prepare-emission sizes
/// it. Whether `op` is one.
bool isRearrangement(mlir::Operation *op);
/// Its `via`; nullopt where unset or for another op.
std::optional<Rearrangement> rearrangementOf(mlir::Operation *op);
/// An axis reduction or expand along axis 0 of a [rows, cols] tile whose
/// cols are whole blocks: value (j, c) and value c then sit in the same
/// thread (c % block), so its values stay in their threads (back.combine's
/// sums over its chunks of 512): the rule for `in_thread`.
bool canRearrangeInThread(mlir::Operation *op, int64_t block);
/// An axis reduction whose result one expand of the same shape and axis
/// takes whole: the two can print as one rearrangement at the expand (each
/// result the reduction of its own row or column), one round trip instead
/// of two. That expand, or null.
ExpandOp pairableExpand(ReduceOp r);
/// The expand that prints reduction `r` with itself, where mono-lower-tiles
/// paired them (`mono.with_expand`); null otherwise.
ExpandOp expandOfReduction(ReduceOp r);
/// The tiles a rearrangement moves from and to (for a reduction and the
/// expand that takes it, the reduction's input and the expand's result).
std::pair<mlir::Value, mlir::Value> rearrangedTiles(mlir::Operation *op);
/// The rule for `shuffle`: the input is at most a wave of values (one slot,
/// value i in lane i of the first wave) and the result more than one value
/// and at most a wave, read only in the lanes that hold it; a one-value
/// result is every thread's, so it goes through shared memory.
bool canRearrangeByShuffle(mlir::Operation *op, int64_t block, int64_t waveSize);
/// Why a rearrangement cannot move its values the way its `via` says
/// ("via V: reason"); nullopt where it can or has no `via`.
std::optional<std::string> rearrangementRefusal(mlir::Operation *op, int64_t block,
                                                int64_t waveSize);
/// The tile a rearrangement puts through shared memory (`via shared`); null
/// for any other op and any other `via`. sharedBytesFor sizes its areas and
/// the emitter orders them by the same answer.
mlir::Value rearrangedTile(mlir::Operation *op);

/// A library call that uses at most an area's words of shared memory from
/// where it is pointed and ends with a barrier: a reduction of a whole tile
/// of more than one value (mono_block_reduce, a block's words) and an MXFP8
/// quantization of at most an area's values and scales. mono-plan-shared
/// gives it an area.
bool usesOneSharedArea(mlir::Operation *op);

/// The most shared memory one CTA of `arch` may have.
int64_t maxSharedBytes(llvm::StringRef arch);

/// Whether a launch with `bytes` of shared memory takes it as dynamic shared
/// memory: past the target's static limit (CUDA's 48 KB), where it has one.
inline bool usesDynamicShared(llvm::StringRef arch, int64_t bytes) {
  const int64_t limit = targetOf(arch).staticSharedLimit;
  return limit > 0 && bytes > limit;
}

} // namespace monodc::mono

#endif // MONODC_TRANSFORMS_PASSES_H
