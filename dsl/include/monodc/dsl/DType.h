//===- DType.h - number formats of the DSL ----------------------*- C++ -*-===//
#ifndef MONODC_DSL_DTYPE_H
#define MONODC_DSL_DTYPE_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"

#include <string>

namespace monodc::dsl {

/// The number formats a tile or region may hold (docs/numerics.md section 2). Byte
/// is for regions only: records that mix formats (the KV cache), read and
/// written as tiles of the formats they hold.
enum class DType { F32, BF16, E4M3, E2M1, E8M0, Byte };

inline constexpr DType f32 = DType::F32;
inline constexpr DType bf16 = DType::BF16;
inline constexpr DType e4m3 = DType::E4M3;
inline constexpr DType e2m1 = DType::E2M1;
inline constexpr DType e8m0 = DType::E8M0;
inline constexpr DType byte = DType::Byte;

mlir::Type toMlirType(DType type, mlir::MLIRContext &context);
DType fromMlirType(mlir::Type type);
std::string dtypeName(DType type);

} // namespace monodc::dsl

#endif // MONODC_DSL_DTYPE_H
