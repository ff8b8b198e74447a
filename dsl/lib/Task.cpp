//===- Task.cpp - task bodies: indices, tiles and tile ops ----------------===//
#include "monodc/dsl/Launch.h"
#include "monodc/dsl/Task.h"

#include "monodc/Dialect/Mono/MonoDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace monodc;
using namespace monodc::dsl;

namespace {
Location locOf(Task &task) {
  return NameLoc::get(task.b().getStringAttr(task.stage()));
}
mono::TileType tileType(Task &task, int64_t size, DType type) {
  return mono::TileType::get(task.b().getContext(), size,
                             toMlirType(type, *task.b().getContext()));
}
} // namespace

//===----------------------------------------------------------------------===//
// Index
//===----------------------------------------------------------------------===//

template <typename OpTy>
static Index indexOp(Task *task, Value a, Value b) {
  return Index(task, OpTy::create(task->b(), locOf(*task), a, b).getResult());
}

// Defined inside the namespace: the header declares them only as friends of
// Index, and a qualified definition of a friend-only name warns in GCC.
namespace monodc::dsl {
Index operator+(Index a, Index b) { return indexOp<arith::AddIOp>(a.task, a.value, b.value); }
Index operator+(Index a, int64_t b) { return a + a.task->index(b); }
Index operator*(Index a, int64_t b) {
  return indexOp<arith::MulIOp>(a.task, a.value, a.task->index(b).get());
}
Index operator/(Index a, int64_t b) {
  return indexOp<arith::DivUIOp>(a.task, a.value, a.task->index(b).get());
}
Index operator%(Index a, int64_t b) {
  return indexOp<arith::RemUIOp>(a.task, a.value, a.task->index(b).get());
}
} // namespace monodc::dsl

Index Task::index(int64_t value) {
  return Index(this, arith::ConstantIndexOp::create(builder, locOf(*this), value));
}

//===----------------------------------------------------------------------===//
// Tile
//===----------------------------------------------------------------------===//

int64_t Tile::size() const {
  return value ? cast<mono::TileType>(value.getType()).getSize() : 0;
}
DType Tile::dtype() const {
  return value ? fromMlirType(cast<mono::TileType>(value.getType()).getElementType())
               : DType::F32;
}

Tile Tile::to(DType type) const {
  if (!valid())
    return {};
  if (type == dtype())
    return *this;
  if (type == DType::Byte || type == DType::I32 || type == DType::I64) {
    task->fail("a tile cannot hold " + dtypeName(type) +
               "; byte regions are read and written in the formats they hold, index inputs "
               "as f32 whole numbers");
    return {};
  }
  if (type != DType::F32 && dtype() != DType::F32) {
    task->fail("cast from " + dtypeName(dtype()) + " to " + dtypeName(type) +
               " must go through f32");
    return {};
  }
  return Tile(task, mono::CastOp::create(task->b(), locOf(*task),
                                         tileType(*task, size(), type), value));
}

void Task::fail(const std::string &message) { launch.report(stageName, message); }

Tile Task::asF32Operand(const Tile &tile, const char *what) {
  if (!tile.valid())
    return {};
  if (tile.dtype() != DType::F32) {
    fail(std::string(what) + " needs f32 tiles, got a " + dtypeName(tile.dtype()) +
         " tile; convert it with .to(f32) first");
    return {};
  }
  return tile;
}

template <typename OpTy>
static Tile binary(const Tile &a, const Tile &b, const char *what) {
  Task *task = a.valid() ? a.owner() : b.owner();
  if (!task || !a.valid() || !b.valid())
    return {};
  if (a.owner() != b.owner()) {
    task->fail(std::string(what) + " of tiles from different tasks");
    return {};
  }
  // One diagnostic per mistake, even when both operands share it.
  Tile x = task->asF32Operand(a, what);
  if (!x.valid())
    return {};
  Tile y = task->asF32Operand(b, what);
  if (!y.valid())
    return {};
  int64_t size = std::max(x.size(), y.size());
  if ((x.size() != 1 && x.size() != size) || (y.size() != 1 && y.size() != size)) {
    task->fail(std::string(what) + " of tiles of " + std::to_string(x.size()) +
               " and " + std::to_string(y.size()) +
               " values (only a size-1 tile broadcasts)");
    return {};
  }
  return Tile(task, OpTy::create(task->b(), locOf(*task), tileType(*task, size, DType::F32),
                                 x.get(), y.get()));
}

