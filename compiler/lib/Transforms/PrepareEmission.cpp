//===- PrepareEmission.cpp - make a launch ready for the HIP printer ------===//
#include "monodc/Transforms/Passes.h"

#include "llvm/ADT/StringSwitch.h"

namespace monodc::mono {
#define GEN_PASS_DEF_PREPAREEMISSION
#include "monodc/Transforms/Passes.h.inc"
} // namespace monodc::mono

using namespace mlir;
using namespace monodc::mono;

bool monodc::mono::isSupportedArch(llvm::StringRef arch) {
  return llvm::StringSwitch<bool>(arch)
      .Cases({"gfx950", "gfx942", "gfx90a", "sm_90"}, true)
      .Default(false);
}

int64_t monodc::mono::sharedBytesFor(Operation *op, int64_t block) {
  auto size = [](Value v) { return cast<TileType>(v.getType()).getSize(); };
  // Every building block works in f32 words of shared memory.
  if (auto r = dyn_cast<ReduceOp>(op))
    return std::max(block, size(r.getInput())) * 4;
  // Rearrangements go through shared memory: the whole input.
  if (isa<SliceOp, ExpandOp, GatherOp>(op))
    return size(op->getOperand(0)) * 4;
  if (isa<InterleaveOp>(op))
    return 2 * size(op->getOperand(0)) * 4;
  if (auto t = dyn_cast<TopKOp>(op))
    return (size(t.getInput()) + 2 * t.getK()) * 4;
  if (auto q = dyn_cast<QuantizeMxfp8Op>(op))
    return (size(q.getInput()) + size(q.getInput()) / 32) * 4;
  if (auto g = dyn_cast<GemvRowsOp>(op)) {
    int64_t k = lookupRegion(g, g.getWeightAttr()).getCols();
    int64_t chunk = gemvRowsChunkTokens(k, g.getTokens(), block);
    return chunk * k * 2 + chunk * block * 4 + size(g.getResult()) * 4;
  }
  if (auto a = dyn_cast<AttendChunkOp>(op))
    return (a.getKeys() + AttendChunkOp::kKeyBatch * a.getHeadDim() +
            a.getHeads() * a.getHeadDim() +
            a.getHeads() * AttendChunkOp::kKeyBatch * a.scoreParts(block) + 3 * a.getHeads()) *
           4;
  if (auto g = dyn_cast<GemvOp>(op))
    return (size(g.getX()) + size(g.getX()) / 32 + block + size(g.getResult())) * 4;
  return 0;
}

namespace {
struct PrepareEmission
    : public monodc::mono::impl::PrepareEmissionBase<PrepareEmission> {
  using PrepareEmissionBase::PrepareEmissionBase;

  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](LaunchOp launch) {
      if (!isSupportedArch(launch.getArch())) {
        launch.emitOpError() << "unsupported arch '" << launch.getArch()
                             << "' (supported: gfx950, gfx942, gfx90a, sm_90)";
        failed = true;
        return;
      }
      int64_t block = launch.getBlock();
      int64_t shared = 0;
      launch.walk([&](Operation *op) {
        for (Value result : op->getResults()) {
          auto tile = dyn_cast<TileType>(result.getType());
          if (tile && slotsPerThread(tile.getSize(), block) > maxSlotsPerThread) {
            op->emitOpError() << "tile of " << tile.getSize()
                              << " values needs "
                              << slotsPerThread(tile.getSize(), block)
                              << " registers per thread at block " << block
                              << " (limit " << static_cast<int64_t>(maxSlotsPerThread)
                              << "); split the stage into more tasks";
            failed = true;
          }
        }
        if (auto g = dyn_cast<GemvRowsOp>(op); g && (g.getOutputs() > block || block % g.getOutputs() != 0)) {
          g.emitOpError() << "computes " << g.getOutputs()
                          << " outputs per token; the building block needs a divisor of the "
                             "block ("
                          << block << ")";
          failed = true;
        }
        shared = std::max(shared, sharedBytesFor(op, block));
      });
      launch->setAttr("mono.lds_bytes",
                      IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                       std::max<int64_t>(shared, 4)));
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
