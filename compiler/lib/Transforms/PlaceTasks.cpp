//===- PlaceTasks.cpp - task t of a stage runs on CTA (base + t) mod G ----===//
#include "monodc/Transforms/Passes.h"

namespace monodc::mono {
#define GEN_PASS_DEF_PLACETASKS
#include "monodc/Transforms/Passes.h.inc"
} // namespace monodc::mono

using namespace mlir;
using namespace monodc::mono;

namespace {
struct PlaceTasks : public monodc::mono::impl::PlaceTasksBase<PlaceTasks> {
  void runOnOperation() override {
    for (auto launch : getOperation().getOps<LaunchOp>()) {
      const int64_t grid = launch.getGrid();
      int64_t base = 0;
      for (auto stage : launch.getBodyBlock().getOps<StageOp>()) {
        stage->setAttr("mono.base", IntegerAttr::get(IntegerType::get(&getContext(), 64), base));
        base = (base + stage.getTasks()) % grid;
      }
    }
  }
};
} // namespace
