//===- PlanMemory.cpp - scratch layout, flags and the epoch buffer --------===//
#include "monodc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace monodc::mono {
#define GEN_PASS_DEF_PLANMEMORY
#include "monodc/Transforms/Passes.h.inc"
} // namespace monodc::mono

using namespace mlir;
using namespace monodc::mono;

int64_t monodc::mono::regionBytes(RegionOp region) {
  Type t = region.getElementType();
  int64_t n = region.getRows() * region.getCols();
  if (t.isInteger(64))
    return n * 8;
  if (t.isF32() || t.isInteger(32))
    return n * 4;
  if (t.isBF16())
    return n * 2;
  if (isa<Float4E2M1FNType>(t))
    return (n + 1) / 2;
  return n;
}

namespace {
constexpr int64_t kAlignment = 256;

struct PlanMemory : public monodc::mono::impl::PlanMemoryBase<PlanMemory> {
  void runOnOperation() override {
    for (auto launch : getOperation().getOps<LaunchOp>()) {
      if (launch->hasAttr("mono.scratch_bytes")) {
        launch.emitOpError() << "memory is already planned";
        return signalPassFailure();
      }
      Block &body = launch.getBodyBlock();
      auto stages = llvm::to_vector(body.getOps<StageOp>());
      OpBuilder builder(&getContext());
      builder.setInsertionPoint(stages.empty() ? &body.back() : stages.front().getOperation());
      if (stages.empty())
        builder.setInsertionPointToEnd(&body);
      for (StageOp stage : stages)
        RegionOp::create(builder, stage.getLoc(), flagsRegionName(stage), MemoryKind::Flags,
                         builder.getIntegerType(64),
                         ArrayRef<int64_t>{static_cast<int64_t>(stage.getTasks())}, IntegerAttr(), FlatSymbolRefAttr(), SymbolRefAttr());
      // A stage that stores to peer memory publishes through flags in the
      // peer buffer too.
      for (StageOp stage : stages)
        if (!stage.getBodyBlock().getOps<StorePeerOp>().empty()) {
          auto flags = RegionOp::create(builder, stage.getLoc(), peerFlagsRegionName(stage),
                                        MemoryKind::Flags, builder.getIntegerType(64),
                                        ArrayRef<int64_t>{static_cast<int64_t>(stage.getTasks())},
                                        IntegerAttr(), FlatSymbolRefAttr(), SymbolRefAttr());
          flags->setAttr("mono.peer", builder.getUnitAttr());
        }
      RegionOp::create(builder, launch.getLoc(), "epoch", MemoryKind::Epoch,
                       builder.getIntegerType(32),
                       ArrayRef<int64_t>{epochWords(launch.getGrid())}, IntegerAttr(), FlatSymbolRefAttr(), SymbolRefAttr());

      // The peer buffer of a rank: [parity 2][source rank][slot], one slot
      // holding every peer region and peer flags region.
      int64_t peerSlot = 0;
      for (auto region : body.getOps<RegionOp>()) {
        if (region.getKind() != MemoryKind::Peer && !region->hasAttr("mono.peer"))
          continue;
        region->setAttr("mono.peer_offset", builder.getI64IntegerAttr(peerSlot));
        peerSlot += (regionBytes(region) + kAlignment - 1) / kAlignment * kAlignment;
      }
      if (peerSlot > 0)
        launch->setAttr("mono.peer_slot_bytes", builder.getI64IntegerAttr(peerSlot));

      int64_t offset = 0;
      for (auto region : body.getOps<RegionOp>()) {
        if (region.getKind() != MemoryKind::Scratch && region.getKind() != MemoryKind::Flags)
          continue;
        if (region->hasAttr("mono.peer"))
          continue;
        region->setAttr("mono.offset", builder.getI64IntegerAttr(offset));
        offset += (regionBytes(region) + kAlignment - 1) / kAlignment * kAlignment;
      }
      launch->setAttr("mono.scratch_bytes", builder.getI64IntegerAttr(offset));
    }
  }
};
} // namespace
