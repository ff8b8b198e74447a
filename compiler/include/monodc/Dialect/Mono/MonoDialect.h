//===- MonoDialect.h - the mono dialect -------------------------*- C++ -*-===//
#ifndef MONODC_DIALECT_MONO_MONODIALECT_H
#define MONODC_DIALECT_MONO_MONODIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "monodc/Dialect/Mono/MonoDialect.h.inc"
#include "monodc/Dialect/Mono/MonoEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "monodc/Dialect/Mono/MonoTypes.h.inc"

#define GET_OP_CLASSES
#include "monodc/Dialect/Mono/MonoOps.h.inc"

namespace monodc::mono {

/// True for the number formats a tile or region may hold.
bool isSupportedElementType(mlir::Type type);

/// A short name of a number format for messages ("bf16", "e4m3", ...).
std::string formatName(mlir::Type type);

/// The region a memory op names, or null when the launch declares none.
RegionOp lookupRegion(mlir::Operation *from, mlir::FlatSymbolRefAttr name);

} // namespace monodc::mono

#endif // MONODC_DIALECT_MONO_MONODIALECT_H
