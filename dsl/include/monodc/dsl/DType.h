//===- DType.h - number formats of the DSL ----------------------*- C++ -*-===//
#ifndef MONODC_DSL_DTYPE_H
#define MONODC_DSL_DTYPE_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"

#include <string>

namespace monodc::dsl {

/// The number formats a tile or region may hold (docs/numerics.md section 2). Byte
/// is for regions only: records that mix formats (the KV cache), read and
/// written as tiles of the formats they hold. I32 and I64 are for index
/// inputs only (Launch::indexInput): a serving engine's index tensors, read
/// as f32 tiles of whole numbers.
enum class DType { F32, BF16, E4M3, E2M1, E8M0, Byte, I32, I64 };

inline constexpr DType f32 = DType::F32;
inline constexpr DType bf16 = DType::BF16;
inline constexpr DType e4m3 = DType::E4M3;
inline constexpr DType e2m1 = DType::E2M1;
inline constexpr DType e8m0 = DType::E8M0;
inline constexpr DType byte = DType::Byte;
inline constexpr DType i32 = DType::I32;
inline constexpr DType i64 = DType::I64;

mlir::Type toMlirType(DType type, mlir::MLIRContext &context);
DType fromMlirType(mlir::Type type);
std::string dtypeName(DType type);

} // namespace monodc::dsl

#endif // MONODC_DSL_DTYPE_H
