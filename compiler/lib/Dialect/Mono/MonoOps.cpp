//===- MonoOps.cpp - mono dialect operation verifiers ---------------------===//
#include "monodc/Dialect/Mono/MonoDialect.h"
#include "monodc/formats/AiterShuffle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace monodc::mono;

#define GET_OP_CLASSES
#include "monodc/Dialect/Mono/MonoOps.cpp.inc"

namespace {
TileType tileOf(Value value) { return cast<TileType>(value.getType()); }

std::optional<int64_t> constantIndex(Value value) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  return std::nullopt;
}

/// Checks that [col, col + size) lies in a row of `region` and, when the row
/// is a constant, that the row exists.
LogicalResult checkWindow(Operation *op, RegionOp region, Value row, Value col,
                          int64_t size) {
  if (size > region.getCols())
    return op->emitOpError() << "tile of " << size << " values is wider than "
                             << "region '" << region.getSymName() << "' ("
                             << region.getCols() << " columns)";
  if (auto c = constantIndex(col); c && (*c < 0 || *c + size > region.getCols()))
    return op->emitOpError() << "columns [" << *c << ", " << *c + size
                             << ") are outside region '" << region.getSymName()
                             << "' (" << region.getCols() << " columns)";
  // A region sized at launch is known to have one row.
  const int64_t rows = region.getRowsAtLaunch() ? 1 : region.getRows();
  if (auto r = constantIndex(row); r && (*r < 0 || *r >= rows))
    return op->emitOpError() << "row " << *r << " is outside region '"
                             << region.getSymName() << "' (" << rows
                             << (region.getRowsAtLaunch() ? " row known before launch)" : " rows)");
  return success();
}
/// A tile's encodings inside a byte region: `col` counts bytes, and the
/// format must take whole bytes, aligned to its width when the column is known.
LogicalResult checkByteWindow(Operation *op, RegionOp region, Value row, Value col,
                              TileType tile) {
  int64_t width = encodedBytes(tile.getElementType());
  if (width == 0)
    return op->emitOpError() << "cannot address " << formatName(tile.getElementType())
                             << " values in byte region '" << region.getSymName()
                             << "'; two of them share a byte";
  if (auto c = constantIndex(col); c && *c % width != 0)
    return op->emitOpError() << "byte " << *c << " of region '" << region.getSymName()
                             << "' is not aligned to the " << width << "-byte "
                             << formatName(tile.getElementType()) << " values stored there";
  return checkWindow(op, region, row, col, tile.getSize() * width);
}

/// The size of an elementwise result over f32 `operands`, where size-1
/// tiles broadcast; a failure names the mismatch.
FailureOr<int64_t> broadcastSize(Operation *op, ValueRange operands) {
  int64_t size = 1;
  for (Value v : operands) {
    TileType t = tileOf(v);
    if (!t.getElementType().isF32())
      return op->emitOpError() << "operates on f32 tiles, got a "
                               << formatName(t.getElementType()) << " tile";
    if (t.getSize() != 1) {
      if (size != 1 && size != t.getSize())
        return op->emitOpError()
               << "operand sizes do not match (only a size-1 tile broadcasts)";
      size = t.getSize();
    }
  }
  return size;
}

LogicalResult checkElementwiseResult(Operation *op, Value result, int64_t size) {
  if (tileOf(result).getSize() != size || !tileOf(result).getElementType().isF32())
    return op->emitOpError() << "result must be an f32 tile of " << size << " values";
  return success();
}

} // namespace

