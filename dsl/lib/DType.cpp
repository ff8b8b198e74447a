//===- DType.cpp - number formats of the DSL ------------------------------===//
#include "monodc/dsl/DType.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace monodc::dsl;

mlir::Type monodc::dsl::toMlirType(DType type, mlir::MLIRContext &context) {
  switch (type) {
  case DType::F32:
    return mlir::Float32Type::get(&context);
  case DType::BF16:
    return mlir::BFloat16Type::get(&context);
  case DType::E4M3:
    return mlir::Float8E4M3FNType::get(&context);
  case DType::E2M1:
    return mlir::Float4E2M1FNType::get(&context);
  case DType::E8M0:
    return mlir::Float8E8M0FNUType::get(&context);
  case DType::Byte:
    return mlir::IntegerType::get(&context, 8);
  case DType::I32:
    return mlir::IntegerType::get(&context, 32);
  case DType::I64:
    return mlir::IntegerType::get(&context, 64);
  }
  return {};
}

DType monodc::dsl::fromMlirType(mlir::Type type) {
  if (type.isBF16())
    return DType::BF16;
  if (mlir::isa<mlir::Float8E4M3FNType>(type))
    return DType::E4M3;
  if (mlir::isa<mlir::Float4E2M1FNType>(type))
    return DType::E2M1;
  if (mlir::isa<mlir::Float8E8M0FNUType>(type))
    return DType::E8M0;
  if (type.isInteger(8))
    return DType::Byte;
  if (type.isInteger(32))
    return DType::I32;
  if (type.isInteger(64))
    return DType::I64;
  return DType::F32;
}

std::string monodc::dsl::dtypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "f32";
  case DType::BF16:
    return "bf16";
  case DType::E4M3:
    return "e4m3";
  case DType::E2M1:
    return "e2m1";
  case DType::E8M0:
    return "e8m0";
  case DType::Byte:
    return "byte";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "?";
}
