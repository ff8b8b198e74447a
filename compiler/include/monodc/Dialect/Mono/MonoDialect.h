//===- MonoDialect.h - the mono dialect -------------------------*- C++ -*-===//
#ifndef MONODC_DIALECT_MONO_MONODIALECT_H
#define MONODC_DIALECT_MONO_MONODIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

#include "monodc/Dialect/Mono/MonoDialect.h.inc"
#include "monodc/Dialect/Mono/MonoEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "monodc/Dialect/Mono/MonoTypes.h.inc"

#define GET_OP_CLASSES
#include "monodc/Dialect/Mono/MonoOps.h.inc"

namespace monodc::mono {

/// True for the number formats a tile or region may hold.
bool isSupportedElementType(mlir::Type type);

/// True for what a region may hold: the tile formats, i8 (byte records), and
/// i32 or i64 (index inputs as a serving engine holds them).
bool isRegionElementType(mlir::Type type);

/// True for what an index input may hold: f32 whole numbers, i32 or i64.
bool isIndexElementType(mlir::Type type);

/// The largest index bound whose whole numbers an f32 tile holds exactly
/// (2^24): what an index input's load converts them to.
inline constexpr int64_t kMaxIndexBound = int64_t(1) << 24;

/// Bytes one value of a tile format takes inside a byte record; 0 for e2m1,
/// which a byte record cannot hold (two values share a byte).
int64_t encodedBytes(mlir::Type type);

/// A short name of a number format for messages ("bf16", "e4m3", ...).
std::string formatName(mlir::Type type);

/// The number of values of a tile-typed value.
inline int64_t tileSize(mlir::Value v) { return mlir::cast<TileType>(v.getType()).getSize(); }

/// The region a memory op names, or null when the launch declares none.
RegionOp lookupRegion(mlir::Operation *from, mlir::FlatSymbolRefAttr name);

} // namespace monodc::mono

#endif // MONODC_DIALECT_MONO_MONODIALECT_H
