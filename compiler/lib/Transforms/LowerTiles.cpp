//===- LowerTiles.cpp - each GEMV's and attention chunk's building block --===//
#include "monodc/Transforms/Passes.h"

// The device library's gemv_rows and attend_chunk shapes (runtime/device).
#include "monodc/device/attend_shape.h"
#include "monodc/device/gemv_shape.h"

#include <optional>

namespace monodc::mono {
#define GEN_PASS_DEF_LOWERTILES
#include "monodc/Transforms/Passes.h.inc"
} // namespace monodc::mono

using namespace mlir;
using namespace monodc::mono;
using monodc::runtime::MatrixOperand;
using monodc::runtime::Target;

namespace {

bool isMxOnBothSides(GemvRowsOp g) {
  // e4m3 (kind 0) or e2m1 (kind 3) weights with E8M0 scales, MXFP8 tokens.
  const int64_t kind = gemvRowsWeightKind(g);
  return (kind == 0 || kind == 3) && g.getWeightScales() && g.getXScales();
}

/// gemv_mfma.h is written on the 16x16x128 scaled MFMA; its shape rule is
/// gemv_shape.h's.
bool fitsScaledMfma(GemvRowsOp g, int64_t block, const Target &target) {
  if (!target.findMatrix(16, 16, 128, MatrixOperand::F8F6F4, MatrixOperand::F8F6F4,
                         /*scaled=*/true))
    return false;
  const int64_t k = lookupRegion(g, g.getWeightAttr()).getCols();
  return isMxOnBothSides(g) &&
         mono_gemv_mfma_fits(static_cast<int>(g.getOutputs()), static_cast<int>(k),
                             static_cast<int>(gemvRowsWeightKind(g)), static_cast<int>(block));
}

/// gemv_mfma.h's gfx942 form: the same MX GEMVs and shapes on the 16x16x32
/// FNUZ fp8 MFMA, one 32-k block an instruction, scales in software. Not
/// where the scaled form exists: it is chosen first.
bool fitsFp8Mfma(GemvRowsOp g, int64_t block, const Target &target) {
  if (!target.findMatrix(16, 16, 32, MatrixOperand::E4m3Fnuz, MatrixOperand::E4m3Fnuz))
    return false;
  const int64_t k = lookupRegion(g, g.getWeightAttr()).getCols();
  return isMxOnBothSides(g) &&
         mono_gemv_mfma_fits(static_cast<int>(g.getOutputs()), static_cast<int>(k),
                             static_cast<int>(gemvRowsWeightKind(g)), static_cast<int>(block));
}

/// gemv_mfma.h's bf16 form: bf16 weights over bf16 tokens, no scales, on
/// the 16x16 bf16 MFMA (Target::bf16MfmaStep); k in whole 32-wide steps.
bool fitsBf16Mfma(GemvRowsOp g, int64_t block, const Target &target) {
  if (!target.bf16MfmaStep())
    return false;
  RegionOp x = lookupRegion(g, g.getXAttr());
  const int64_t k = lookupRegion(g, g.getWeightAttr()).getCols();
  return gemvRowsWeightKind(g) == 1 && x.getElementType().isBF16() && !g.getXScales() &&
         mono_gemv_mfma_fits(static_cast<int>(g.getOutputs()), static_cast<int>(k), 1,
                             static_cast<int>(block));
}

/// Fma chains stage their tokens as f32 words where the target's shared
/// memory leaves room for twice the bytes and the reads are broadcasts: on
/// NVIDIA (sm_90's 227 KB a CTA), with one thread a row (outputs == block),
/// so every lane of a warp reads the same words and the loop unpacks
/// nothing. With several threads a row the reads are distinct and the
/// doubled bytes make the loop wait on shared memory (measured on sm_90).
bool stagesTokensAsF32(GemvRowsOp g, int64_t block, const Target &target) {
  return target.isNvidia() && g.getOutputs() == block;
}

GemvLowering choose(GemvRowsOp g, int64_t block, const Target &target) {
  if (fitsScaledMfma(g, block, target))
    return GemvLowering::ScaledMfma;
  if (fitsFp8Mfma(g, block, target))
    return GemvLowering::Fp8Mfma;
  if (fitsBf16Mfma(g, block, target))
    return GemvLowering::Bf16Mfma;
  if (gemvRowsUsesMma(g, block, llvm::StringRef(target.name.data(), target.name.size())))
    return GemvLowering::WarpMma;
  return stagesTokensAsF32(g, block, target) ? GemvLowering::FmaChainsF32
                                             : GemvLowering::FmaChains;
}

/// Whether the target can run `lowering` for `g`; the reason if not.
std::optional<std::string> refusal(GemvRowsOp g, GemvLowering lowering, int64_t block,
                                   const Target &target) {
  switch (lowering) {
  case GemvLowering::FmaChains:
  case GemvLowering::FmaChainsF32:
    return std::nullopt;
  case GemvLowering::WarpMma:
    if (gemvRowsUsesMma(g, block, llvm::StringRef(target.name.data(), target.name.size())))
      return std::nullopt;
    return "the 16x8x16 f16 warp mma path does not serve this GEMV on " + std::string(target.name);
  case GemvLowering::ScaledMfma:
    if (fitsScaledMfma(g, block, target))
      return std::nullopt;
    if (!target.hasScaledMatrix())
      return std::string(target.name) + " has no scaled matrix instruction";
    return "scaled MFMA needs MX data on both sides (e2m1 or e4m3 weights with scales, MXFP8 "
           "tokens), whole 16-row tiles that the block's waves share evenly and k a multiple "
           "of 128";
  case GemvLowering::Fp8Mfma:
    if (fitsFp8Mfma(g, block, target))
      return std::nullopt;
    if (!target.findMatrix(16, 16, 32, MatrixOperand::E4m3Fnuz, MatrixOperand::E4m3Fnuz))
      return std::string(target.name) + " has no 16x16x32 FNUZ fp8 MFMA (gfx942's)";
    return "the fp8 MFMA form needs MX data on both sides (e2m1 or e4m3 weights with scales, "
           "MXFP8 tokens), whole 16-row tiles that the block's waves share evenly and k a "
           "multiple of 128";
  case GemvLowering::Bf16Mfma:
    if (fitsBf16Mfma(g, block, target))
      return std::nullopt;
    if (!target.bf16MfmaStep())
      return std::string(target.name) + " has no 16x16 bf16 MFMA (16x16x32 or 16x16x16)";
    return "the bf16 MFMA needs bf16 weights over bf16 tokens without scales, whole 16-row tiles "
           "that the block's waves share evenly and k a multiple of 32";
  }
  return "unknown lowering";
}

/// The matrix instruction a matrix-core form of the chunk is written on:
/// attend_mfma.h on the 16x16 bf16 MFMA (gfx950, gfx942), attend_mma.h on sm_90's
/// 16x8x16 bf16 warp mma; null where the target lacks it (or for f32 chains).
const monodc::runtime::MatrixInstruction *attendInstruction(AttendLowering lowering,
                                                            const Target &target) {
  switch (lowering) {
  case AttendLowering::FmaChains:
    return nullptr;
  case AttendLowering::WarpMma:
    return target.findMatrix(16, 8, 16, MatrixOperand::Bf16, MatrixOperand::Bf16);
  case AttendLowering::Bf16Mfma:
    return target.bf16MfmaStep();
  }
  return nullptr;
}

/// Whether the chunk's shape fits the form (attend_shape.h's rules).
bool shapeFits(AttendChunkOp a, AttendLowering lowering, int64_t block) {
  const int heads = static_cast<int>(a.getHeads()), dim = static_cast<int>(a.getHeadDim());
  const int nope = static_cast<int>(a.getNope()), keys = static_cast<int>(a.getKeys());
  switch (lowering) {
  case AttendLowering::FmaChains:
    return true;
  case AttendLowering::WarpMma:
    return mono_attend_mma_fits(heads, dim, nope, keys, static_cast<int>(block));
  case AttendLowering::Bf16Mfma:
    return mono_attend_mfma_fits(heads, dim, nope, keys, static_cast<int>(block));
  }
  return false;
}

bool fitsAttend(AttendChunkOp a, AttendLowering lowering, int64_t block, const Target &target) {
  return (lowering == AttendLowering::FmaChains || attendInstruction(lowering, target)) &&
         shapeFits(a, lowering, block) &&
         attendMatrixSharedBytes(a, lowering, block) <= target.sharedBytesPerBlock;
}

AttendLowering choose(AttendChunkOp a, int64_t block, const Target &target) {
  for (AttendLowering lowering : {AttendLowering::Bf16Mfma, AttendLowering::WarpMma})
    if (fitsAttend(a, lowering, block, target))
      return lowering;
  return AttendLowering::FmaChains;
}

std::optional<std::string> refusal(AttendChunkOp a, AttendLowering lowering, int64_t block,
                                   const Target &target) {
  if (fitsAttend(a, lowering, block, target))
    return std::nullopt;
  const bool mfma = lowering == AttendLowering::Bf16Mfma;
  if (!attendInstruction(lowering, target))
    return std::string(target.name) + " has no " +
           (mfma ? "16x16 bf16 MFMA (16x16x32 or 16x16x16)" : "16x8x16 bf16 warp mma");
  if (shapeFits(a, lowering, block))
    return "the chunk needs " + std::to_string(attendMatrixSharedBytes(a, lowering, block)) +
           " bytes of shared memory in this form; a CTA of " + std::string(target.name) +
           " has at most " + std::to_string(target.sharedBytesPerBlock);
  return std::string("the chunk's shape does not fit it: at most 8 heads, keys a multiple of ") +
         (mfma ? "32" : "16") +
         ", whole 64-dim scale groups, and dims and keys that the block's threads share evenly";
}

/// In its threads where the values already sit there, by shuffles where
/// the input fits the first wave's lanes (no shared memory, no barrier),
/// else through shared memory. A reduction that an expand takes whole moves
/// as the pair does.
Rearrangement chooseVia(Operation *op, int64_t block, const Target &target) {
  if (canRearrangeInThread(op, block))
    return Rearrangement::InThread;
  if (canRearrangeByShuffle(op, block, target.waveSize))
    return Rearrangement::Shuffle;
  return Rearrangement::Shared;
}

void setVia(Operation *op, Rearrangement via) {
  op->setAttr("via", RearrangementAttr::get(op->getContext(), via));
}

struct LowerTiles : public monodc::mono::impl::LowerTilesBase<LowerTiles> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](LaunchOp launch) {
      if (!isSupportedArch(launch.getArch()))
        return;  // mono-prepare-emission refuses it, naming the arches
      const Target &target = targetOf(launch.getArch());
      const int64_t block = launch.getBlock();
      launch.walk([&](Operation *op) {
        if (isRearrangement(op)) {
          // A reduction that an expand takes whole prints with it: one
          // round trip, and the pair moves as one (its `via` too).
          if (auto r = dyn_cast<ReduceOp>(op);
              r && !canRearrangeInThread(r, block) && pairableExpand(r))
            r->setAttr(MonoDialect::WithExpandAttrHelper::getNameStr(),
                       UnitAttr::get(r.getContext()));
          if (auto why = loweringRefusal(op, block, launch.getArch())) {
            op->emitOpError() << *why;
            failed = true;
          } else if (!rearrangementOf(op)) {
            setVia(op, chooseVia(op, block, target));
          }
          return;
        }
        auto g = dyn_cast<GemvRowsOp>(op);
        auto a = dyn_cast<AttendChunkOp>(op);
        if (!g && !a)
          return;
        if (auto why = loweringRefusal(op, block, launch.getArch())) {
          op->emitOpError() << *why;
          failed = true;
        } else if (g && !g.getLowering()) {
          g.setLowering(choose(g, block, target));
        } else if (a && !a.getLowering()) {
          a.setLowering(choose(a, block, target));
        }
      });
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace

std::optional<std::string> monodc::mono::loweringRefusal(Operation *op, int64_t block,
                                                         llvm::StringRef arch) {
  if (!isSupportedArch(arch))
    return std::nullopt;  // mono-prepare-emission refuses the arch itself
  const Target &target = targetOf(arch);
  if (isRearrangement(op))
    return rearrangementRefusal(op, block, target.waveSize);
  if (auto g = dyn_cast<GemvRowsOp>(op); g && g.getLowering())
    if (auto reason = refusal(g, *g.getLowering(), block, target))
      return "lowered to " + stringifyGemvLowering(*g.getLowering()).str() + ": " + *reason;
  if (auto a = dyn_cast<AttendChunkOp>(op); a && a.getLowering())
    if (auto reason = refusal(a, *a.getLowering(), block, target))
      return "lowered to " + stringifyAttendLowering(*a.getLowering()).str() + ": " + *reason;
  return std::nullopt;
}

int64_t monodc::mono::attendMatrixSharedBytes(AttendChunkOp a, AttendLowering lowering,
                                              int64_t block) {
  const int dim = static_cast<int>(a.getHeadDim()), keys = static_cast<int>(a.getKeys());
  switch (lowering) {
  case AttendLowering::FmaChains:
    return 0;
  case AttendLowering::WarpMma:
    return mono_attend_mma_shared_bytes(dim, keys, static_cast<int>(block));
  case AttendLowering::Bf16Mfma:
    return mono_attend_mfma_shared_bytes(dim, keys, static_cast<int>(block));
  }
  return 0;
}