static Tile scalar(const Tile &like, float value) {
  if (!like.valid())
    return {};
  return like.owner()->constant(value);
}

Tile monodc::dsl::operator+(const Tile &a, const Tile &b) { return binary<mono::AddOp>(a, b, "add"); }
Tile monodc::dsl::operator-(const Tile &a, const Tile &b) { return binary<mono::SubOp>(a, b, "sub"); }
Tile monodc::dsl::operator*(const Tile &a, const Tile &b) { return binary<mono::MulOp>(a, b, "mul"); }
Tile monodc::dsl::operator/(const Tile &a, const Tile &b) { return binary<mono::DivOp>(a, b, "div"); }
Tile monodc::dsl::operator+(const Tile &a, float b) { return a + scalar(a, b); }
Tile monodc::dsl::operator-(const Tile &a, float b) { return a - scalar(a, b); }
Tile monodc::dsl::operator*(const Tile &a, float b) { return a * scalar(a, b); }
Tile monodc::dsl::operator/(const Tile &a, float b) { return a / scalar(a, b); }
Tile monodc::dsl::operator*(float a, const Tile &b) { return scalar(b, a) * b; }
Tile monodc::dsl::max(const Tile &a, const Tile &b) { return binary<mono::MaxOp>(a, b, "max"); }
Tile monodc::dsl::min(const Tile &a, const Tile &b) { return binary<mono::MinOp>(a, b, "min"); }

/// `x` as the f32 operand of `what`; invalid (with the task told why, if
/// there is a task) when it is not one.
static Tile f32Operand(const Tile &x, const char *what) {
  return x.valid() ? x.owner()->asF32Operand(x, what) : Tile();
}

template <typename OpTy>
static Tile unary(const Tile &x, const char *what) {
  Tile in = f32Operand(x, what);
  if (!in.valid())
    return {};
  Task *task = in.owner();
  return Tile(task, OpTy::create(task->b(), locOf(*task), in.get().getType(), in.get()));
}

Tile monodc::dsl::operator-(const Tile &a) { return unary<mono::NegOp>(a, "neg"); }
Tile monodc::dsl::rsqrt(const Tile &x) { return unary<mono::RsqrtOp>(x, "rsqrt"); }
Tile monodc::dsl::exp(const Tile &x) { return unary<mono::ExpOp>(x, "exp"); }
Tile monodc::dsl::log(const Tile &x) { return unary<mono::LogOp>(x, "log"); }

static Tile select(mono::Predicate predicate, const Tile &a, const Tile &b, const Tile &x,
                   const Tile &y, const char *what) {
  Task *task = a.valid() ? a.owner() : nullptr;
  if (!task || !b.valid() || !x.valid() || !y.valid())
    return {};
  int64_t size = 1;
  for (const Tile *t : {&a, &b, &x, &y}) {
    if (!task->asF32Operand(*t, what).valid())
      return {};
    if (t->size() != 1) {
      if (size != 1 && size != t->size()) {
        task->fail(std::string(what) + " of tiles of different sizes (only a size-1 tile "
                                       "broadcasts)");
        return {};
      }
      size = t->size();
    }
  }
  return Tile(task, mono::SelectOp::create(task->b(), locOf(*task),
                                           tileType(*task, size, DType::F32), predicate, a.get(),
                                           b.get(), x.get(), y.get()));
}

Tile monodc::dsl::selectGreater(const Tile &a, const Tile &b, const Tile &x, const Tile &y) {
  return select(mono::Predicate::Gt, a, b, x, y, "selectGreater");
}
Tile monodc::dsl::selectLess(const Tile &a, const Tile &b, const Tile &x, const Tile &y) {
  return select(mono::Predicate::Lt, a, b, x, y, "selectLess");
}
Tile monodc::dsl::replaceNan(const Tile &x, float value) {
  if (!x.valid())
    return {};
  return select(mono::Predicate::IsNan, x, x, x.owner()->constant(value), x, "replaceNan");
}

TopK monodc::dsl::topk(const Tile &x, int64_t k) {
  Tile in = f32Operand(x, "topk");
  if (!in.valid())
    return {};
  Task *task = in.owner();
  if (k < 1 || k > in.size()) {
    task->fail("topk " + std::to_string(k) + " of " + std::to_string(in.size()) + " values");
    return {};
  }
  auto op = mono::TopKOp::create(task->b(), locOf(*task), tileType(*task, k, DType::F32),
                                 tileType(*task, k, DType::F32), in.get(),
                                 task->b().getI64IntegerAttr(k));
  return {Tile(task, op.getValues()), Tile(task, op.getIndices())};
}

