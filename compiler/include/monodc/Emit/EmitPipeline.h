//===- EmitPipeline.h - fuse a module, then print it as HIP -----*- C++ -*-===//
//
// The pass pipeline and the printer in one call. Kept apart from
// HipEmitter.h, so that the printer's header does not include the pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_EMIT_EMITPIPELINE_H
#define MONODC_EMIT_EMITPIPELINE_H

#include "monodc/Emit/HipEmitter.h"
#include "monodc/Transforms/Passes.h"

namespace monodc::emit {

/// Runs the fusion passes and mono-prepare-emission on `module`, then prints
/// its first launch.
mlir::FailureOr<std::string> emitHip(mlir::ModuleOp module,
                                     const mono::FusionOptions &options = {},
                                     const HipPrintOptions &printOptions = {});

/// Prints the unfused baseline of `launch` (a prepared fused launch, left
/// as it is): mono-unfuse on a copy, then printHip of the copy.
mlir::LogicalResult printUnfusedHip(mono::LaunchOp launch, llvm::raw_ostream &os,
                                    const HipPrintOptions &printOptions = {});

} // namespace monodc::emit

#endif // MONODC_EMIT_EMITPIPELINE_H
