//===- Pipeline.cpp - the fusion passes in order --------------------------===//
#include "monodc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace monodc::mono;

void monodc::mono::addFusionPipeline(OpPassManager &pm, const FusionOptions &options) {
  pm.addPass(createCheckHandoffs());
  pm.addPass(createPlaceTasks());
  pm.addPass(createPlanMemory());
  MaterializeSyncOptions sync;
  sync.tagOffset = options.tagOffset;
  sync.advanceEpoch = options.advanceEpoch;
  sync.testOmitPublish = options.testOmitPublish;
  pm.addPass(createMaterializeSync(sync));
  pm.addPass(createHoistLoads());
  pm.addPass(createPlanWaits());
  pm.addPass(createLowerTiles());
  pm.addPass(createPrepareEmission());
  pm.addPass(createPlanShared());
  if (options.unfused)
    pm.addPass(createUnfuse());
}

LogicalResult monodc::mono::runFusionPipeline(ModuleOp module, const FusionOptions &options) {
  PassManager pm(module.getContext());
  addFusionPipeline(pm, options);
  return pm.run(module);
}