ExpertGroups monodc::dsl::expertGroups(const Tile &experts, int64_t group) {
  Tile in = f32Operand(experts, "expertGroups");
  if (!in.valid())
    return {};
  Task *task = in.owner();
  if (group < 1) {
    task->fail("expertGroups with slots of " + std::to_string(group) + " places");
    return {};
  }
  mlir::Type type = tileType(*task, in.size(), DType::F32);
  auto op = mono::ExpertGroupsOp::create(task->b(), locOf(*task), type, type, type, type, in.get(),
                                         task->b().getI64IntegerAttr(group));
  return {Tile(task, op.getSlotExpert()), Tile(task, op.getSlotFirst()),
          Tile(task, op.getSlotCount()), Tile(task, op.getPlaceRow())};
}

Tile monodc::dsl::gather(const Tile &table, const Tile &indices) {
  if (!table.valid() || !indices.valid())
    return {};
  Task *task = table.owner();
  if (!task->asF32Operand(table, "gather").valid() ||
      !task->asF32Operand(indices, "gather").valid())
    return {};
  return Tile(task, mono::GatherOp::create(task->b(), locOf(*task),
                                           tileType(*task, indices.size(), DType::F32),
                                           table.get(), indices.get(), mono::RearrangementAttr()));
}
Tile monodc::dsl::sqrt(const Tile &x) { return unary<mono::SqrtOp>(x, "sqrt"); }
Tile monodc::dsl::exp2(const Tile &x) { return unary<mono::Exp2Op>(x, "exp2"); }
Tile monodc::dsl::sigmoid(const Tile &x) { return unary<mono::SigmoidOp>(x, "sigmoid"); }
Tile monodc::dsl::abs(const Tile &x) { return unary<mono::AbsOp>(x, "abs"); }
Tile monodc::dsl::floor(const Tile &x) { return unary<mono::FloorOp>(x, "floor"); }

static Tile reduce(const Tile &x, mono::ReduceKind kind, const char *what) {
  Tile in = f32Operand(x, what);
  if (!in.valid())
    return {};
  Task *task = in.owner();
  return Tile(task, mono::ReduceOp::create(task->b(), locOf(*task),
                                           tileType(*task, 1, DType::F32), kind, in.get(),
                                           DenseI64ArrayAttr(), IntegerAttr(),
                                           mono::RearrangementAttr()));
}

static Tile reduceAxis(const Tile &x, int64_t rows, int64_t cols, int64_t axis,
                       mono::ReduceKind kind, const char *what) {
  Tile in = f32Operand(x, what);
  if (!in.valid())
    return {};
  Task *task = in.owner();
  if (rows * cols != in.size() || (axis != 0 && axis != 1)) {
    task->fail(std::string(what) + " of a " + std::to_string(in.size()) + "-value tile as [" +
               std::to_string(rows) + ", " + std::to_string(cols) + "] along axis " +
               std::to_string(axis));
    return {};
  }
  auto &b = task->b();
  return Tile(task, mono::ReduceOp::create(b, locOf(*task),
                                           tileType(*task, axis == 1 ? rows : cols, DType::F32),
                                           kind, in.get(), b.getDenseI64ArrayAttr({rows, cols}),
                                           b.getI64IntegerAttr(axis), mono::RearrangementAttr()));
}

Tile monodc::dsl::sumAlong(const Tile &x, int64_t rows, int64_t cols, int64_t axis) {
  return reduceAxis(x, rows, cols, axis, mono::ReduceKind::Sum, "sumAlong");
}
Tile monodc::dsl::maxAlong(const Tile &x, int64_t rows, int64_t cols, int64_t axis) {
  return reduceAxis(x, rows, cols, axis, mono::ReduceKind::Max, "maxAlong");
}

Tile monodc::dsl::expand(const Tile &x, int64_t rows, int64_t cols, int64_t axis) {
  Tile in = f32Operand(x, "expand");
  if (!in.valid())
    return {};
  Task *task = in.owner();
  if ((axis != 0 && axis != 1) || in.size() != (axis == 1 ? rows : cols)) {
    task->fail("expand of a " + std::to_string(in.size()) + "-value tile to [" +
               std::to_string(rows) + ", " + std::to_string(cols) + "] along axis " +
               std::to_string(axis));
    return {};
  }
  auto &b = task->b();
  return Tile(task, mono::ExpandOp::create(b, locOf(*task), tileType(*task, rows * cols, DType::F32),
                                           in.get(), b.getDenseI64ArrayAttr({rows, cols}),
                                           b.getI64IntegerAttr(axis), mono::RearrangementAttr()));
}

