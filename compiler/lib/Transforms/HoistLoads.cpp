//===- HoistLoads.cpp - a task's loads before its tile operations ---------===//
#include "monodc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace monodc::mono {
#define GEN_PASS_DEF_HOISTLOADS
#include "monodc/Transforms/Passes.h.inc"
} // namespace monodc::mono

using namespace mlir;
using namespace monodc::mono;

namespace {

/// What moves: loads, and the scalar work their addresses need.
bool movesUp(Operation *op) {
  if (isa<LoadOp>(op))
    return true;
  if (isa<ToIndexOp>(op) || isa<arith::ArithDialect>(op->getDialect()))
    return isMemoryEffectFree(op) && op->getNumRegions() == 0;
  return false;
}

/// Whether `op` may move above `prev` (which does not define its operands):
/// scalar work, which touches no memory, and a load of an input or a
/// weight, which nothing in the launch writes, past anything (a wait
/// included: it orders only hand-offs); a load of a hand-off only past
/// operations without memory effects and other loads (two reads commute),
/// so stores, waits, publishes, the GEMV and attention blocks and peer
/// accesses stay ahead of it.
bool canPass(Operation *op, Operation *prev) {
  auto load = dyn_cast<LoadOp>(op);
  if (!load || !lookupRegion(load, load.getRegionAttr()).isWritable())
    return true;
  return isa<LoadOp>(prev) || isMemoryEffectFree(prev);
}

void hoistInBlock(Block &block) {
  SmallVector<Operation *> order;
  for (Operation &op : block)
    order.push_back(&op);
  // In order, so an operand's definition has already moved when its user looks.
  for (Operation *op : order) {
    if (!movesUp(op))
      continue;
    Operation *after = nullptr;  // the operation it must stay behind; null: the block's start
    for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
      bool defines = llvm::any_of(op->getOperands(),
                                  [&](Value v) { return v.getDefiningOp() == prev; });
      if (defines || !canPass(op, prev)) {
        after = prev;
        break;
      }
    }
    if (after == op->getPrevNode())
      continue;
    if (after)
      op->moveAfter(after);
    else
      op->moveBefore(&block, block.begin());
  }
}

struct HoistLoads : public monodc::mono::impl::HoistLoadsBase<HoistLoads> {
  void runOnOperation() override {
    for (auto launch : getOperation().getOps<LaunchOp>())
      for (auto stage : launch.getBodyBlock().getOps<StageOp>())
        for (Block &block : stage->getRegion(0))
          hoistInBlock(block);
  }
};

} // namespace
