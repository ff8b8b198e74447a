//===- HipEmitter.h - print a launch as HIP ---------------------*- C++ -*-===//
#ifndef MONODC_EMIT_HIPEMITTER_H
#define MONODC_EMIT_HIPEMITTER_H

#include "monodc/Dialect/Mono/MonoDialect.h"
#include "monodc/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace monodc::emit {

/// The kernel symbol of a launch in the emitted source and the code object.
std::string kernelName(mono::LaunchOp launch);

struct HipPrintOptions {
  /// The unfused baseline: one kernel per stage (`<kernel>_s<i>`, same
  /// arguments), ordered by the stream; no mailboxes, no epoch.
  bool unfused = false;
};

/// Prints one self-contained HIP translation unit for `launch`, which must
/// have been through mono-prepare-emission. The IR is only read.
/// Kernel arguments: one pointer per input, weight and output region in
/// declaration order, then the scratch buffer (mono.scratch_bytes, planned
/// by mono-plan-memory) and the epoch buffer (epochWords(grid) words, zeroed
/// once when allocated; never cleared between steps).
mlir::LogicalResult printHip(mono::LaunchOp launch, llvm::raw_ostream &os,
                             const HipPrintOptions &options = {});

/// Runs the fusion passes and mono-prepare-emission on `module`, then prints
/// its first launch.
mlir::FailureOr<std::string> emitHip(mlir::ModuleOp module,
                                     const mono::FusionOptions &options = {},
                                     const HipPrintOptions &printOptions = {});

/// A plain-text description of a synchronized launch's kernel for hosts that
/// launch the emitted source without the compiler (the GPU harness): name,
/// grid, block, rows, scratch and epoch sizes, stages, then one line per
/// kernel argument ("arg name kind format rows cols bytes", in order) and per
/// scratch region ("scratch ... offset").
std::string kernelManifest(mono::LaunchOp launch);

} // namespace monodc::emit

#endif // MONODC_EMIT_HIPEMITTER_H