Tile monodc::dsl::fma(const Tile &a, const Tile &b, const Tile &c) {
  Task *task = a.valid() ? a.owner() : nullptr;
  if (!task || !b.valid() || !c.valid())
    return {};
  Tile x = task->asF32Operand(a, "fma");
  if (!x.valid())
    return {};
  Tile y = task->asF32Operand(b, "fma");
  if (!y.valid())
    return {};
  Tile z = task->asF32Operand(c, "fma");
  if (!z.valid())
    return {};
  int64_t size = std::max({x.size(), y.size(), z.size()});
  for (const Tile *t : {&x, &y, &z})
    if (t->size() != 1 && t->size() != size) {
      task->fail("fma of tiles of " + std::to_string(x.size()) + ", " +
                 std::to_string(y.size()) + " and " + std::to_string(z.size()) +
                 " values (only a size-1 tile broadcasts)");
      return {};
    }
  return Tile(task, mono::FmaOp::create(task->b(), locOf(*task), tileType(*task, size, DType::F32),
                                        x.get(), y.get(), z.get()));
}

Tile Tile::slice(int64_t offset, int64_t count, int64_t stride, int64_t block) const {
  if (!valid())
    return {};
  const bool runsFit = block >= 1 && stride >= 1 && (block == 1 || stride >= block);
  if (offset < 0 || count <= 0 || !runsFit ||
      offset + ((count - 1) / block) * stride + (count - 1) % block >= size()) {
    task->fail("slice of " + std::to_string(count) + " values from " + std::to_string(offset) +
               " by " + std::to_string(stride) + " in runs of " + std::to_string(block) +
               " of a tile of " + std::to_string(size()) + " values");
    return {};
  }
  auto &b = task->b();
  return Tile(task, mono::SliceOp::create(b, locOf(*task), tileType(*task, count, dtype()), value,
                                          b.getI64IntegerAttr(offset),
                                          b.getI64IntegerAttr(stride),
                                          b.getI64IntegerAttr(block), mono::RearrangementAttr()));
}

Tile monodc::dsl::interleave(const Tile &a, const Tile &b) {
  if (!a.valid() || !b.valid())
    return {};
  Task *task = a.owner();
  if (a.size() != b.size() || a.dtype() != b.dtype()) {
    task->fail("interleave of tiles of " + std::to_string(a.size()) + " and " +
               std::to_string(b.size()) + " values");
    return {};
  }
  return Tile(task, mono::InterleaveOp::create(task->b(), locOf(*task),
                                               tileType(*task, 2 * a.size(), a.dtype()), a.get(),
                                               b.get()));
}

Index Task::toIndex(const Tile &value) {
  Tile v = asF32Operand(value, "toIndex");
  if (!v.valid() || v.size() != 1) {
    if (v.valid())
      fail("toIndex of a tile of " + std::to_string(v.size()) + " values (needs one)");
    return index(0);
  }
  return Index(this, mono::ToIndexOp::create(builder, locOf(*this), builder.getIndexType(), v.get()));
}

Tile monodc::dsl::sum(const Tile &x) { return reduce(x, mono::ReduceKind::Sum, "sum"); }
Tile monodc::dsl::maxOf(const Tile &x) { return reduce(x, mono::ReduceKind::Max, "maxOf"); }
Tile monodc::dsl::absMax(const Tile &x) { return reduce(x, mono::ReduceKind::AbsMax, "absMax"); }

//===----------------------------------------------------------------------===//
// Task
//===----------------------------------------------------------------------===//

bool Task::checkRegion(const Region &region, const char *verb) {
  if (!launch.owns(region)) {
    fail(std::string(verb) + " region '" + region.name() + "' which launch '" +
         launch.name() + "' does not declare");
    return false;
  }
  return true;
}

Tile Task::load(const Region &region, Index row, Index col, int64_t size) {
  if (!checkRegion(region, "reads"))
    return {};
  if (size <= 0 || size > region.cols()) {
    fail("loads " + std::to_string(size) + " values from a row of region '" +
         region.name() + "' (" + std::to_string(region.cols()) + " columns)");
    return {};
  }
  if (region.dtype() == DType::Byte) {
    fail("loads from byte region '" + region.name() +
         "' without a format; use loadBytes with the format stored there");
    return {};
  }
  if (region.colsAtLaunch()) {
    fail("loads from region '" + region.name() +
         "', whose columns are given at launch; use loadAt");
    return {};
  }
  // An index input (f32, i32 or i64) loads as f32 whole numbers.
  const bool index = region.dtype() == DType::I32 || region.dtype() == DType::I64;
  return Tile(this, mono::LoadOp::create(builder, locOf(*this),
                                         tileType(*this, size, index ? DType::F32 : region.dtype()),
                                         region.name(), row.get(), col.get()));
}

