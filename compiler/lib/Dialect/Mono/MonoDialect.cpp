//===- MonoDialect.cpp - mono dialect registration and types --------------===//
#include "monodc/Dialect/Mono/MonoDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace monodc::mono;

#include "monodc/Dialect/Mono/MonoDialect.cpp.inc"
#include "monodc/Dialect/Mono/MonoEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "monodc/Dialect/Mono/MonoTypes.cpp.inc"

void MonoDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "monodc/Dialect/Mono/MonoTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "monodc/Dialect/Mono/MonoOps.cpp.inc"
      >();
}

bool monodc::mono::isSupportedElementType(Type type) {
  return type.isF32() || type.isBF16() || isa<Float8E4M3FNType>(type) ||
         isa<Float4E2M1FNType>(type) || isa<Float8E8M0FNUType>(type);
}

bool monodc::mono::isRegionElementType(Type type) {
  return isSupportedElementType(type) || type.isInteger(8);
}

int64_t monodc::mono::encodedBytes(Type type) {
  if (type.isF32())
    return 4;
  if (type.isBF16())
    return 2;
  if (isa<Float8E4M3FNType, Float8E8M0FNUType>(type))
    return 1;
  return 0;
}

std::string monodc::mono::formatName(Type type) {
  if (type.isInteger(8))
    return "byte";
  if (type.isF32())
    return "f32";
  if (type.isBF16())
    return "bf16";
  if (isa<Float8E4M3FNType>(type))
    return "e4m3";
  if (isa<Float4E2M1FNType>(type))
    return "e2m1";
  if (isa<Float8E8M0FNUType>(type))
    return "e8m0";
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t size, Type elementType) {
  if (size <= 0)
    return emitError() << "tile size must be positive, got " << size;
  if (!isSupportedElementType(elementType))
    return emitError() << "tile element type must be f32, bf16, f8E4M3FN, "
                          "f4E2M1FN or f8E8M0FNU, got "
                       << elementType;
  return success();
}
