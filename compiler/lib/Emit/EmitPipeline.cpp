//===- EmitPipeline.cpp - fuse a module, then print it as HIP -------------===//
#include "monodc/Emit/EmitPipeline.h"

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