/// Bytes a value of `type` takes in a byte record (the dialect's rule); 0
/// when it cannot be one.
static int64_t recordBytes(Task &task, DType type) {
  return mono::encodedBytes(toMlirType(type, *task.b().getContext()));
}

Tile Task::loadBytes(const Region &region, DType type, Index row, Index col, int64_t size) {
  if (!checkRegion(region, "reads"))
    return {};
  if (region.dtype() != DType::Byte || recordBytes(*this, type) == 0 || size <= 0 ||
      size * recordBytes(*this, type) > region.cols()) {
    fail("loadBytes of " + std::to_string(size) + " " + dtypeName(type) +
         " values from region '" + region.name() + "' (" + dtypeName(region.dtype()) + ", " +
         std::to_string(region.cols()) + " columns): needs a byte region, a format of whole "
         "bytes (f32, bf16, e4m3, e8m0) and a window inside a row");
    return {};
  }
  return Tile(this, mono::LoadOp::create(builder, locOf(*this), tileType(*this, size, type),
                                         region.name(), row.get(), col.get()));
}

void Task::skipUnless(Index count, SkipScope scope) {
  if (skips) {
    fail("skipUnless given twice; a task skips once");
    return;
  }
  skips = true;
  mono::SkipUnlessOp::create(builder, locOf(*this), count.get(),
                             scope == SkipScope::ThisAndLaterTasks, scope == SkipScope::PadRow);
}

void Task::storeIf(Index guard, const Region &region, Index row, Index col, const Tile &value) {
  if (!value.valid() || !checkRegion(region, "writes"))
    return;
  const bool bytes = region.dtype() == DType::Byte;
  if (!region.writable() || (!bytes && value.dtype() != region.dtype()) ||
      (bytes && recordBytes(*this, value.dtype()) == 0)) {
    fail("storeIf of a " + dtypeName(value.dtype()) + " tile into " +
         dtypeName(region.dtype()) + " region '" + region.name() +
         "': needs a writable region of the tile's format, or a byte region and a format of "
         "whole bytes");
    return;
  }
  mono::StoreOp::create(builder, locOf(*this), value.get(), region.name(), row.get(), col.get(),
                        guard.get(), Value());
}

Tile Task::load(const Region &region, Index row, int64_t col, int64_t size) {
  return load(region, row, index(col), size);
}

Tile Task::loadRow(const Region &region, Index row) {
  return load(region, row, index(0), region.cols());
}

void Task::store(const Region &region, Index row, Index col, const Tile &value) {
  if (!value.valid() || !checkRegion(region, "writes"))
    return;
  if (!region.writable()) {
    fail("writes read-only region '" + region.name() + "' (inputs and weights are read-only)");
    return;
  }
  if (region.dtype() == DType::Byte) {
    fail("stores into byte region '" + region.name() + "' with store; use storeIf");
    return;
  }
  if (value.dtype() != region.dtype()) {
    fail("stores a " + dtypeName(value.dtype()) + " tile into " +
         dtypeName(region.dtype()) + " region '" + region.name() +
         "'; convert it with .to(" + dtypeName(region.dtype()) + ") first");
    return;
  }
  if (value.size() > region.cols()) {
    fail("stores " + std::to_string(value.size()) + " values into a row of region '" +
         region.name() + "' (" + std::to_string(region.cols()) + " columns)");
    return;
  }
  mono::StoreOp::create(builder, locOf(*this), value.get(), region.name(), row.get(),
                        col.get(), Value(), Value());
}

void Task::store(const Region &region, Index row, int64_t col, const Tile &value) {
  store(region, row, index(col), value);
}

void Task::storeRows(const Region &region, Index row, Index col, int64_t rows,
                     const Tile &value) {
  storeRowsCounted(region, row, col, rows, value, Value());
}

void Task::storeRows(const Region &region, Index row, Index col, int64_t rows, const Tile &value,
                     Index count) {
  storeRowsCounted(region, row, col, rows, value, count.get());
}

