//===- Unfuse.cpp - the unfused baseline: a kernel a stage ----------------===//
#include "monodc/Transforms/Passes.h"

namespace monodc::mono {
#define GEN_PASS_DEF_UNFUSE
#include "monodc/Transforms/Passes.h.inc"
} // namespace monodc::mono

using namespace mlir;
using namespace monodc::mono;

namespace {
struct Unfuse : public monodc::mono::impl::UnfuseBase<Unfuse> {
  void runOnOperation() override {
    bool failed = false;
    for (auto launch : getOperation().getOps<LaunchOp>()) {
      // The baseline prints from the prepared fused launch: its memory plan,
      // tags and shared memory are the ones its kernels use.
      if (!launch->hasAttr(MonoDialect::LdsBytesAttrHelper::getNameStr())) {
        launch.emitOpError() << "has not been prepared for emission; run mono-unfuse after "
                                "mono-prepare-emission";
        failed = true;
        continue;
      }
      // The stream orders the stage kernels: no mailbox inside the rank.
      SmallVector<Operation *> mailboxes;
      launch.walk([&](Operation *op) {
        if (isa<WaitOp, PublishOp>(op))
          mailboxes.push_back(op);
      });
      for (Operation *op : mailboxes)
        op->erase();
      for (auto stage : launch.getBodyBlock().getOps<StageOp>()) {
        stage->removeAttr(MonoDialect::ClaimAttrHelper::getNameStr());
        stage->removeAttr(MonoDialect::HandOverAttrHelper::getNameStr());
      }
      launch.walk([](GemvRowsOp g) {
        g->removeAttr(MonoDialect::PrefetchedAttrHelper::getNameStr());
      });
      launch->removeAttr(MonoDialect::StageCallsAttrHelper::getNameStr());
      launch->setAttr(MonoDialect::UnfusedAttrHelper::getNameStr(), UnitAttr::get(&getContext()));
    }
    if (failed)
      signalPassFailure();
  }
};
} // namespace
