//===- PlanWaits.cpp - waits polled once, weights loaded before polls -----===//
//
// Read-only weights (weight and input regions) of a GEMV right after a run of
// waits are marked mono.prefetched: the GPU loads them before polling. Weights
// in a region the launch writes are a hand-off (mono-materialize-sync waits
// for their writer) and are never prefetched.
//
#include "monodc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace monodc::mono {
#define GEN_PASS_DEF_PLANWAITS
#include "monodc/Transforms/Passes.h.inc"
} // namespace monodc::mono

using namespace mlir;
using namespace monodc::mono;

namespace {

constexpr llvm::StringLiteral kPolledOnce = "mono.polled_once";
constexpr llvm::StringLiteral kPrefetched = "mono.prefetched";

/// Flags that do not depend on the task: constant first and count.
bool isTaskIndependent(WaitOp wait) {
  return wait.getFirst().getDefiningOp<arith::ConstantOp>() &&
         wait.getCount().getDefiningOp<arith::ConstantOp>();
}

bool isWait(Operation *op) { return op && isa<WaitOp, WaitPeerOp>(op); }

/// The first wait of the run of waits right before `g`, if its weight row
/// and count are defined before that wait in the same block.
Operation *prefetchPoint(GemvRowsOp g) {
  Operation *first = g->getPrevNode();
  if (!isWait(first))
    return nullptr;
  while (isWait(first->getPrevNode()))
    first = first->getPrevNode();
  for (Value known : {g.getRow(), g.getCount()}) {
    Operation *def = known ? known.getDefiningOp() : nullptr;
    if (def && (def->getBlock() != first->getBlock() || !def->isBeforeInBlock(first)))
      return nullptr;
  }
  return first;
}

/// The weight (or weight scales) region of `g` that the launch may write
/// (scratch, output, peer), if any: such weights are a hand-off, read only
/// after the wait for their writer, never before it.
RegionOp writableWeights(GemvRowsOp g) {
  for (FlatSymbolRefAttr name : {g.getWeightAttr(), g.getWeightScalesAttr()})
    if (RegionOp r = name ? lookupRegion(g, name) : RegionOp(); r && r.isWritable())
      return r;
  return RegionOp();
}

struct PlanWaits : public monodc::mono::impl::PlanWaitsBase<PlanWaits> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](WaitOp wait) {
      const bool once = isTaskIndependent(wait);
      if (wait->hasAttr(kPolledOnce) && !once) {
        wait.emitOpError() << "is marked polled once, but its flags depend on the task";
        failed = true;
      } else if (once) {
        wait->setAttr(kPolledOnce, UnitAttr::get(&getContext()));
      }
    });
    getOperation().walk([&](GemvRowsOp g) {
      if (RegionOp written = writableWeights(g)) {
        // Prefetching would read them before the poll that orders them
        // after their writer's stores.
        if (g->hasAttr(kPrefetched)) {
          auto stage = g->getParentOfType<StageOp>();
          g.emitOpError() << "in stage '" << (stage ? stage.getSymName() : StringRef("?"))
                          << "' is marked prefetched, but its weights '" << written.getSymName()
                          << "' are a " << stringifyMemoryKind(written.getKind())
                          << " region the launch writes; they may be read only after the wait "
                             "for their writer";
          failed = true;
        }
        return;
      }
      const bool known = prefetchPoint(g) != nullptr;
      if (g->hasAttr(kPrefetched) && !known) {
        g.emitOpError() << "is marked prefetched, but no run of waits precedes it with its "
                           "weight row and count known before them";
        failed = true;
      } else if (known) {
        g->setAttr(kPrefetched, UnitAttr::get(&getContext()));
      }
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