void Task::storeRowsCounted(const Region &region, Index row, Index col, int64_t rows,
                            const Tile &value, Value count) {
  if (!value.valid() || !checkRegion(region, "writes"))
    return;
  if (!region.writable()) {
    fail("writes read-only region '" + region.name() + "' (inputs and weights are read-only)");
    return;
  }
  if (value.dtype() != region.dtype()) {
    fail("stores a " + dtypeName(value.dtype()) + " tile into " + dtypeName(region.dtype()) +
         " region '" + region.name() + "'; convert it with .to(" + dtypeName(region.dtype()) +
         ") first");
    return;
  }
  if (rows < 1 || value.size() % rows != 0 || rows > region.rows() ||
      value.size() / rows > region.cols()) {
    fail("stores " + std::to_string(value.size()) + " values as " + std::to_string(rows) +
         " rows into region '" + region.name() + "' [" + std::to_string(region.rows()) + ", " +
         std::to_string(region.cols()) + "]");
    return;
  }
  auto op = mono::StoreOp::create(builder, locOf(*this), value.get(), region.name(), row.get(),
                                  col.get(), Value(), count);
  op.setRows(rows);
}

static bool checkPeer(Task &t, const dsl::Region &region, int64_t rank, int64_t ranks) {
  if (rank < 0 || rank >= ranks) {
    t.fail("peer access to rank " + std::to_string(rank) + " of region '" + region.name() +
           "' in a launch of " + std::to_string(ranks) + " ranks");
    return false;
  }
  return true;
}

void Task::storePeer(const dsl::Region &region, int64_t rank, Index row, int64_t col,
                     const Tile &value) {
  if (!value.valid() || !checkRegion(region, "writes") ||
      !checkPeer(*this, region, rank, launch.options().ranks))
    return;
  if (value.dtype() != region.dtype() || col + value.size() > region.cols()) {
    fail("stores a " + std::to_string(value.size()) + "-value " + dtypeName(value.dtype()) +
         " tile into peer region '" + region.name() + "' (" + dtypeName(region.dtype()) + ", " +
         std::to_string(region.cols()) + " columns) at column " + std::to_string(col));
    return;
  }
  mono::StorePeerOp::create(builder, locOf(*this), value.get(), region.name(), row.get(),
                            index(col).get(), rank);
}

Tile Task::loadPeer(const dsl::Region &region, int64_t rank, Index row, int64_t col,
                    int64_t size) {
  if (!checkRegion(region, "reads") || !checkPeer(*this, region, rank, launch.options().ranks))
    return {};
  if (size <= 0 || col + size > region.cols()) {
    fail("loads " + std::to_string(size) + " values from peer region '" + region.name() + "'");
    return {};
  }
  return Tile(this, mono::LoadPeerOp::create(builder, locOf(*this),
                                             tileType(*this, size, region.dtype()),
                                             region.name(), row.get(), index(col).get(), rank));
}

Tile Task::constant(float value, int64_t size) {
  return Tile(this, mono::ConstantOp::create(builder, locOf(*this),
                                             tileType(*this, size, DType::F32),
                                             builder.getF32FloatAttr(value)));
}

Tile Task::rowsOf(const Region &region) {
  if (!checkRegion(region, "reads the rows of"))
    return {};
  if (!region.rowsAtLaunch())
    return constant(float(region.rows()));
  return Tile(this, mono::RegionRowsOp::create(builder, locOf(*this),
                                               tileType(*this, 1, DType::F32), region.name()));
}

Tile Task::colsOf(const Region &region) {
  if (!checkRegion(region, "reads the columns of"))
    return {};
  if (!region.colsAtLaunch())
    return constant(float(region.cols()));
  return Tile(this, mono::RegionColsOp::create(builder, locOf(*this),
                                               tileType(*this, 1, DType::F32), region.name()));
}

Tile Task::loadAt(const Region &region, Index row, const Tile &cols) {
  Tile at = asF32Operand(cols, "loadAt");
  if (!at.valid() || !checkRegion(region, "reads"))
    return {};
  if (region.indexBound() == 0 || region.shape().size() != 2) {
    fail("loads region '" + region.name() +
         "' at columns given by data, which only a 2-D index input allows");
    return {};
  }
  return Tile(this, mono::LoadAtOp::create(builder, locOf(*this),
                                           tileType(*this, at.size(), DType::F32), region.name(),
                                           row.get(), at.get()));
}

