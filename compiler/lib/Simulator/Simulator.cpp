//===- Simulator.cpp - execute a launch on the CPU ------------------------===//
//
// Interprets mono IR op by op. Tiles are vectors of f32 values; the building
// blocks below follow the device library's (runtime/device/generic.h) order
// of arithmetic for the launch's block size, so a GPU run of the same source
// can be compared value for value.
//
//===----------------------------------------------------------------------===//
#include "monodc/Simulator/Simulator.h"

#include "monodc/formats/NumberFormats.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace monodc;
using namespace monodc::mono;
using namespace monodc::sim;
namespace fmts = monodc::formats;

namespace {

using TileValues = std::vector<float>;

float deviceMax(float a, float b) { return a > b ? a : (b == b ? b : a); }
float deviceMin(float a, float b) { return a < b ? a : (b == b ? b : a); }

float roundTo(Type type, float v) {
  if (type.isF32())
    return v;
  if (type.isBF16())
    return fmts::roundToBf16(v);
  if (isa<Float8E4M3FNType>(type))
    return fmts::roundToE4m3(v);
  if (isa<Float4E2M1FNType>(type))
    return fmts::roundToE2m1(v);
  return fmts::e8m0Value(fmts::e8m0Bits(v));
}

/// Exactly 2^k for k in [-127, 127].
float exp2i(int k) { return std::ldexp(1.0f, k); }

class TaskInterpreter {
public:
  TaskInterpreter(LaunchOp launch, LaunchMemory &memory)
      : memory(memory), block(launch.getBlock()) {}

  LogicalResult run(StageOp stage, int64_t task);

private:
  LogicalResult step(Operation &op);
  TileValues &tile(Value v) { return tiles[v]; }
  float at(Value v, int64_t i) {
    TileValues &t = tiles[v];
    return t.size() == 1 ? t[0] : t[i];
  }
  int64_t sizeOf(Value v) { return cast<TileType>(v.getType()).getSize(); }
  FailureOr<int64_t> window(Operation *op, RegionOp region, Value row, Value col,
                            int64_t size);

  float reduce(const TileValues &x, ReduceKind kind);
  void quantize(const TileValues &x, Mxfp8Variant variant, TileValues &codes,
                TileValues &scales);
  TileValues gemv(GemvOp op, RegionOp weight, int64_t row0);

