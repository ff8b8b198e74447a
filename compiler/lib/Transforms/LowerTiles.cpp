//===- LowerTiles.cpp - each GEMV's building block on its target ----------===//
#include "monodc/Transforms/Passes.h"

// The device library's gemv_rows shapes (runtime/device).
#include "gemv_shape.h"

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

GemvLowering choose(GemvRowsOp g, int64_t block, const Target &target) {
  if (fitsScaledMfma(g, block, target))
    return GemvLowering::ScaledMfma;
  if (gemvRowsUsesMma(g, block, llvm::StringRef(target.name.data(), target.name.size())))
    return GemvLowering::WarpMma;
  return GemvLowering::FmaChains;
}

/// Whether the target can run `lowering` for `g`; the reason if not.
std::optional<std::string> refusal(GemvRowsOp g, GemvLowering lowering, int64_t block,
                                   const Target &target) {
  switch (lowering) {
  case GemvLowering::FmaChains:
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
  }
  return "unknown lowering";
}

struct LowerTiles : public monodc::mono::impl::LowerTilesBase<LowerTiles> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](LaunchOp launch) {
      if (!isSupportedArch(launch.getArch()))
        return;  // mono-prepare-emission refuses it, naming the arches
      const Target &target = targetOf(launch.getArch());
      const int64_t block = launch.getBlock();
      launch.walk([&](GemvRowsOp g) {
        if (auto set = g.getLowering()) {
          if (auto reason = refusal(g, *set, block, target)) {
            g.emitOpError() << "lowered to " << stringifyGemvLowering(*set) << ": " << *reason;
            failed = true;
          }
          return;
        }
        g.setLowering(choose(g, block, target));
      });
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