Tile Task::iota(Index start, int64_t size) {
  if (size < 1 || size > mono::kMaxIndexBound) {
    fail("iota of " + std::to_string(size) + " values; it counts 1 to 2^24 values");
    return {};
  }
  return Tile(this, mono::IotaOp::create(builder, locOf(*this), tileType(*this, size, DType::F32),
                                         start.get()));
}

Mxfp8Tile Task::quantizeMxfp8(const Tile &x, Mxfp8Flavour flavour) {
  Tile in = asF32Operand(x, "quantizeMxfp8");
  if (!in.valid())
    return {};
  const int64_t group = flavour == Mxfp8Flavour::KvRecord ? 64 : 32;
  if (in.size() % group != 0) {
    fail("quantizeMxfp8 of " + std::to_string(in.size()) +
         " values: the size must be a multiple of " + std::to_string(group));
    return {};
  }
  auto variant = flavour == Mxfp8Flavour::Routed     ? mono::Mxfp8Variant::Routed
                 : flavour == Mxfp8Flavour::KvRecord ? mono::Mxfp8Variant::KvRecord
                                                     : mono::Mxfp8Variant::Standard;
  auto op = mono::QuantizeMxfp8Op::create(builder, locOf(*this),
                                          tileType(*this, in.size(), DType::E4M3),
                                          tileType(*this, in.size() / group, DType::E8M0),
                                          in.get(), variant);
  return {Tile(this, op.getCodes()), Tile(this, op.getScales())};
}

Tile Task::gemv(const Region &weight, const Region &weightScales, Index row, int64_t rows,
                const Mxfp8Tile &x) {
  if (!x.codes.valid() || !x.scales.valid() || !checkRegion(weight, "reads") ||
      !checkRegion(weightScales, "reads"))
    return {};
  if (weight.dtype() != DType::E4M3 || weightScales.dtype() != DType::E8M0) {
    fail("gemv with weight '" + weight.name() + "' (" + dtypeName(weight.dtype()) +
         ") and scales '" + weightScales.name() + "' (" +
         dtypeName(weightScales.dtype()) + "): expected e4m3 and e8m0");
    return {};
  }
  if (x.codes.size() != weight.cols()) {
    fail("gemv of a " + std::to_string(x.codes.size()) + "-value activation with weight '" +
         weight.name() + "' of " + std::to_string(weight.cols()) + " columns");
    return {};
  }
  if (rows <= 0 || rows % 32 != 0) {
    fail("gemv with weight '" + weight.name() + "' over " + std::to_string(rows) +
         " rows: e4m3 weights are read in whole 32-row blocks");
    return {};
  }
  return Tile(this, mono::GemvOp::create(builder, locOf(*this),
                                         tileType(*this, rows, DType::F32),
                                         FlatSymbolRefAttr::get(builder.getContext(), weight.name()),
                                         FlatSymbolRefAttr::get(builder.getContext(), weightScales.name()),
                                         row.get(), x.codes.get(), x.scales.get()));
}

Tile Task::gemv(const Region &weight, Index row, int64_t rows, const Tile &x) {
  if (!x.valid() || !checkRegion(weight, "reads"))
    return {};
  if (weight.dtype() != DType::BF16) {
    fail("gemv with weight '" + weight.name() + "' (" + dtypeName(weight.dtype()) +
         ") and no scales: expected a bf16 weight");
    return {};
  }
  if (x.dtype() != DType::F32 && x.dtype() != DType::BF16) {
    fail("gemv with bf16 weight '" + weight.name() + "' takes an f32 or bf16 activation, got " +
         dtypeName(x.dtype()));
    return {};
  }
  if (x.size() != weight.cols()) {
    fail("gemv of a " + std::to_string(x.size()) + "-value activation with weight '" +
         weight.name() + "' of " + std::to_string(weight.cols()) + " columns");
    return {};
  }
  return Tile(this, mono::GemvOp::create(builder, locOf(*this),
                                         tileType(*this, rows, DType::F32),
                                         FlatSymbolRefAttr::get(builder.getContext(), weight.name()),
                                         FlatSymbolRefAttr(), row.get(), x.get(), Value()));
}