  LaunchMemory &memory;
  int64_t block;
  llvm::DenseMap<Value, int64_t> indices;
  llvm::DenseMap<Value, TileValues> tiles;
};

LogicalResult TaskInterpreter::run(StageOp stage, int64_t task) {
  indices.clear();
  tiles.clear();
  indices[stage.getTaskIndex()] = task;
  for (Operation &op : stage.getBodyBlock())
    if (failed(step(op)))
      return failure();
  return success();
}

FailureOr<int64_t> TaskInterpreter::window(Operation *op, RegionOp region, Value row,
                                           Value col, int64_t size) {
  int64_t r = indices.lookup(row), c = indices.lookup(col);
  if (r < 0 || r >= region.getRows() || c < 0 || c + size > region.getCols())
    return op->emitOpError() << "touches row " << r << ", columns [" << c << ", "
                             << c + size << ") outside region '" << region.getSymName()
                             << "' [" << region.getRows() << ", " << region.getCols()
                             << "]";
  return r * region.getCols() + c;
}

// Per-thread partials in slot order, then the fixed shared-memory tree.
float TaskInterpreter::reduce(const TileValues &x, ReduceKind kind) {
  auto combine = [&](float a, float b) {
    return kind == ReduceKind::Sum ? a + b : deviceMax(a, b);
  };
  auto prepare = [&](float v) { return kind == ReduceKind::AbsMax ? std::fabs(v) : v; };
  float identity = kind == ReduceKind::Sum ? 0.0f : -std::numeric_limits<float>::infinity();
  int64_t n = x.size();
  if (n == 1)
    return combine(identity, prepare(x[0]));
  std::vector<float> partial(block, identity);
  for (int64_t t = 0; t < block; ++t)
    for (int64_t i = t; i < n; i += block)
      partial[t] = combine(partial[t], prepare(x[i]));
  for (int64_t w = block / 2; w > 0; w /= 2)
    for (int64_t t = 0; t < w; ++t)
      partial[t] = combine(partial[t], partial[t + w]);
  return partial[0];
}

void TaskInterpreter::quantize(const TileValues &x, Mxfp8Variant variant, TileValues &codes,
                               TileValues &scales) {
  auto flavour = variant == Mxfp8Variant::Routed ? fmts::Mxfp8Variant::Routed
                                                 : fmts::Mxfp8Variant::Standard;
  int64_t groups = x.size() / 32;
  codes.assign(x.size(), 0.0f);
  scales.assign(groups, 0.0f);
  for (int64_t g = 0; g < groups; ++g) {
    float amax = 0.0f;
    for (int64_t j = 0; j < 32; ++j)
      amax = deviceMax(amax, std::fabs(x[g * 32 + j]));
    int code = fmts::mxfp8ScaleCode(amax, flavour);
    scales[g] = exp2i(code - 127);
    for (int64_t j = 0; j < 32; ++j) {
      float v = x[g * 32 + j] * exp2i(127 - code);
      v = v > 448.0f ? 448.0f : (v < -448.0f ? -448.0f : v);
      codes[g * 32 + j] = fmts::roundToE4m3(v);
    }
  }
}

// Mirrors mono_gemv_*: T threads per output, each summing a contiguous run of
// 32-wide K blocks (block sums scaled once), partials added in thread order.
TileValues TaskInterpreter::gemv(GemvOp op, RegionOp weight, int64_t row0) {
  const int64_t n = sizeOf(op.getResult()), k = weight.getCols();
  const int64_t threadsPerOutput = n >= block ? 1 : block / n;
  const int64_t perPass = block / threadsPerOutput;
  const int64_t kBlocks = k / 32;
  const int64_t blocksPerThread = (kBlocks + threadsPerOutput - 1) / threadsPerOutput;
  const RegionStorage &w = memory.region(weight.getSymName().str());
  const bool scaled = static_cast<bool>(op.getXScales());
  const RegionStorage *ws =
      scaled ? &memory.region(op.getWeightScalesAttr().getValue().str()) : nullptr;

  TileValues x(k);
  for (int64_t i = 0; i < k; ++i)
    x[i] = scaled ? at(op.getX(), i) * at(op.getXScales(), i / 32) : at(op.getX(), i);

  TileValues out(n, 0.0f);
  std::vector<float> partial(block);
  for (int64_t j0 = 0; j0 < n; j0 += perPass) {
    for (int64_t tid = 0; tid < block; ++tid) {
      int64_t j = j0 + tid / threadsPerOutput, part = tid % threadsPerOutput;
      float acc = 0.0f;
      if (tid / threadsPerOutput < perPass && j < n) {
        int64_t row = row0 + j;
        for (int64_t b = part * blocksPerThread;
             b < (part + 1) * blocksPerThread && b < kBlocks; ++b) {
          float blockSum = 0.0f;
          for (int64_t q = 0; q < 32; ++q)
            blockSum += x[b * 32 + q] * w.get(row * k + b * 32 + q);
          acc += scaled ? blockSum * ws->get((row / 32) * ws->cols + b) : blockSum;
        }
      }
      partial[tid] = acc;
    }
    for (int64_t t = 0; t < perPass && j0 + t < n; ++t) {
      float s = 0.0f;
      for (int64_t p = 0; p < threadsPerOutput; ++p)
        s += partial[t * threadsPerOutput + p];
      out[j0 + t] = s;
    }
  }
  return out;
}

LogicalResult TaskInterpreter::step(Operation &op) {
  auto unary = [&](Operation *o, auto fn) {
    Value in = o->getOperand(0);
    TileValues out(sizeOf(o->getResult(0)));
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = fn(at(in, i));
    tiles[o->getResult(0)] = std::move(out);
    return success();
  };
  auto binary = [&](Operation *o, auto fn) {
    Value a = o->getOperand(0), b = o->getOperand(1);
    TileValues out(sizeOf(o->getResult(0)));
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = fn(at(a, i), at(b, i));
    tiles[o->getResult(0)] = std::move(out);
    return success();
  };
  auto index = [&](Operation *o, auto fn) {
    indices[o->getResult(0)] = fn(indices.lookup(o->getOperand(0)),
                                  indices.lookup(o->getOperand(1)));
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) -> LogicalResult {
        auto value = dyn_cast<IntegerAttr>(c.getValue());
        if (!value)
          return c.emitOpError() << "only integer constants can be simulated";
        indices[c.getResult()] = value.getInt();
        return success();
      })
      .Case<arith::AddIOp>([&](Operation *o) { return index(o, std::plus<int64_t>()); })
      .Case<arith::SubIOp>([&](Operation *o) { return index(o, std::minus<int64_t>()); })
      .Case<arith::MulIOp>([&](Operation *o) { return index(o, std::multiplies<int64_t>()); })
      .Case<arith::DivUIOp, arith::DivSIOp>([&](Operation *o) -> LogicalResult {
        if (indices.lookup(o->getOperand(1)) == 0)
          return o->emitOpError() << "divides by zero";
        return index(o, std::divides<int64_t>());
      })
      .Case<arith::RemUIOp, arith::RemSIOp>([&](Operation *o) -> LogicalResult {
        if (indices.lookup(o->getOperand(1)) == 0)
          return o->emitOpError() << "divides by zero";
        return index(o, std::modulus<int64_t>());
      })
      .Case<ConstantOp>([&](ConstantOp c) {
        tiles[c.getResult()] =
            TileValues(sizeOf(c.getResult()), c.getValue().convertToFloat());
        return success();
      })
      .Case<LoadOp>([&](LoadOp load) -> LogicalResult {
        RegionOp region = lookupRegion(load, load.getRegionAttr());
        int64_t size = sizeOf(load.getResult());
        auto base = window(load, region, load.getRow(), load.getCol(), size);
        if (failed(base))
          return failure();
        const RegionStorage &r = memory.region(region.getSymName().str());
        TileValues out(size);
        for (int64_t i = 0; i < size; ++i)
          out[i] = r.get(*base + i);
        tiles[load.getResult()] = std::move(out);
        return success();
      })
      .Case<StoreOp>([&](StoreOp store) -> LogicalResult {
        RegionOp region = lookupRegion(store, store.getRegionAttr());
        int64_t size = sizeOf(store.getValue());
        auto base = window(store, region, store.getRow(), store.getCol(), size);
        if (failed(base))
          return failure();
        RegionStorage &r = memory.region(region.getSymName().str());
        for (int64_t i = 0; i < size; ++i)
          r.set(*base + i, at(store.getValue(), i));
        return success();
      })
      .Case<CastOp>([&](CastOp c) {
        Type to = cast<TileType>(c.getResult().getType()).getElementType();
        return unary(c, [&](float v) { return roundTo(to, v); });
      })
      .Case<AddOp>([&](Operation *o) { return binary(o, [](float a, float b) { return a + b; }); })
      .Case<SubOp>([&](Operation *o) { return binary(o, [](float a, float b) { return a - b; }); })
      .Case<MulOp>([&](Operation *o) { return binary(o, [](float a, float b) { return a * b; }); })
      .Case<DivOp>([&](Operation *o) { return binary(o, [](float a, float b) { return a / b; }); })
      .Case<MaxOp>([&](Operation *o) { return binary(o, deviceMax); })
      .Case<MinOp>([&](Operation *o) { return binary(o, deviceMin); })
      .Case<RsqrtOp>([&](Operation *o) { return unary(o, [](float v) { return 1.0f / std::sqrt(v); }); })
      .Case<SqrtOp>([&](Operation *o) { return unary(o, [](float v) { return std::sqrt(v); }); })
      .Case<Exp2Op>([&](Operation *o) { return unary(o, [](float v) { return std::exp2(v); }); })
      .Case<SigmoidOp>([&](Operation *o) {
        return unary(o, [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
      })
      .Case<NegOp>([&](Operation *o) { return unary(o, [](float v) { return -v; }); })
      .Case<AbsOp>([&](Operation *o) { return unary(o, [](float v) { return std::fabs(v); }); })
      .Case<ReduceOp>([&](ReduceOp r) {
        tiles[r.getResult()] = TileValues{reduce(tile(r.getInput()), r.getKind())};
        return success();
      })
      .Case<QuantizeMxfp8Op>([&](QuantizeMxfp8Op q) {
        TileValues codes, scales;
        quantize(tile(q.getInput()), q.getVariant(), codes, scales);
        tiles[q.getCodes()] = std::move(codes);
        tiles[q.getScales()] = std::move(scales);
        return success();
      })
      .Case<GemvOp>([&](GemvOp g) -> LogicalResult {
        RegionOp weight = lookupRegion(g, g.getWeightAttr());
        int64_t row0 = indices.lookup(g.getRow());
        int64_t n = sizeOf(g.getResult());
        if (row0 < 0 || row0 + n > weight.getRows())
          return g.emitOpError() << "reads weight rows [" << row0 << ", " << row0 + n
                                 << ") outside '" << weight.getSymName() << "'";
        tiles[g.getResult()] = gemv(g, weight, row0);
        return success();
      })
      .Default([](Operation *o) -> LogicalResult {
        return o->emitOpError() << "cannot be simulated";
      });
}

} // namespace

LogicalResult monodc::sim::simulate(LaunchOp launch, LaunchMemory &memory) {
  TaskInterpreter interpreter(launch, memory);
  for (auto stage : launch.getBodyBlock().getOps<StageOp>())
    for (int64_t task = 0; task < stage.getTasks(); ++task)
      if (failed(interpreter.run(stage, task)))
        return failure();
  return success();
}