RegionOp monodc::mono::lookupRegion(Operation *from, FlatSymbolRefAttr name) {
  auto launch = from->getParentOfType<LaunchOp>();
  if (!launch || !name)
    return nullptr;
  return dyn_cast_or_null<RegionOp>(
      SymbolTable::lookupSymbolIn(launch, name.getAttr()));
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

LogicalResult LaunchOp::verify() {
  // The attributes are signless 64-bit: read them signed, so that a negative
  // value is refused as itself rather than as a huge one.
  const auto grid = static_cast<int64_t>(getGrid()), block = static_cast<int64_t>(getBlock());
  const auto rows = static_cast<int64_t>(getRows()), ranks = static_cast<int64_t>(getRanks());
  if (grid < 1 || grid > kMaxGrid)
    return emitOpError() << "grid must be in [1, " << kMaxGrid << "], got " << grid;
  if (block < 32 || block > 1024 || !llvm::isPowerOf2_64(static_cast<uint64_t>(block)))
    return emitOpError() << "block must be a power of two in [32, 1024], got " << block;
  if (rows < 1 || rows > 48)
    return emitOpError() << "rows must be in [1, 48], got " << rows;
  if (ranks < 1 || ranks > 8)
    return emitOpError() << "ranks must be in [1, 8], got " << ranks;
  bool sawStage = false;
  for (Operation &op : getBodyBlock()) {
    if (isa<StageOp>(op)) {
      sawStage = true;
    } else if (isa<RegionOp>(op)) {
      if (sawStage)
        return op.emitOpError() << "regions must be declared before the first stage";
    } else {
      return op.emitOpError() << "is not allowed directly in a launch; only "
                                 "mono.region and mono.stage are";
    }
  }
  return success();
}

LogicalResult RegionOp::verify() {
  if (getKind() == MemoryKind::Flags) {
    if (!getElementType().isInteger(64) || getShape().size() != 1)
      return emitOpError() << "flags region '" << getSymName()
                           << "' must be i64 [tasks]";
    return success();
  }
  if (getKind() == MemoryKind::Epoch) {
    if (!getElementType().isInteger(32) || getShape().size() != 1)
      return emitOpError() << "epoch region '" << getSymName() << "' must be i32 [words]";
    return success();
  }
  if (!isRegionElementType(getElementType()))
    return emitOpError() << "region '" << getSymName()
                         << "' has unsupported element type " << getElementType();
  const bool integer = getElementType().isInteger(32) || getElementType().isInteger(64);
  if (integer && !getIndexBound())
    return emitOpError() << "region '" << getSymName() << "' holds "
                         << formatName(getElementType())
                         << ", which only an index input (with an index_bound) may hold";
  if (getIndexBound() && (getKind() != MemoryKind::Input ||
                          !isIndexElementType(getElementType()) || *getIndexBound() < 1 ||
                          *getIndexBound() > kMaxIndexBound))
    return emitOpError() << "region '" << getSymName()
                         << "' has an index_bound, which only an f32, i32 or i64 input with a "
                            "bound in [1, 2^24] may have";
  if (getShape().empty() || getShape().size() > 2)
    return emitOpError() << "region '" << getSymName()
                         << "' must have rank 1 or 2, got rank " << getShape().size();
  for (int64_t extent : getShape())
    if (extent <= 0)
      return emitOpError() << "region '" << getSymName()
                           << "' has a non-positive extent " << extent;
  if (auto from = getHandedFromAttr()) {
    if (getKind() != MemoryKind::Input)
      return emitOpError() << "region '" << getSymName()
                           << "' is handed from another launch, which only an input may be";
    if (from.getNestedReferences().size() != 1)
      return emitOpError() << "region '" << getSymName()
                           << "' must name its producer as @launch::@region, got " << from;
    if (from.getRootReference() == (*this)->getParentOfType<LaunchOp>().getSymNameAttr())
      return emitOpError() << "region '" << getSymName()
                           << "' is handed from its own launch; a hand-over joins two launches";
  }
  if (getStepResult() && getKind() != MemoryKind::Output)
    return emitOpError() << "region '" << getSymName()
                         << "' is a step result, which only an output may be";
  if (auto target = getIndexesAttr()) {
    RegionOp counted = lookupRegion(*this, target);
    if (!getIndexBound() || !counted || !counted.getRowsAtLaunch() ||
        *getIndexBound() % counted.getRows() != 0)
      return emitOpError() << "region '" << getSymName() << "' indexes " << target
                           << ", which needs an index_bound that is a multiple of the rows of a "
                              "region of the launch sized at launch";
  }
  if (getRowsAtLaunch() && ((getKind() != MemoryKind::Input && getKind() != MemoryKind::Output &&
                             getKind() != MemoryKind::Weight) ||
                            getShape().size() != 2))
    return emitOpError() << "region '" << getSymName()
                         << "' is sized at launch, which only a 2-D input, output or weight may be";
  if (getColsAtLaunch() && (!getIndexBound() || getShape().size() != 2 || getRowsAtLaunch()))
    return emitOpError() << "region '" << getSymName()
                         << "' has its columns given at launch, which only a 2-D index input "
                            "with fixed rows may have";
  return success();
}

LogicalResult StageOp::verify() {
  const auto tasks = static_cast<int64_t>(getTasks());
  if (tasks < 1 || tasks > kMaxTasks)
    return emitOpError() << "stage '" << getSymName() << "' must have between 1 and "
                         << kMaxTasks << " tasks, got " << tasks;
  Block &body = getBodyBlock();
  if (body.getNumArguments() != 1 || !body.getArgument(0).getType().isIndex())
    return emitOpError() << "stage '" << getSymName()
                         << "' body must take exactly one index argument (the task)";
  for (Operation &op : body) {
    StringRef ns = op.getDialect() ? op.getDialect()->getNamespace() : "";
    if ((ns != "mono" && ns != "arith") ||
        isa<LaunchOp, RegionOp, StageOp>(op))
      return op.emitOpError() << "is not allowed in the body of stage '"
                              << getSymName() << "'";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

static FailureOr<RegionOp> flagsRegion(Operation *op, FlatSymbolRefAttr name) {
  RegionOp region = lookupRegion(op, name);
  if (!region || region.getKind() != MemoryKind::Flags)
    return op->emitOpError() << "names '" << name.getValue()
                             << "', which is not a flags region of the launch";
  return region;
}

LogicalResult PublishOp::verify() {
  if (failed(flagsRegion(*this, getFlagsAttr())))
    return failure();
  auto stage = (*this)->getParentOfType<StageOp>();
  if (!stage || getTask() != stage.getTaskIndex())
    return emitOpError() << "publishes the flag of the enclosing task only";
  return success();
}

LogicalResult SkipUnlessOp::verify() {
  if (getRest() && getPad())
    return emitOpError() << "is both `rest` and `pad`; a pad row's task promises nothing of "
                            "later tasks (pad rows need not be the last)";
  for (Operation *op = (*this)->getNextNode(); op; op = op->getNextNode()) {
    if (isa<SkipUnlessOp>(op))
      return emitOpError() << "is the stage's second; a task skips once";
    if (isa<StorePeerOp, PublishPeerOp>(op))
      return op->emitOpError() << "follows a mono.skip_unless; a task that may skip keeps "
                                  "its peer hand-offs ahead of it";
  }
  return success();
}

LogicalResult WaitOp::verify() {
  auto region = flagsRegion(*this, getFlagsAttr());
  if (failed(region))
    return failure();
  auto first = constantIndex(getFirst()), count = constantIndex(getCount());
  if (count && *count <= 0)
    return emitOpError() << "waits on " << *count << " flags";
  if (first && count && (*first < 0 || *first + *count > region->getCols()))
    return emitOpError() << "waits on flags [" << *first << ", " << *first + *count
                         << ") outside '" << region->getSymName() << "' ("
                         << region->getCols() << " tasks)";
  return success();
}

/// Refuses a load or store other than mono.load_at of a region whose
/// columns are given at launch: its row stride is not known when it is built.
LogicalResult checkFixedColumns(Operation *op, RegionOp region) {
  if (region.getColsAtLaunch())
    return op->emitOpError() << "addresses region '" << region.getSymName()
                             << "', whose columns are given at launch; read it with "
                                "mono.load_at";
  return success();
}

LogicalResult LoadOp::verify() {
  RegionOp region = lookupRegion(*this, getRegionAttr());
  if (!region)
    return emitOpError() << "reads region '" << getRegion()
                         << "' which the launch does not declare";
  if (failed(checkFixedColumns(*this, region)))
    return failure();
  TileType tile = tileOf(getResult());
  if (region.holdsBytes())
    return checkByteWindow(*this, region, getRow(), getCol(), tile);
  // An index input's whole numbers load as f32, exactly (index_bound <= 2^24).
  Type holds = region.getIndexBound() ? Float32Type::get(getContext()) : region.getElementType();
  if (tile.getElementType() != holds)
    return emitOpError() << "loads a " << formatName(tile.getElementType())
                         << " tile from " << formatName(region.getElementType())
                         << " region '" << region.getSymName() << "'";
  return checkWindow(*this, region, getRow(), getCol(), tile.getSize());
}

LogicalResult StoreOp::verify() {
  RegionOp region = lookupRegion(*this, getRegionAttr());
  if (!region)
    return emitOpError() << "writes region '" << getRegion()
                         << "' which the launch does not declare";
  if (failed(checkFixedColumns(*this, region)))
    return failure();
  if (!region.isWritable())
    return emitOpError() << "writes " << stringifyMemoryKind(region.getKind())
                         << " region '" << region.getSymName()
                         << "', which is read-only";
  TileType tile = tileOf(getValue());
  if (region.holdsBytes()) {
    if (getRows() != 1)
      return emitOpError() << "stores " << getRows() << " rows into byte region '"
                           << region.getSymName() << "'; a byte record is stored one row at a time";
    return checkByteWindow(*this, region, getRow(), getCol(), tile);
  }
  if (tile.getElementType() != region.getElementType())
    return emitOpError() << "stores a " << formatName(tile.getElementType())
                         << " tile into " << formatName(region.getElementType())
                         << " region '" << region.getSymName() << "'";
  if (getRows() < 1 || tile.getSize() % getRows() != 0)
    return emitOpError() << "cannot split a tile of " << tile.getSize() << " values into "
                         << getRows() << " rows";
  if (getCount() && getGuard())
    return emitOpError() << "takes a guard or a count, not both";
  if (auto n = getCount() ? constantIndex(getCount()) : std::nullopt;
      n && (*n < 0 || *n > getRows()))
    return emitOpError() << "count " << *n << " is outside [0, " << getRows() << "]";
  if (auto r = constantIndex(getRow()); r && *r + getRows() > region.getRows())
    return emitOpError() << "rows [" << *r << ", " << *r + getRows()
                         << ") are outside region '" << region.getSymName() << "' ("
                         << region.getRows() << " rows)";
  return checkWindow(*this, region, getRow(), getCol(), getRowWidth());
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  if (!tileOf(getResult()).getElementType().isF32())
    return emitOpError() << "constants are f32 tiles";
  return success();
}

LogicalResult RegionRowsOp::verify() {
  RegionOp region = lookupRegion(*this, getRegionAttr());
  if (!region)
    return emitOpError() << "reads the rows of region '" << getRegion()
                         << "' which the launch does not declare";
  if (!region.getRowsAtLaunch())
    return emitOpError() << "reads the rows of region '" << getRegion()
                         << "', which is not sized at launch (its rows are "
                         << region.getRows() << ")";
  TileType tile = tileOf(getResult());
  if (!tile.getElementType().isF32() || tile.getSize() != 1)
    return emitOpError() << "gives a one-value f32 tile";
  return success();
}

LogicalResult LoadAtOp::verify() {
  RegionOp region = lookupRegion(*this, getRegionAttr());
  if (!region)
    return emitOpError() << "reads region '" << getRegion()
                         << "' which the launch does not declare";
  if (!region.getIndexBound() || region.getShape().size() != 2)
    return emitOpError() << "reads region '" << getRegion()
                         << "' at columns given by data, which only a 2-D index input allows";
  TileType cols = tileOf(getCols()), result = tileOf(getResult());
  if (!cols.getElementType().isF32() || !result.getElementType().isF32() ||
      cols.getSize() != result.getSize())
    return emitOpError() << "takes an f32 tile of columns and gives an f32 tile of as many "
                            "entries";
  const int64_t rows = region.getRowsAtLaunch() ? 1 : region.getRows();
  if (auto r = constantIndex(getRow()); r && (*r < 0 || *r >= rows))
    return emitOpError() << "row " << *r << " is outside region '" << region.getSymName()
                         << "' (" << rows << " rows)";
  return success();
}

LogicalResult RegionColsOp::verify() {
  RegionOp region = lookupRegion(*this, getRegionAttr());
  if (!region)
    return emitOpError() << "reads the columns of region '" << getRegion()
                         << "' which the launch does not declare";
  if (!region.getColsAtLaunch())
    return emitOpError() << "reads the columns of region '" << getRegion()
                         << "', which are not given at launch (it has "
                         << region.getCols() << ")";
  TileType tile = tileOf(getResult());
  if (!tile.getElementType().isF32() || tile.getSize() != 1)
    return emitOpError() << "gives a one-value f32 tile";
  return success();
}

LogicalResult IotaOp::verify() {
  TileType tile = tileOf(getResult());
  if (!tile.getElementType().isF32() || tile.getSize() > kMaxIndexBound)
    return emitOpError() << "counts in an f32 tile of at most 2^24 values";
  return success();
}

LogicalResult CastOp::verify() {
  TileType from = tileOf(getInput()), to = tileOf(getResult());
  if (from.getSize() != to.getSize())
    return emitOpError() << "changes the tile size from " << from.getSize()
                         << " to " << to.getSize();
  if (!from.getElementType().isF32() && !to.getElementType().isF32())
    return emitOpError() << "casts " << formatName(from.getElementType())
                         << " to " << formatName(to.getElementType())
                         << "; one side of a cast must be f32";
  return success();
}

template <typename Op>
static LogicalResult verifyBinary(Op op) {
  TileType lhs = tileOf(op.getLhs()), rhs = tileOf(op.getRhs()),
           result = tileOf(op.getResult());
  for (TileType t : {lhs, rhs, result})
    if (!t.getElementType().isF32())
      return op.emitOpError() << "operates on f32 tiles, got a "
                              << formatName(t.getElementType())
                              << " tile; cast it to f32 first";
  int64_t size = std::max(lhs.getSize(), rhs.getSize());
  if ((lhs.getSize() != 1 && lhs.getSize() != size) ||
      (rhs.getSize() != 1 && rhs.getSize() != size))
    return op.emitOpError() << "operand sizes " << lhs.getSize() << " and "
                            << rhs.getSize() << " do not match (only a size-1 "
                            << "tile broadcasts)";
  if (result.getSize() != size)
    return op.emitOpError() << "result size " << result.getSize()
                            << " should be " << size;
  return success();
}

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }
LogicalResult MaxOp::verify() { return verifyBinary(*this); }
LogicalResult MinOp::verify() { return verifyBinary(*this); }

template <typename Op>
static LogicalResult verifyUnary(Op op) {
  TileType in = tileOf(op.getInput()), out = tileOf(op.getResult());
  if (!in.getElementType().isF32() || in != out)
    return op.emitOpError() << "maps an f32 tile to an f32 tile of the same "
                               "size, got "
                            << in << " -> " << out;
  return success();
}

LogicalResult RsqrtOp::verify() { return verifyUnary(*this); }
LogicalResult ExpOp::verify() { return verifyUnary(*this); }
LogicalResult LogOp::verify() { return verifyUnary(*this); }

LogicalResult SelectOp::verify() {
  auto size = broadcastSize(*this, {getA(), getB(), getX(), getY()});
  return failed(size) ? failure() : checkElementwiseResult(*this, getResult(), *size);
}

LogicalResult TopKOp::verify() {
  TileType in = tileOf(getInput()), values = tileOf(getValues()), indices = tileOf(getIndices());
  if (!in.getElementType().isF32() || !values.getElementType().isF32() ||
      !indices.getElementType().isF32())
    return emitOpError() << "takes and returns f32 tiles";
  if (getK() < 1 || getK() > in.getSize() || values.getSize() != getK() ||
      indices.getSize() != getK())
    return emitOpError() << "k = " << getK() << " must be in [1, " << in.getSize()
                         << "] and size both results";
  return success();
}

LogicalResult ExpertGroupsOp::verify() {
  TileType in = tileOf(getExperts());
  for (Value out : {getSlotExpert(), getSlotFirst(), getSlotCount(), getPlaceRow()})
    if (tileOf(out) != in || !in.getElementType().isF32())
      return emitOpError() << "takes and returns f32 tiles of one size (a slot or a place each)";
  if (getGroup() < 1)
    return emitOpError() << "group = " << getGroup() << " must be at least 1";
  return success();
}

LogicalResult GatherOp::verify() {
  TileType table = tileOf(getTable()), indices = tileOf(getIndices()), out = tileOf(getResult());
  if (!table.getElementType().isF32() || !indices.getElementType().isF32() ||
      out != TileType::get(getContext(), indices.getSize(), table.getElementType()))
    return emitOpError() << "gathers f32 values: one result per index";
  return success();
}

LogicalResult FmaOp::verify() {
  auto size = broadcastSize(*this, {getA(), getB(), getC()});
  return failed(size) ? failure() : checkElementwiseResult(*this, getResult(), *size);
}

LogicalResult ExpandOp::verify() {
  TileType in = tileOf(getInput()), out = tileOf(getResult());
  if (getShape().size() != 2 || getAxis() < 0 || getAxis() > 1)
    return emitOpError() << "needs a 2-D shape and axis 0 or 1";
  int64_t rows = getShape()[0], cols = getShape()[1];
  int64_t expected = getAxis() == 1 ? rows : cols;
  if (!in.getElementType().isF32() || !out.getElementType().isF32())
    return emitOpError() << "expands f32 tiles";
  if (in.getSize() != expected || out.getSize() != rows * cols)
    return emitOpError() << "expands " << expected << " values to " << rows * cols
                         << ", got " << in.getSize() << " -> " << out.getSize();
  return success();
}

LogicalResult SliceOp::verify() {
  TileType in = tileOf(getInput()), out = tileOf(getResult());
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "keeps the number format";
  if (getBlock() < 1 || getStride() < 1 || (getBlock() > 1 && getStride() < getBlock()))
    return emitOpError() << "takes runs of " << getBlock() << " values every " << getStride()
                         << "; runs must not overlap";
  if (getOffset() < 0 || sourceOf(out.getSize() - 1) >= in.getSize())
    return emitOpError() << out.getSize() << " values from " << getOffset() << " by "
                         << getStride() << " (runs of " << getBlock()
                         << ") are outside a tile of " << in.getSize();
  return success();
}
LogicalResult SqrtOp::verify() { return verifyUnary(*this); }
LogicalResult Exp2Op::verify() { return verifyUnary(*this); }
LogicalResult SigmoidOp::verify() { return verifyUnary(*this); }
LogicalResult NegOp::verify() { return verifyUnary(*this); }
LogicalResult AbsOp::verify() { return verifyUnary(*this); }
LogicalResult FloorOp::verify() { return verifyUnary(*this); }

LogicalResult ReduceOp::verify() {
  TileType in = tileOf(getInput()), out = tileOf(getResult());
  if (!in.getElementType().isF32() || !out.getElementType().isF32())
    return emitOpError() << "reduces f32 tiles, got "
                         << formatName(in.getElementType());
  if (!getShape()) {
    if (getAxis())
      return emitOpError() << "an axis needs a shape";
    if (getVia())
      return emitOpError() << "reduces the whole tile in a library call; `via` belongs on axis "
                              "reductions";
    if (out.getSize() != 1)
      return emitOpError() << "result must be a size-1 tile, got size " << out.getSize();
    return success();
  }
  ArrayRef<int64_t> shape = *getShape();
  if (shape.size() != 2 || !getAxis() || *getAxis() > 1 || shape[0] * shape[1] != in.getSize())
    return emitOpError() << "a shape must be [rows, cols] covering the tile, with axis 0 or 1";
  int64_t expected = *getAxis() == 1 ? shape[0] : shape[1];
  if (out.getSize() != expected)
    return emitOpError() << "reducing axis " << *getAxis() << " gives " << expected
                         << " values, not " << out.getSize();
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization and dot products
//===----------------------------------------------------------------------===//

LogicalResult QuantizeMxfp8Op::verify() {
  TileType in = tileOf(getInput()), codes = tileOf(getCodes()),
           scales = tileOf(getScales());
  if (!in.getElementType().isF32())
    return emitOpError() << "quantizes an f32 tile, got "
                         << formatName(in.getElementType());
  const int64_t group = getGroup();
  if (in.getSize() % group != 0)
    return emitOpError() << "input size " << in.getSize() << " is not a multiple of the "
                         << group << "-value group";
  if (codes.getSize() != in.getSize() ||
      !isa<Float8E4M3FNType>(codes.getElementType()))
    return emitOpError() << "codes must be an e4m3 tile of " << in.getSize()
                         << " values";
  if (scales.getSize() != in.getSize() / group ||
      !isa<Float8E8M0FNUType>(scales.getElementType()))
    return emitOpError() << "scales must be an e8m0 tile of "
                         << in.getSize() / group << " values";
  return success();
}

LogicalResult GemvOp::verify() {
  RegionOp weight = lookupRegion(*this, getWeightAttr());
  if (!weight)
    return emitOpError() << "reads weight '" << getWeight()
                         << "' which the launch does not declare";
  if (weight.getShape().size() != 2)
    return emitOpError() << "weight '" << weight.getSymName()
                         << "' must be a 2-D [rows, k] region";
  TileType x = tileOf(getX()), result = tileOf(getResult());
  int64_t k = weight.getCols();
  if (x.getSize() != k)
    return emitOpError() << "activation of " << x.getSize()
                         << " values does not match the " << k
                         << " columns of weight '" << weight.getSymName() << "'";
  if (!result.getElementType().isF32())
    return emitOpError() << "result must be an f32 tile";
  if (auto r = constantIndex(getRow());
      r && (*r < 0 || *r + result.getSize() > weight.getRows()))
    return emitOpError() << "weight rows [" << *r << ", " << *r + result.getSize()
                         << ") are outside weight '" << weight.getSymName()
                         << "' (" << weight.getRows() << " rows)";

  Type wType = weight.getElementType();
  if (wType.isBF16()) {
    if (getWeightScales() || getXScales())
      return emitOpError() << "a bf16 weight takes no scales";
    if (!x.getElementType().isF32() && !x.getElementType().isBF16())
      return emitOpError() << "a bf16 weight takes an f32 or bf16 activation, got "
                           << formatName(x.getElementType());
    return success();
  }
  if (!isa<Float8E4M3FNType>(wType))
    return emitOpError() << "weight '" << weight.getSymName() << "' is "
                         << formatName(wType) << "; gemv takes bf16 or e4m3 weights";
  if (!isa<Float8E4M3FNType>(x.getElementType()) || !getXScales())
    return emitOpError() << "an e4m3 weight takes an MXFP8 activation (e4m3 "
                            "codes and their e8m0 scales)";
  TileType xScales = tileOf(getXScales());
  if (xScales.getSize() != k / 32 ||
      !isa<Float8E8M0FNUType>(xScales.getElementType()))
    return emitOpError() << "activation scales must be an e8m0 tile of " << k / 32
                         << " values";
  RegionOp scales = lookupRegion(*this, getWeightScalesAttr());
  if (!scales)
    return emitOpError() << "e4m3 weight '" << weight.getSymName()
                         << "' needs a declared e8m0 block-scale region";
  if (!isa<Float8E8M0FNUType>(scales.getElementType()) ||
      scales.getShape().size() != 2 ||
      scales.getRows() * 32 < weight.getRows() || scales.getCols() * 32 != k)
    return emitOpError() << "scales '" << scales.getSymName()
                         << "' must be e8m0 [" << (weight.getRows() + 31) / 32
                         << ", " << k / 32 << "] (one per 32x32 block of '"
                         << weight.getSymName() << "')";
  if (k % 32 != 0 || result.getSize() % 32 != 0)
    return emitOpError() << "an e4m3 gemv needs k and the result size to be "
                            "multiples of 32";
  return success();
}

LogicalResult GemvRowsOp::verify() {
  RegionOp weight = lookupRegion(*this, getWeightAttr());
  RegionOp x = lookupRegion(*this, getXAttr());
  if (!weight || !x)
    return emitOpError() << "reads '" << (weight ? getX() : getWeight())
                         << "' which the launch does not declare";
  TileType result = tileOf(getResult());
  if (!result.getElementType().isF32())
    return emitOpError() << "result must be an f32 tile";
  if (getTokens() < 1 || result.getSize() % getTokens() != 0)
    return emitOpError() << "a result of " << result.getSize() << " values is not "
                         << getTokens() << " tokens of whole rows";
  const int64_t k = weight.getCols(), outputs = getOutputs();
  if (weight.getShape().size() != 2 || x.getCols() != k)
    return emitOpError() << "activation '" << x.getSymName() << "' has " << x.getCols()
                         << " columns, weight '" << weight.getSymName() << "' " << k;
  if (k % 16 != 0)
    return emitOpError() << "k = " << k << " must be a multiple of 16";
  if (auto t = constantIndex(getFirstToken()); t && *t + getTokens() > x.getRows())
    return emitOpError() << "tokens [" << *t << ", " << *t + getTokens()
                         << ") are outside '" << x.getSymName() << "' (" << x.getRows()
                         << " rows)";
  if (auto n = getCount() ? constantIndex(getCount()) : std::nullopt;
      n && (*n < 0 || *n > getTokens()))
    return emitOpError() << "count " << *n << " is outside [0, " << getTokens() << "]";
  if (auto r = constantIndex(getRow()); r && *r + outputs > weight.getRows())
    return emitOpError() << "weight rows [" << *r << ", " << *r + outputs
                         << ") are outside '" << weight.getSymName() << "'";
  Type wType = weight.getElementType();
  if (wType.isBF16() || wType.isF32()) {
    if (getWeightScales() || getXScales())
      return emitOpError() << "a " << formatName(wType) << " weight takes no scales";
    if (!x.getElementType().isBF16() && !x.getElementType().isF32())
      return emitOpError() << "a " << formatName(wType)
                           << " weight takes a bf16 or f32 activation";
    return success();
  }
  const bool mxfp4 = isa<Float4E2M1FNType>(wType);
  if (!isa<Float8E4M3FNType>(wType) && !mxfp4)
    return emitOpError() << "takes f32, bf16, e4m3 or e2m1 weights, got " << formatName(wType);
  RegionOp ws = lookupRegion(*this, getWeightScalesAttr());
  RegionOp xs = lookupRegion(*this, getXScalesAttr());
  if (!ws || !xs || !isa<Float8E4M3FNType>(x.getElementType()))
    return emitOpError() << "an " << formatName(wType)
                         << " weight takes an MXFP8 activation and both scale regions";
  if (mxfp4) {
    // AITER's shuffle: 16-row groups, 64-value (32-byte) k blocks; scales
    // per row and 32 values, padded to [256 k, 8 k] before their permutation.
    const int64_t rows = weight.getRows(),
                  scaleRows = int64_t(formats::paddedScaleRows(size_t(rows))),
                  scaleCols = int64_t(formats::paddedScaleCols(size_t(k / 32)));
    if (rows % 16 != 0 || k % 64 != 0)
      return emitOpError() << "shuffled MXFP4 weight '" << weight.getSymName()
                           << "' needs rows a multiple of 16 and k of 64, got [" << rows << ", "
                           << k << "]";
    if (!isa<Float8E8M0FNUType>(ws.getElementType()) || ws.getRows() != scaleRows ||
        ws.getCols() != scaleCols)
      return emitOpError() << "scales '" << ws.getSymName() << "' of shuffled MXFP4 weight '"
                           << weight.getSymName() << "' must be e8m0 [" << scaleRows << ", "
                           << scaleCols << "]";
  } else if (!isa<Float8E8M0FNUType>(ws.getElementType()) || ws.getCols() * 32 != k ||
      ws.getRows() * 32 < weight.getRows())
    return emitOpError() << "scales '" << ws.getSymName() << "' must be e8m0 ["
                         << (weight.getRows() + 31) / 32 << ", " << k / 32 << "]";
  if (!isa<Float8E8M0FNUType>(xs.getElementType()) || xs.getCols() * 32 != k ||
      xs.getRows() != x.getRows())
    return emitOpError() << "activation scales '" << xs.getSymName() << "' must be e8m0 ["
                         << x.getRows() << ", " << k / 32 << "]";
  return success();
}

//===----------------------------------------------------------------------===//
// Peer memory
//===----------------------------------------------------------------------===//

static LogicalResult checkPeerAccess(Operation *op, FlatSymbolRefAttr name, int64_t rank,
                                     Type tileElement) {
  RegionOp region = lookupRegion(op, name);
  if (!region || region.getKind() != MemoryKind::Peer)
    return op->emitOpError() << "names '" << name.getValue()
                             << "', which is not a peer region of the launch";
  auto launch = op->getParentOfType<LaunchOp>();
  if (rank < 0 || rank >= launch.getRanks())
    return op->emitOpError() << "rank " << rank << " is outside the launch's "
                             << launch.getRanks() << " ranks";
  if (tileElement && tileElement != region.getElementType())
    return op->emitOpError() << "moves a " << formatName(tileElement) << " tile through "
                             << formatName(region.getElementType()) << " peer region '"
                             << region.getSymName() << "'";
  return success();
}

LogicalResult StorePeerOp::verify() {
  return checkPeerAccess(*this, getRegionAttr(), getRank(),
                         tileOf(getValue()).getElementType());
}

LogicalResult LoadPeerOp::verify() {
  return checkPeerAccess(*this, getRegionAttr(), getRank(),
                         tileOf(getResult()).getElementType());
}

static LogicalResult checkPeerFlags(Operation *op, FlatSymbolRefAttr name) {
  RegionOp region = lookupRegion(op, name);
  if (!region || region.getKind() != MemoryKind::Flags || !region->hasAttr("mono.peer"))
    return op->emitOpError() << "names '" << name.getValue()
                             << "', which is not a peer flags region of the launch";
  return success();
}

LogicalResult PublishPeerOp::verify() { return checkPeerFlags(*this, getFlagsAttr()); }

LogicalResult WaitPeerOp::verify() {
  if (failed(checkPeerFlags(*this, getFlagsAttr())))
    return failure();
  auto launch = (*this)->getParentOfType<LaunchOp>();
  if (getRank() < 0 || getRank() >= launch.getRanks())
    return emitOpError() << "rank " << getRank() << " is outside the launch's "
                         << launch.getRanks() << " ranks";
  return success();
}

LogicalResult InterleaveOp::verify() {
  TileType a = tileOf(getA()), b = tileOf(getB()), out = tileOf(getResult());
  if (a != b || out.getSize() != 2 * a.getSize() || out.getElementType() != a.getElementType())
    return emitOpError() << "interleaves two equal tiles into one of twice the size";
  return success();
}

LogicalResult ToIndexOp::verify() {
  TileType in = tileOf(getInput());
  if (in.getSize() != 1 || !in.getElementType().isF32())
    return emitOpError() << "takes a size-1 f32 tile";
  return success();
}

LogicalResult AttendChunkOp::verify() {
  RegionOp q = lookupRegion(*this, getQAttr()), cache = lookupRegion(*this, getCacheAttr());
  if (!q || !cache)
    return emitOpError() << "names a region the launch does not declare";
  const int64_t heads = getHeads(), dim = getHeadDim(), rope = getRopeDim();
  // The device library dequantizes keys 16 dims at a time.
  if (heads < 1 || dim < 1 || rope < 0 || rope % 16 != 0 || getNope() % kGroup != 0 ||
      getNope() / kGroup > kScaleBytes || getPageTokens() < 1)
    return emitOpError() << "needs heads >= 1, a rope part in 16-dim pieces and nope dims in "
                            "64-dim groups (at most 8), got heads "
                         << heads << ", head dim " << dim << ", rope " << rope;
  if (!q.getElementType().isBF16())
    return emitOpError() << "reads queries from " << formatName(q.getElementType())
                         << " region '" << q.getSymName() << "'; they are bf16";
  if (!cache.holdsBytes() ||
      cache.getCols() != getPageTokens() * (getDataBytes() + kScaleBytes))
    return emitOpError() << "reads keys from region '" << cache.getSymName()
                         << "', which must be a byte region of " << getPageTokens() << " "
                         << getDataBytes() + kScaleBytes << "-byte records a row";
  if (!tileOf(getSlots()).getElementType().isF32())
    return emitOpError() << "takes slots as an f32 tile";
  TileType m = tileOf(getM()), l = tileOf(getL()), p = tileOf(getP());
  if (m.getSize() != heads || l.getSize() != heads || p.getSize() != heads * dim ||
      !m.getElementType().isF32() || !l.getElementType().isF32() || !p.getElementType().isF32())
    return emitOpError() << "results must be f32 tiles of " << heads << ", " << heads << " and "
                         << heads * dim << " values";
  return checkWindow(*this, q, getRow(), getCol(), heads * dim);
}
