//===- EmitPipeline.cpp - fuse a module, then print it as HIP -------------===//
#include "monodc/Emit/EmitPipeline.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace monodc;
using namespace monodc::mono;

FailureOr<std::string> emit::emitHip(ModuleOp module, const FusionOptions &options,
                                     const HipPrintOptions &printOptions) {
  if (failed(runFusionPipeline(module, options)))
    return failure();
  auto launches = module.getOps<LaunchOp>();
  if (launches.empty())
    return module.emitError("module holds no mono.launch"), failure();
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(printHip(*launches.begin(), os, printOptions)))
    return failure();
  return text;
}

LogicalResult emit::printUnfusedHip(LaunchOp launch, llvm::raw_ostream &os,
                                    const HipPrintOptions &printOptions) {
  OpBuilder builder(launch.getContext());
  OwningOpRef<ModuleOp> copy = ModuleOp::create(launch.getLoc());
  builder.setInsertionPointToEnd(copy->getBody());
  auto unfused = cast<LaunchOp>(builder.clone(*launch.getOperation()));
  PassManager pm(launch.getContext());
  pm.addPass(createUnfuse());
  if (failed(pm.run(*copy)))
    return failure();
  return printHip(unfused, os, printOptions);
}
