//===- PlanWaits.cpp - waits polled once, weights loaded before polls -----===//
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
