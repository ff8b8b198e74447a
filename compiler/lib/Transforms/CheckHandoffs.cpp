//===- CheckHandoffs.cpp - refuse plans that could deadlock or race -------===//
#include "monodc/Analysis/Handoffs.h"
#include "monodc/Transforms/Passes.h"

namespace monodc::mono {
#define GEN_PASS_DEF_CHECKHANDOFFS
#include "monodc/Transforms/Passes.h.inc"
} // namespace monodc::mono

using namespace mlir;
using namespace monodc::mono;

namespace {
struct CheckHandoffs : public monodc::mono::impl::CheckHandoffsBase<CheckHandoffs> {
  void runOnOperation() override {
    for (auto launch : getOperation().getOps<LaunchOp>())
      if (failed(analyzeHandoffs(launch)))
        return signalPassFailure();
  }
};
} // namespace
