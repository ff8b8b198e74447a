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

namespace {

/// A declared attribute (MonoDialect.td, discardableAttrs): the ops that may
/// carry it and whether its integer must not be negative.
struct DeclaredAttribute {
  llvm::StringLiteral name;
  enum Kind { Integer, Unit, Bool, StringArray } kind;
  bool (*carrier)(Operation *);
  llvm::StringLiteral carriers;
};

template <typename... Ops>
bool isOneOf(Operation *op) {
  return isa<Ops...>(op);
}

// The names are ODS's (discardableAttrs); the table adds where each belongs
// and what its value must be.
using D = MonoDialect;
constexpr DeclaredAttribute kDeclared[] = {
    {D::BaseAttrHelper::getNameStr(), DeclaredAttribute::Integer, isOneOf<StageOp>, "mono.stage"},
    {D::ClaimAttrHelper::getNameStr(), DeclaredAttribute::Integer, isOneOf<StageOp>, "mono.stage"},
    {D::HandOverAttrHelper::getNameStr(), DeclaredAttribute::Unit, isOneOf<StageOp>, "mono.stage"},
    {D::RegionsAttrHelper::getNameStr(), DeclaredAttribute::StringArray, isOneOf<WaitOp, WaitPeerOp>,
     "mono.wait and mono.wait_peer"},
    {D::WholeProducerAttrHelper::getNameStr(), DeclaredAttribute::Unit, isOneOf<WaitOp, WaitPeerOp>,
     "mono.wait and mono.wait_peer"},
    {D::PolledOnceAttrHelper::getNameStr(), DeclaredAttribute::Unit, isOneOf<WaitOp>, "mono.wait"},
    {D::PrefetchedAttrHelper::getNameStr(), DeclaredAttribute::Unit, isOneOf<GemvRowsOp>,
     "mono.gemv_rows"},
    {D::TagOffsetAttrHelper::getNameStr(), DeclaredAttribute::Integer, isOneOf<LaunchOp>,
     "mono.launch"},
    {D::AdvanceEpochAttrHelper::getNameStr(), DeclaredAttribute::Bool, isOneOf<LaunchOp>,
     "mono.launch"},
    {D::StepTagAttrHelper::getNameStr(), DeclaredAttribute::Integer, isOneOf<LaunchOp>, "mono.launch"},
    {D::EndsStepAttrHelper::getNameStr(), DeclaredAttribute::Bool, isOneOf<LaunchOp>, "mono.launch"},
    {D::ScratchBytesAttrHelper::getNameStr(), DeclaredAttribute::Integer, isOneOf<LaunchOp>,
     "mono.launch"},
    {D::PeerSlotBytesAttrHelper::getNameStr(), DeclaredAttribute::Integer, isOneOf<LaunchOp>,
     "mono.launch"},
    {D::LdsBytesAttrHelper::getNameStr(), DeclaredAttribute::Integer, isOneOf<LaunchOp>, "mono.launch"},
    {D::StageCallsAttrHelper::getNameStr(), DeclaredAttribute::Unit, isOneOf<LaunchOp>, "mono.launch"},
    {D::OffsetAttrHelper::getNameStr(), DeclaredAttribute::Integer, isOneOf<RegionOp>, "mono.region"},
    {D::PeerOffsetAttrHelper::getNameStr(), DeclaredAttribute::Integer, isOneOf<RegionOp>,
     "mono.region"},
    {D::PeerAttrHelper::getNameStr(), DeclaredAttribute::Unit, isOneOf<RegionOp>, "mono.region"},
    {D::RingBytesAttrHelper::getNameStr(), DeclaredAttribute::Integer, isOneOf<GemvRowsOp>,
     "mono.gemv_rows"},
    {D::ChunkTokensAttrHelper::getNameStr(), DeclaredAttribute::Integer, isOneOf<GemvRowsOp>,
     "mono.gemv_rows"},
    {D::WithExpandAttrHelper::getNameStr(), DeclaredAttribute::Unit, isOneOf<ReduceOp>,
     "mono.reduce"},
    {D::UnfusedAttrHelper::getNameStr(), DeclaredAttribute::Unit, isOneOf<LaunchOp>, "mono.launch"},
    {D::AreaAttrHelper::getNameStr(), DeclaredAttribute::Integer,
     isOneOf<SliceOp, ExpandOp, GatherOp, ReduceOp, InterleaveOp, QuantizeMxfp8Op>,
     "mono.slice, mono.expand, mono.gather, mono.reduce, mono.interleave and "
     "mono.quantize_mxfp8"},
    {D::ReuseAttrHelper::getNameStr(), DeclaredAttribute::Unit,
     isOneOf<SliceOp, ExpandOp, GatherOp, ReduceOp>,
     "mono.slice, mono.expand, mono.gather and mono.reduce"},
};

} // namespace

LogicalResult MonoDialect::verifyOperationAttribute(Operation *op, NamedAttribute attribute) {
  const StringRef name = attribute.getName().getValue();
  const DeclaredAttribute *declared = llvm::find_if(
      kDeclared, [&](const DeclaredAttribute &d) { return d.name == name; });
  if (declared == std::end(kDeclared)) {
    std::string known;
    for (const DeclaredAttribute &d : kDeclared)
      known += (known.empty() ? "" : ", ") + d.name.str();
    return op->emitError() << "unknown attribute '" << name << "' (the mono dialect declares "
                           << known << ")";
  }
  if (!declared->carrier(op))
    return op->emitError() << "'" << name << "' belongs on " << declared->carriers << ", not on '"
                           << op->getName() << "'";
  Attribute value = attribute.getValue();
  switch (declared->kind) {
  case DeclaredAttribute::Integer: {
    auto integer = dyn_cast<IntegerAttr>(value);
    if (!integer || !integer.getType().isInteger(64))
      return op->emitError() << "'" << name << "' must be an i64 integer, got " << value;
    if (integer.getInt() < 0)
      return op->emitError() << "'" << name << "' must not be negative, got " << integer.getInt();
    return success();
  }
  case DeclaredAttribute::Unit:
    return isa<UnitAttr>(value) ? success()
                                : op->emitError() << "'" << name << "' is a unit attribute";
  case DeclaredAttribute::Bool:
    return isa<BoolAttr>(value) ? success()
                                : op->emitError() << "'" << name << "' must be true or false";
  case DeclaredAttribute::StringArray: {
    auto array = dyn_cast<ArrayAttr>(value);
    if (!array || !llvm::all_of(array, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError() << "'" << name << "' must be an array of region names";
    return success();
  }
  }
  return success();
}

bool monodc::mono::isSupportedElementType(Type type) {
  return type.isF32() || type.isBF16() || isa<Float8E4M3FNType>(type) ||
         isa<Float4E2M1FNType>(type) || isa<Float8E8M0FNUType>(type);
}

bool monodc::mono::isRegionElementType(Type type) {
  return isSupportedElementType(type) || type.isInteger(8) || isIndexElementType(type);
}

bool monodc::mono::isIndexElementType(Type type) {
  return type.isF32() || type.isInteger(32) || type.isInteger(64);
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
  if (type.isInteger(32))
    return "i32";
  if (type.isInteger(64))
    return "i64";
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
