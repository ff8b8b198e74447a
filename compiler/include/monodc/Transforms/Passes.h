//===- Passes.h - mono passes -----------------------------------*- C++ -*-===//
#ifndef MONODC_TRANSFORMS_PASSES_H
#define MONODC_TRANSFORMS_PASSES_H

#include "monodc/Dialect/Mono/MonoDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace monodc::mono {

#define GEN_PASS_DECL
#include "monodc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "monodc/Transforms/Passes.h.inc"

/// The architectures the HIP printer and the device library serve.
bool isSupportedArch(llvm::StringRef arch);

/// Number of values of a `size`-value tile one thread of `block` holds.
inline int64_t slotsPerThread(int64_t size, int64_t block) {
  return size == 1 ? 1 : (size + block - 1) / block;
}

/// Shared memory (bytes) the building block of `op` needs, 0 for none.
int64_t sharedBytesFor(mlir::Operation *op, int64_t block);

} // namespace monodc::mono

#endif // MONODC_TRANSFORMS_PASSES_H
