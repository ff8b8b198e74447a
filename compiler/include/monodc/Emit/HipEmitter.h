//===- HipEmitter.h - print a launch as HIP ---------------------*- C++ -*-===//
#ifndef MONODC_EMIT_HIPEMITTER_H
#define MONODC_EMIT_HIPEMITTER_H

#include "monodc/Dialect/Mono/MonoDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace monodc::emit {

/// The kernel symbol of a launch in the emitted source and the code object.
std::string kernelName(mono::LaunchOp launch);

/// Prints one self-contained HIP translation unit for `launch`, which must
/// have been through mono-prepare-emission. The IR is only read.
/// Kernel arguments: one pointer per region in declaration order, then the
/// 8-byte sync word pair used between stages.
mlir::LogicalResult printHip(mono::LaunchOp launch, llvm::raw_ostream &os);

/// Runs mono-prepare-emission on `module`, then prints its first launch.
mlir::FailureOr<std::string> emitHip(mlir::ModuleOp module);

} // namespace monodc::emit

#endif // MONODC_EMIT_HIPEMITTER_H