/// The op both gemvRows forms build once their formats are checked; the
/// scale regions are null for unscaled weights.
static Tile buildGemvRows(Task &t, const dsl::Region &weight, const dsl::Region *weightScales,
                          Index row, int64_t outputs, const dsl::Region &x,
                          const dsl::Region *xScales, Index firstToken, int64_t tokens,
                          Value count = Value()) {
  if (x.cols() != weight.cols()) {
    t.fail("gemvRows of activation '" + x.name() + "' (" + std::to_string(x.cols()) +
           " columns) with weight '" + weight.name() + "' (" + std::to_string(weight.cols()) +
           " columns)");
    return {};
  }
  if (outputs <= 0 || tokens <= 0)
    return {};
  auto &b = t.b();
  auto symbol = [&](const dsl::Region *r) {
    return r ? FlatSymbolRefAttr::get(b.getContext(), r->name()) : FlatSymbolRefAttr();
  };
  return Tile(&t, mono::GemvRowsOp::create(b, locOf(t), tileType(t, outputs * tokens, DType::F32),
                                           symbol(&weight), symbol(weightScales), row.get(),
                                           symbol(&x), symbol(xScales), firstToken.get(),
                                           b.getI64IntegerAttr(tokens), count,
                                           mono::GemvLoweringAttr()));
}

Tile Task::gemvRows(const dsl::Region &weight, const dsl::Region &weightScales, Index row,
                    int64_t outputs, const dsl::Region &x, const dsl::Region &xScales, Index firstToken,
                    int64_t tokens, Index count) {
  return scaledGemvRows(weight, weightScales, row, outputs, x, xScales, firstToken, tokens,
                        count.get());
}

Tile Task::gemvRows(const dsl::Region &weight, const dsl::Region &weightScales, Index row,
                    int64_t outputs, const dsl::Region &x, const dsl::Region &xScales, Index firstToken,
                    int64_t tokens) {
  return scaledGemvRows(weight, weightScales, row, outputs, x, xScales, firstToken, tokens,
                        Value());
}

Tile Task::scaledGemvRows(const dsl::Region &weight, const dsl::Region &weightScales, Index row,
                          int64_t outputs, const dsl::Region &x, const dsl::Region &xScales,
                          Index firstToken, int64_t tokens, mlir::Value count) {
  for (const dsl::Region *r : {&weight, &weightScales, &x, &xScales})
    if (!checkRegion(*r, "reads"))
      return {};
  if ((weight.dtype() != DType::E4M3 && weight.dtype() != DType::E2M1) ||
      weightScales.dtype() != DType::E8M0 || x.dtype() != DType::E4M3 ||
      xScales.dtype() != DType::E8M0) {
    fail("gemvRows with weight '" + weight.name() + "' expects an e4m3 or e2m1 weight and an "
         "e4m3 activation, with e8m0 scales");
    return {};
  }
  return buildGemvRows(*this, weight, &weightScales, row, outputs, x, &xScales, firstToken,
                       tokens, count);
}

Tile Task::gemvRows(const dsl::Region &weight, Index row, int64_t outputs, const dsl::Region &x,
                    Index firstToken, int64_t tokens) {
  if (!checkRegion(weight, "reads") || !checkRegion(x, "reads"))
    return {};
  if ((weight.dtype() != DType::BF16 && weight.dtype() != DType::F32) ||
      (x.dtype() != DType::BF16 && x.dtype() != DType::F32)) {
    fail("gemvRows with weight '" + weight.name() + "' expects a bf16 or f32 weight and a "
         "bf16 or f32 activation");
    return {};
  }
  return buildGemvRows(*this, weight, nullptr, row, outputs, x, nullptr, firstToken, tokens);
}

AttentionState Task::attendChunk(const Region &q, Index row, Index col, int64_t heads,
                                 int64_t headDim, int64_t ropeDim, const Region &cache,
                                 const Tile &slots) {
  if (!slots.valid() || !checkRegion(q, "reads") || !checkRegion(cache, "reads"))
    return {};
  if (q.dtype() != DType::BF16 || cache.dtype() != DType::Byte || slots.dtype() != DType::F32) {
    fail("attendChunk reads bf16 queries from '" + q.name() + "' (" + dtypeName(q.dtype()) +
         ") and KV records from byte region '" + cache.name() + "' (" +
         dtypeName(cache.dtype()) + ") at f32 slots (" + dtypeName(slots.dtype()) + ")");
    return {};
  }
  auto op = mono::AttendChunkOp::create(
      builder, locOf(*this), tileType(*this, heads, DType::F32),
      tileType(*this, heads, DType::F32), tileType(*this, heads * headDim, DType::F32),
      q.name(), row.get(), col.get(), cache.name(), slots.get(), heads, headDim, ropeDim, 32,
      mono::AttendLoweringAttr());
  return {Tile(this, op.getM()), Tile(this, op.getL()), Tile(this, op.getP())};
}
