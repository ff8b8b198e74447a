//===- Simulator.cpp - execute a launch on the CPU ------------------------===//
//
// Interprets mono IR op by op. Tiles are vectors of f32 values; the building
// blocks below follow the device library's (runtime/device/generic.h) order
// of arithmetic for the launch's block size, so a GPU run of the same source
// can be compared value for value.
//
//===----------------------------------------------------------------------===//
#include "monodc/Simulator/Simulator.h"

#include "monodc/formats/AiterShuffle.h"
#include "monodc/formats/ExactSum.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include "monodc/device/gemv_shape.h"

#include <atomic>
#include <cmath>
#include <map>
#include <unordered_map>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

using namespace mlir;
using namespace monodc;
using namespace monodc::mono;
using namespace monodc::sim;
namespace fmts = monodc::formats;

namespace {

using TileValues = std::vector<float>;

float deviceMax(float a, float b) { return a > b ? a : (b == b ? b : a); }
float deviceMin(float a, float b) { return a < b ? a : (b == b ? b : a); }

float roundTo(StorageFormat format, float v) {
  switch (format) {
  case StorageFormat::F32:
    return v;
  case StorageFormat::Bf16:
    return fmts::roundToBf16(v);
  case StorageFormat::E4m3:
    return fmts::roundToE4m3(v);
  case StorageFormat::E2m1:
    return fmts::roundToE2m1(v);
  default:
    return fmts::e8m0Value(fmts::e8m0Bits(v));
  }
}

/// Exactly 2^k for k in [-127, 127].
float exp2i(int k) { return std::ldexp(1.0f, k); }

/// c + terms summed in order in double, if every addition was exact (each
/// two-sum error zero): then the double is the exact sum, and rounding it
/// to f32 once is what formats::ExactSum gives, sign of zero included (its
/// zero is the terms' plain sum). Nothing when some addition rounded (or a
/// term is not finite): the caller takes the exact sum. The MFMA steps'
/// terms (products of e4m3/e2m1/bf16 values and power-of-two scales) are
/// almost always summed exactly, and ExactSum's expansion costs a heap
/// allocation and a search per step.
template <size_t N>
std::optional<float> exactInDouble(float c, const double (&terms)[N]) {
  double sum = c;
  for (double t : terms) {
    const double s = sum + t, bv = s - sum;
    const double err = (sum - (s - bv)) + (t - bv);
    if (err != 0.0 || !std::isfinite(s))
      return std::nullopt;
    sum = s;
  }
  return static_cast<float>(sum);
}

float scaledMfmaStep(float c, const double (&scaledBlocks)[4]) {
  if (auto fast = exactInDouble(c, scaledBlocks))
    return *fast;
  return fmts::scaledMfmaStep(c, scaledBlocks);
}

template <size_t N>
float bf16MfmaStep(float c, const double (&products)[N]) {
  if (auto fast = exactInDouble(c, products))
    return *fast;
  return fmts::bf16MfmaStep(c, products);
}

/// Weight rows of a gemv_rows decoded exactly (decodeRows), with their
/// block scales: what a prefetch holds. They point into a WeightCache where
/// the weights are read-only and cached, else into the object's own copy.
struct DecodedRows {
  const float *values = nullptr; ///< rows x k
  const float *scales = nullptr; ///< rows x ceil(k / 32)
  std::vector<float> ownValues, ownScales;

  DecodedRows() = default;
  DecodedRows(DecodedRows &&) = default; // the vectors' buffers stay put
  DecodedRows &operator=(DecodedRows &&) = default;
  DecodedRows(const DecodedRows &) = delete;
};

/// Rows [row0, row0 + n) of a gemv_rows weight `w` (weightRows x k) decoded
/// exactly (MXFP4 read from AITER's shuffled layouts, the same offsets the
/// project's shuffle uses) and, with scales `ws`, their block scales; without
/// them the scales are left as they are.
void decodeRows(const RegionStorage &w, const RegionStorage *ws, int64_t weightRows, int64_t k,
                int64_t row0, int64_t n, float *values, float *scales) {
  const bool mxfp4 = w.format == StorageFormat::E2m1;
  const int64_t scalesPerRow = (k + 31) / 32;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t row = row0 + j;
    float *decoded = values + j * k;
    if (mxfp4) {
      for (int64_t c = 0; c < k; c += 2) {
        const uint8_t byte =
            w.bytes[fmts::shuffledWeightOffset(0, row, c / 2, weightRows, k / 2)];
        decoded[c] = RegionStorage::decode(StorageFormat::E2m1, byte & 15);
        if (c + 1 < k)
          decoded[c + 1] = RegionStorage::decode(StorageFormat::E2m1, byte >> 4);
      }
    } else {
      for (int64_t c = 0; c < k; ++c)
        decoded[c] = w.get(row * k + c);
    }
    if (!ws)
      continue;
    float *scale = scales + j * scalesPerRow;
    for (int64_t b = 0; b < k / 32; ++b)
      scale[b] = mxfp4 ? RegionStorage::decode(StorageFormat::E8m0,
                                               ws->bytes[fmts::shuffledScaleOffset(row, b, ws->cols)])
                       : ws->get((row / 32) * ws->cols + b);
  }
}

/// The read-only gemv_rows weights of a sweep decoded once (the schedules
/// share their storage), so that a task copies nothing and decodes nothing.
/// Filled before the schedules start; read-only after.
struct WeightCache {
  struct Entry {
    std::vector<float> values, scales; ///< every row
  };
  /// By (weight storage, scales storage or null).
  std::map<std::pair<const RegionStorage *, const RegionStorage *>, Entry> entries;
  /// Decoded floats at most: a larger config decodes per task instead.
  static constexpr int64_t kMaxValues = int64_t(64) << 20;
};

/// The results of the heavy tile ops (gemv_rows, attend_chunk) by exactly
/// what they read. In a sweep every schedule runs the same op on the same
/// bytes unless a race changed them, and these ops are pure functions of
/// what they read: a result is reused only when the op, its rank, its
/// indices and every byte it reads from writable memory are the same (its
/// read-only weights and cache cannot differ), so nothing a race changes is
/// ever taken from here. One per sweep thread: no locking.
struct OpMemo {
  std::unordered_map<std::string, std::vector<TileValues>> results;
  /// Bytes held at most; past it nothing more is kept.
  static constexpr size_t kMaxBytes = size_t(256) << 20;
  size_t bytes = 0;

  const std::vector<TileValues> *find(const std::string &key) const {
    auto it = results.find(key);
    return it == results.end() ? nullptr : &it->second;
  }
  void keep(std::string key, std::vector<TileValues> values) {
    size_t size = key.size();
    for (const TileValues &v : values)
      size += v.size() * sizeof(float);
    if (bytes + size > kMaxBytes)
      return;
    bytes += size;
    results.emplace(std::move(key), std::move(values));
  }
};

/// Appends the raw bytes of `value` to a memo key.
template <typename T> void appendKey(std::string &key, const T &value) {
  key.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

/// Where a CTA stands: the stage it walks, the task it runs and the next op.
struct CtaState {
  size_t stage = 0;
  int64_t task = -1; ///< -1: between tasks
  bool done = false;
  Block::iterator pc;
  /// A dynamic stage's task claimed ahead (mono_claim_task): the CTA holds
  /// it while it runs the current one, and runs it next.
  int64_t ahead = 0;
  /// The waits marked polled once that this CTA has passed in this step:
  /// its later tasks of the stage do not poll them again (as on the GPU).
  llvm::DenseSet<Operation *> waitsPassed;
  /// This task's gemv_rows weights loaded before their polls
  /// (mono.prefetched), and the waits before which they were issued.
  llvm::DenseMap<Operation *, DecodedRows> prefetched;
  llvm::SmallPtrSet<Operation *, 2> prefetchesIssued;
  llvm::DenseMap<Value, int64_t> indices;
  llvm::DenseMap<Value, TileValues> tiles;

  /// A fresh task: nothing of the previous one's frame is kept.
  void startTask(StageOp stage, int64_t id) {
    task = id;
    pc = stage.getBodyBlock().begin();
    indices.clear();
    tiles.clear();
    prefetched.clear();
    prefetchesIssued.clear();
    indices[stage.getTaskIndex()] = id;
  }
};

} // namespace

/// What every schedule of a launch shares (PreparedLaunch).
struct monodc::sim::PreparedLaunch::Plan {
  /// A region as the interpreter reads it.
  struct RegionInfo {
    RegionOp op;
    size_t index = 0; ///< in LaunchMemory
    int64_t rows = 0, cols = 0;
    bool holdsBytes = false;
    bool writable = false; ///< inputs and weights are not (the verifier's rule)
    StringRef name;
    /// Its rows are the memory's (the caller's count), not `rows`.
    bool rowsAtLaunch = false;
    /// Its columns are the memory's (the caller's count), not `cols`.
    bool colsAtLaunch = false;
  };

  LaunchOp launch;
  SmallVector<StageOp> stages;
  std::vector<int64_t> bases, claims;
  int64_t tagOffset = 0;
  bool advance = false;
  /// mono-unfuse's baseline: a kernel a stage, ordered by the stream, so a
  /// rank's CTAs start a stage (and the step's end) only once all of them
  /// have left the one before.
  bool unfused = false;
  llvm::StringMap<RegionInfo> regions;
  /// The waits a CTA polls for its first task of the stage only.
  llvm::DenseSet<Operation *> polledOnce;
  /// Every wait's site (waitSites).
  llvm::DenseMap<Operation *, int64_t> waitSites;
  /// The epoch region and the first word of its wait-fault record.
  size_t epochIndex = 0;
  int64_t faultWord = 0;
  /// The first wait of a run that a gemv_rows marked mono.prefetched
  /// follows: the GPU loads the gemv's weights before polling it.
  llvm::DenseMap<Operation *, GemvRowsOp> prefetchAt;
  /// Per stage: the flags its publish writes (a task that skips the rest
  /// publishes the later tasks' flags), or null.
  llvm::DenseMap<Operation *, const RegionInfo *> publishFlags;
  /// The output regions, in the launch's order (what a sweep compares).
  std::vector<const RegionInfo *> outputs;

  const RegionInfo &region(StringRef name) const { return regions.find(name)->second; }
  const RegionInfo &region(FlatSymbolRefAttr name) const { return region(name.getValue()); }
};

namespace {

using Plan = PreparedLaunch::Plan;
using RegionInfo = Plan::RegionInfo;

enum class StepResult { Progress, Blocked, Done, Error };

class TaskInterpreter {
public:
  TaskInterpreter(const Plan &plan, const WeightCache *cache, OpMemo *memo,
                  const std::vector<LaunchMemory *> &memories, int64_t rank, uint32_t tag)
      : plan(plan), cache(cache), memo(memo), memory(*memories[rank]), peers(memories), rank(rank),
        ranks(LaunchOp(plan.launch).getRanks()), block(LaunchOp(plan.launch).getBlock()), tag(tag),
        parity(tag / 2 % 2) {}

  /// Runs ops from the CTA's pc to the end of its task, or to a wait that
  /// is not yet satisfied.
  StepResult resume(CtaState &cta, StageOp stage, Waiter *waiter);

private:
  enum class OpResult { Done, Blocked, Error };
  OpResult step(Operation &op, Waiter *waiter);
  LogicalResult compute(Operation &op);
  LogicalResult skipRest(StageOp stage, SkipUnlessOp skip, bool skips);
  TileValues &tile(Value v) { return tiles[v]; }
  /// A poll of a rank whose wait-fault record is written gives up at its
  /// first miss (mono_poll_gives_up).
  bool gaveUp() const {
    return memory.region(plan.epochIndex).word(plan.faultWord + MONO_FAULT_STATE) != 0;
  }
  /// What a task's publish writes: (tag, task) in one word.
  uint64_t flagWord(int64_t task) const { return (uint64_t(tag) << 32) | uint32_t(task); }
  float at(Value v, int64_t i) {
    TileValues &t = tiles[v];
    return t.size() == 1 ? t[0] : t[i];
  }
  /// A tile to read in a loop, a one-value tile broadcast (as `at`), looked
  /// up once instead of per value.
  struct View {
    const float *data;
    size_t size;
    float operator[](int64_t i) const { return size == 1 ? data[0] : data[i]; }
  };
  View view(Value v) {
    const TileValues &t = tiles[v];
    return {t.data(), t.size()};
  }
  int64_t sizeOf(Value v) { return tileSize(v); }
  /// A region's rows at this launch.
  int64_t rowsOf(const RegionInfo &region) const {
    return region.rowsAtLaunch ? memory.region(region.index).rows : region.rows;
  }
  /// A region's columns at this launch.
  int64_t colsOf(const RegionInfo &region) const {
    return region.colsAtLaunch ? memory.region(region.index).cols : region.cols;
  }
  FailureOr<int64_t> window(Operation *op, const RegionInfo &region, Value row, Value col,
                            int64_t size);

  float reduce(const TileValues &x, ReduceKind kind);
  void quantize(const TileValues &x, Mxfp8Variant variant, TileValues &codes,
                TileValues &scales);
  TileValues gemv(GemvOp op, const RegionInfo &weight, int64_t row0);
  LogicalResult attendChunk(AttendChunkOp op);
  LogicalResult computeAttendChunk(AttendChunkOp op, int64_t base);
  LogicalResult gemvRowsOp(GemvRowsOp g);
  TileValues gemvRows(GemvRowsOp op, const DecodedRows &w, const RegionInfo &x, int64_t t0,
                      int64_t count);
  TileValues gemvRowsMfma(GemvRowsOp op, const DecodedRows &w, const RegionInfo &x, int64_t t0,
                          int64_t count);
  void decodeWeightRows(GemvRowsOp op, int64_t row0, DecodedRows &out);
  /// The weights a prefetched gemv_rows loads before the poll at `wait`.
  LogicalResult prefetch(CtaState &cta, GemvRowsOp g);

  /// Index of value `i` of copy (parity, source) of a peer region.
  int64_t peerIndex(const RegionStorage &r, int64_t source, int64_t i) const {
    const int64_t copy = r.elements() / (2 * ranks);
    return (parity * ranks + source) * copy + i;
  }

  const Plan &plan;
  const WeightCache *cache; ///< or null
  OpMemo *memo;             ///< or null
  /// Set while a prefetched gemv_rows runs: the rows its prefetch read.
  const DecodedRows *prefetchedRows = nullptr;
  LaunchMemory &memory;
  std::vector<LaunchMemory *> peers;
  int64_t rank, ranks;
  int64_t block;
  uint32_t tag;
  int64_t parity; ///< epoch parity: which half of the peer buffers this step uses
  // Per stage with a mono.skip_unless rest: the lowest task that skipped
  // the rest and the highest that did not, to check the promise.
  llvm::DenseMap<Operation *, int64_t> firstRestSkip, lastWorking;
  // The frame of the CTA being resumed.
  llvm::DenseMap<Value, int64_t> indices;
  llvm::DenseMap<Value, TileValues> tiles;
};

StepResult TaskInterpreter::resume(CtaState &cta, StageOp stage, Waiter *waiter) {
  std::swap(indices, cta.indices);
  std::swap(tiles, cta.tiles);
  StepResult result = StepResult::Progress;
  Block &body = stage.getBodyBlock();
  while (cta.pc != body.end()) {
    // A task that skips goes on at its publish (the end, before sync is
    // made); one whose count is above 0 goes on with the next op.
    if (auto skip = dyn_cast<SkipUnlessOp>(*cta.pc)) {
      const bool skips = indices.lookup(skip.getCount()) <= 0;
      if (skip.getRest() && failed(skipRest(stage, skip, skips))) {
        result = StepResult::Error;
        break;
      }
      do
        ++cta.pc;
      while (skips && cta.pc != body.end() && !isa<PublishOp>(*cta.pc));
      continue;
    }
    // The weights of a prefetched GEMV are read before the first poll of
    // the waits in front of it (once a task, as the GPU issues them once):
    // a GEMV whose weights were written behind those flags would read them
    // early here as on the GPU.
    if (isa<WaitOp, WaitPeerOp>(*cta.pc)) {
      auto g = plan.prefetchAt.find(&*cta.pc);
      if (g != plan.prefetchAt.end() && cta.prefetchesIssued.insert(&*cta.pc).second) {
        if (failed(prefetch(cta, g->second))) {
          result = StepResult::Error;
          break;
        }
      }
    }
    const bool pollsOnce = isa<WaitOp>(*cta.pc) && plan.polledOnce.contains(&*cta.pc);
    if (pollsOnce && cta.waitsPassed.contains(&*cta.pc)) {
      ++cta.pc;
      continue;
    }
    if (auto g = dyn_cast<GemvRowsOp>(*cta.pc)) {
      // A prefetched GEMV uses what its prefetch read.
      auto held = cta.prefetched.find(g);
      if (held != cta.prefetched.end())
        prefetchedRows = &held->second;
    }
    OpResult r = step(*cta.pc, waiter);
    prefetchedRows = nullptr;
    if (r == OpResult::Done && pollsOnce)
      cta.waitsPassed.insert(&*cta.pc);
    if (r == OpResult::Blocked) {
      result = StepResult::Blocked;
      break;
    }
    if (r == OpResult::Error) {
      result = StepResult::Error;
      break;
    }
    ++cta.pc;
  }
  std::swap(indices, cta.indices);
  std::swap(tiles, cta.tiles);
  return result;
}

// A task that skips the rest publishes every later task's flag, as the
// emitted code does, but the simulator still runs those tasks: each must skip
// too, whatever order the tasks run in.
LogicalResult TaskInterpreter::skipRest(StageOp stage, SkipUnlessOp skip, bool skips) {
  const int64_t task = indices.lookup(stage.getTaskIndex());
  auto broken = [&](int64_t skipped, int64_t working) {
    return skip.emitOpError() << "of stage '" << stage.getSymName() << "': task " << skipped
                              << " skips the stage's later tasks (rest), but task " << working
                              << " has work (count > 0)";
  };
  if (!skips) {
    int64_t &last = lastWorking.try_emplace(stage, task).first->second;
    last = std::max(last, task);
    auto first = firstRestSkip.find(stage);
    return first != firstRestSkip.end() && first->second < task ? broken(first->second, task)
                                                                : success();
  }
  int64_t &first = firstRestSkip.try_emplace(stage, task).first->second;
  first = std::min(first, task);
  auto last = lastWorking.find(stage);
  if (last != lastWorking.end() && last->second > task)
    return broken(task, last->second);
  if (const RegionInfo *info = plan.publishFlags.lookup(stage)) {
    RegionStorage &flags = memory.region(info->index);
    for (int64_t t = task; t < stage.getTasks(); ++t)
      flags.setWord(t, flagWord(t));
  }
  return success();
}

FailureOr<int64_t> TaskInterpreter::window(Operation *op, const RegionInfo &region, Value row,
                                           Value col, int64_t size) {
  int64_t r = indices.lookup(row), c = indices.lookup(col);
  const int64_t rows = rowsOf(region);
  if (r < 0 || r >= rows || c < 0 || c + size > region.cols)
    return op->emitOpError() << "touches row " << r << ", columns [" << c << ", "
                             << c + size << ") outside region '" << region.name
                             << "' [" << rows << ", " << region.cols << "]";
  return r * region.cols + c;
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
  const int64_t group = variant == Mxfp8Variant::KvRecord ? 64 : 32;
  int64_t groups = x.size() / group;
  codes.assign(x.size(), 0.0f);
  scales.assign(groups, 0.0f);
  for (int64_t g = 0; g < groups; ++g) {
    float amax = 0.0f;
    for (int64_t j = 0; j < group; ++j)
      amax = deviceMax(amax, std::fabs(x[g * group + j]));
    // The KV record floors amax at 1e-4; its code never reaches the clamps.
    int code = variant == Mxfp8Variant::KvRecord
                   ? fmts::mxfp8ScaleCode(std::max(amax, 1e-4f), flavour)
                   : fmts::mxfp8ScaleCode(amax, flavour);
    scales[g] = exp2i(code - 127);
    for (int64_t j = 0; j < group; ++j) {
      float v = x[g * group + j] * exp2i(127 - code);
      v = v > 448.0f ? 448.0f : (v < -448.0f ? -448.0f : v);
      codes[g * group + j] = fmts::roundToE4m3(v);
    }
  }
}

// Mirrors mono_attend_chunk: keys in batches, f32 fused multiply-adds in
// dim order, the online rescale per batch.
LogicalResult TaskInterpreter::attendChunk(AttendChunkOp op) {
  const RegionInfo &qRegion = plan.region(op.getQAttr()), &cacheRegion = plan.region(op.getCacheAttr());
  const int64_t size = op.getHeads() * op.getHeadDim();
  auto base = window(op, qRegion, op.getRow(), op.getCol(), size);
  if (failed(base))
    return failure();
  // Memoized on the query's bytes and the slots, over a read-only cache.
  std::string key;
  if (memo && !cacheRegion.writable && !qRegion.holdsBytes &&
      memory.region(qRegion.index).format != StorageFormat::E2m1) {
    appendKey(key, op.getOperation());
    appendKey(key, rank);
    const RegionStorage &q = memory.region(qRegion.index);
    const int64_t width = static_cast<int64_t>(q.bytes.size()) / q.elements();
    key.append(reinterpret_cast<const char *>(q.bytes.data()) + *base * width, size * width);
    const TileValues &slots = tile(op.getSlots());
    key.append(reinterpret_cast<const char *>(slots.data()), slots.size() * sizeof(float));
    if (const std::vector<TileValues> *held = memo->find(key)) {
      tiles[op.getM()] = (*held)[0];
      tiles[op.getL()] = (*held)[1];
      tiles[op.getP()] = (*held)[2];
      return success();
    }
  }
  if (failed(computeAttendChunk(op, *base)))
    return failure();
  if (!key.empty())
    memo->keep(std::move(key), {tiles[op.getM()], tiles[op.getL()], tiles[op.getP()]});
  return success();
}

LogicalResult TaskInterpreter::computeAttendChunk(AttendChunkOp op, int64_t base) {
  const RegionInfo &qRegion = plan.region(op.getQAttr()), &cacheRegion = plan.region(op.getCacheAttr());
  const int64_t heads = op.getHeads(), dim = op.getHeadDim(), nope = op.getNope();
  const int64_t keys = op.getKeys(), batch = AttendChunkOp::kKeyBatch, pt = op.getPageTokens();
  const int64_t data = op.getDataBytes(), pages = rowsOf(cacheRegion);
  const int64_t parts = op.scoreParts(block);
  const RegionStorage &qStorage = memory.region(qRegion.index);
  const RegionStorage &cache = memory.region(cacheRegion.index);
  std::vector<float> q(heads * dim);
  for (int64_t i = 0; i < heads * dim; ++i)
    q[i] = qStorage.get(base + i);
  const float minusInf = -std::numeric_limits<float>::infinity(), scale = op.getScoreScale();
  const TileValues &slots = tile(op.getSlots());
  for (float s : slots)
    if (s >= 0 && s >= float(pages * pt))
      return op.emitOpError() << "key slot " << s << " is outside cache '"
                              << cacheRegion.name << "' (" << pages * pt << " slots)";
  TileValues m(heads, minusInf), l(heads, 0.0f), p(heads * dim, 0.0f);
  std::vector<float> kv(batch * dim), t(heads * batch), alpha(heads);
  for (int64_t b0 = 0; b0 < keys; b0 += batch) {
    auto slotOf = [&](int64_t k) { return b0 + k < keys ? int64_t(slots[b0 + k]) : -1; };
    for (int64_t k = 0; k < batch; ++k)
      for (int64_t d = 0; d < dim; ++d) {
        const int64_t slot = slotOf(k);
        float v = 0.0f;
        if (slot >= 0) {
          const int64_t page = (slot / pt) * cacheRegion.cols, record = page + (slot % pt) * data;
          if (d < nope)
            v = RegionStorage::decode(StorageFormat::E4m3, cache.bytes[record + d]) *
                exp2i(int(cache.bytes[page + pt * data + (slot % pt) * 8 + d / 64]) - 127);
          else
            v = cache.getEncoded(StorageFormat::Bf16, record + nope + 2 * (d - nope));
        }
        kv[k * dim + d] = v;
      }
    // Each score: `parts` fma chains over consecutive dims, added in order.
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t k = 0; k < batch; ++k) {
        float sum = 0.0f;
        for (int64_t part = 0; part < parts; ++part) {
          float acc = 0.0f;
          for (int64_t d = part * (dim / parts); d < (part + 1) * (dim / parts); ++d)
            acc = std::fma(q[h * dim + d], kv[k * dim + d], acc);
          sum += acc;
        }
        t[h * batch + k] = slotOf(k) >= 0 ? sum * scale : minusInf;
      }
    for (int64_t h = 0; h < heads; ++h) {
      float mOld = m[h], mNew = mOld;
      for (int64_t k = 0; k < batch; ++k)
        mNew = deviceMax(mNew, t[h * batch + k]);
      float a = mNew == minusInf ? 1.0f : std::exp2(mOld - mNew);
      float sum = 0.0f;
      for (int64_t k = 0; k < batch; ++k) {
        float &w = t[h * batch + k];
        w = w == minusInf ? 0.0f : std::exp2(w - mNew);
        sum += w;
      }
      l[h] = l[h] * a + sum;
      m[h] = mNew;
      alpha[h] = a;
    }
    for (int64_t i = 0; i < heads * dim; ++i) {
      const int64_t h = i / dim, d = i % dim;
      float acc = p[i] * alpha[h];
      for (int64_t k = 0; k < batch; ++k)
        acc = std::fma(t[h * batch + k], kv[k * dim + d], acc);
      p[i] = acc;
    }
  }
  tiles[op.getM()] = std::move(m);
  tiles[op.getL()] = std::move(l);
  tiles[op.getP()] = std::move(p);
  return success();
}

// Mirrors mono_gemv_*: T threads per output, each summing a contiguous run of
// 32-wide K blocks (block sums scaled once), partials added in thread order.
TileValues TaskInterpreter::gemv(GemvOp op, const RegionInfo &weight, int64_t row0) {
  const int64_t n = sizeOf(op.getResult()), k = weight.cols;
  const int64_t threadsPerOutput = n >= block ? 1 : block / n;
  const int64_t perPass = block / threadsPerOutput;
  const int64_t kBlocks = k / 32;
  const int64_t blocksPerThread = (kBlocks + threadsPerOutput - 1) / threadsPerOutput;
  const RegionStorage &w = memory.region(weight.index);
  const bool scaled = static_cast<bool>(op.getXScales());
  const RegionStorage *ws =
      scaled ? &memory.region(plan.region(op.getWeightScalesAttr()).index) : nullptr;

  TileValues x(k);
  const View xv = view(op.getX());
  for (int64_t i = 0; i < k; ++i)
    x[i] = scaled ? xv[i] * at(op.getXScales(), i / 32) : xv[i];

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

// Weight rows [row0, row0 + outputs) of a gemv_rows and their block scales
// (1 for an unscaled weight): from the cache, or decoded into `out`.
void TaskInterpreter::decodeWeightRows(GemvRowsOp op, int64_t row0, DecodedRows &out) {
  const RegionInfo &weight = plan.region(op.getWeightAttr());
  const int64_t n = op.getOutputs(), k = weight.cols, scalesPerRow = (k + 31) / 32;
  const RegionStorage &w = memory.region(weight.index);
  const RegionStorage *ws =
      op.getWeightScales() ? &memory.region(plan.region(op.getWeightScalesAttr()).index) : nullptr;
  if (cache) {
    auto hit = cache->entries.find({&w, ws});
    if (hit != cache->entries.end()) {
      out.values = hit->second.values.data() + row0 * k;
      out.scales = hit->second.scales.data() + row0 * scalesPerRow;
      return;
    }
  }
  out.ownValues.resize(n * k);
  out.ownScales.assign(n * scalesPerRow, 1.0f);
  decodeRows(w, ws, weight.rows, k, row0, n, out.ownValues.data(), out.ownScales.data());
  out.values = out.ownValues.data();
  out.scales = out.ownScales.data();
}

LogicalResult TaskInterpreter::prefetch(CtaState &cta, GemvRowsOp g) {
  // A counted GEMV of no tokens loads nothing, not even its prefetch.
  if (g.getCount() && indices.lookup(g.getCount()) <= 0)
    return success();
  const RegionInfo &weight = plan.region(g.getWeightAttr());
  const int64_t row0 = indices.lookup(g.getRow());
  if (row0 < 0 || row0 + g.getOutputs() > weight.rows)
    return g.emitOpError() << "prefetches weight rows [" << row0 << ", "
                           << row0 + g.getOutputs() << ") outside '" << weight.name << "'";
  decodeWeightRows(g, row0, cta.prefetched[g]);
  return success();
}

// Mirrors mono_gemv_rows: activations rounded to bf16 as staged, weights
// decoded exactly; per (output, thread part, token) each 16-value chunk of
// p, p + TP, ... is summed unscaled in its own fma chain and joins the
// part's sum by one fma with its block scale; then the TP parts are added
// in order.
TileValues TaskInterpreter::gemvRows(GemvRowsOp op, const DecodedRows &w,
                                     const RegionInfo &xRegion, int64_t t0, int64_t count) {
  if (count == 0) // no token read, no weight: every result 0
    return TileValues(op.getTokens() * op.getOutputs(), 0.0f);
  if (op.getLowering() == GemvLowering::ScaledMfma || op.getLowering() == GemvLowering::Bf16Mfma ||
      op.getLowering() == GemvLowering::Fp8Mfma)
    return gemvRowsMfma(op, w, xRegion, t0, count);
  // Tokens from `count` on are neither read nor summed: their results stay 0.
  const int64_t n = op.getOutputs(), tokens = count, k = plan.region(op.getWeightAttr()).cols;
  const int64_t parts = block / n, chunks = k / 16, scalesPerRow = (k + 31) / 32;
  const bool scaled = static_cast<bool>(op.getWeightScales());
  const RegionStorage &x = memory.region(xRegion.index);
  const RegionStorage *xs =
      scaled ? &memory.region(plan.region(op.getXScalesAttr()).index) : nullptr;
  std::vector<float> staged(tokens * k);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t c = 0; c < k; ++c) {
      float v = x.get((t0 + t) * k + c);
      if (scaled)
        v *= xs->get((t0 + t) * (k / 32) + c / 32);
      staged[t * k + c] = fmts::roundToBf16(v);
    }
  TileValues out(op.getTokens() * n, 0.0f);
  // One scale a 32-wide block; an unscaled weight may end in half a block.
  for (int64_t j = 0; j < n; ++j) {
    const float *decoded = w.values + j * k, *blockScale = w.scales + j * scalesPerRow;
    for (int64_t t = 0; t < tokens; ++t) {
      float sum = 0.0f;
      for (int64_t p = 0; p < parts; ++p) {
        float acc = 0.0f;
        for (int64_t chunk = p; chunk < chunks; chunk += parts) {
          float chunkSum = 0.0f;
          for (int64_t i = 0; i < 16; ++i)
            chunkSum = std::fma(staged[t * k + chunk * 16 + i], decoded[chunk * 16 + i], chunkSum);
          acc = std::fma(chunkSum, blockScale[chunk / 2], acc);
        }
        sum += acc;
      }
      out[t * n + j] = sum;
    }
  }
  return out;
}

// Mirrors mono_gemv_mfma: the codes and scales (or bf16 values) as they are
// (tokens not rounded), each k step of an output the MFMA's modelled step:
// the accumulator and the step's exact products (the scaled form: its four
// 32-k blocks' sums times their scales) summed exactly, rounded once
// (formats::ExactSum), the steps in order; where a tile's steps are split
// over waves (mono_gemv_mfma_split), each wave's sum over its steps, then
// the waves' sums added in order in f32. gfx942's fp8_mfma form takes each
// 32-k block alone: its exact sum rounded, scaled, added to the accumulator
// (formats::fp8MfmaBlockStep, which the host model's tests check the block
// against bit for bit).
TileValues TaskInterpreter::gemvRowsMfma(GemvRowsOp op, const DecodedRows &w,
                                         const RegionInfo &xRegion, int64_t t0, int64_t count) {
  const bool fp8Blocks = op.getLowering() == GemvLowering::Fp8Mfma;
  const bool scaled = op.getLowering() == GemvLowering::ScaledMfma || fp8Blocks;
  const int64_t n = op.getOutputs(), k = plan.region(op.getWeightAttr()).cols;
  const int64_t stepK = scaled ? 128 : 32;
  const int64_t steps = k / stepK, scalesPerRow = (k + 31) / 32;
  const int64_t split = mono_gemv_mfma_split(static_cast<int>(n), static_cast<int>(block));
  // gfx942 runs a 32-k bf16 step as two 16x16x16 instructions, two roundings.
  const bool bf16Halves =
      !scaled && targetOf(LaunchOp(plan.launch).getArch()).bf16MfmaStep()->k == 16;
  const RegionStorage &xStorage = memory.region(xRegion.index);
  const RegionStorage *xs =
      scaled ? &memory.region(plan.region(op.getXScalesAttr()).index) : nullptr;
  // The tokens' values and scales, read once (not once per output).
  std::vector<float> x(count * k), xScale(scaled ? count * (k / 32) : 0);
  for (int64_t i = 0; i < count * k; ++i)
    x[i] = xStorage.get(t0 * k + i);
  for (size_t i = 0; i < xScale.size(); ++i)
    xScale[i] = xs->get(t0 * (k / 32) + static_cast<int64_t>(i));
  // A block's 32 products of e4m3/e2m1 codes (at most 8 significant bits,
  // exponents within 2^-18 .. 2^18) sum exactly in double in any order:
  // four partial sums instead of one chain of additions, the same result.
  const StorageFormat wFormat = memory.region(plan.region(op.getWeightAttr()).index).format;
  const bool codes = xStorage.format == StorageFormat::E4m3 &&
                     (wFormat == StorageFormat::E4m3 || wFormat == StorageFormat::E2m1);
  auto blockSumOf = [&](const float *xb, const float *wb) {
    if (!codes) {
      double sum = 0.0;
      for (int64_t q = 0; q < 32; ++q)
        sum += double(xb[q]) * wb[q];
      return sum;
    }
    double part[4] = {0.0, 0.0, 0.0, 0.0};
    for (int64_t q = 0; q < 32; q += 4)
      for (int64_t i = 0; i < 4; ++i)
        part[i] += double(xb[q + i]) * wb[q + i];
    return (part[0] + part[1]) + (part[2] + part[3]);
  };
  TileValues out(op.getTokens() * n, 0.0f);
  // Codes and powers of two, or bf16 values: exact in f32.
  for (int64_t j = 0; j < n; ++j) {
    const float *decoded = w.values + j * k, *blockScale = w.scales + j * scalesPerRow;
    for (int64_t t = 0; t < count; ++t) {
      const float *xRow = x.data() + t * k;
      float sum = 0.0f;
      for (int64_t p = 0; p < split; ++p) {
        float acc = 0.0f;
        for (int64_t s = p * steps / split; s < (p + 1) * steps / split; ++s) {
          if (!scaled) {
            double products[32];  // exact: bf16 values
            for (int64_t c = 0; c < 32; ++c)
              products[c] = double(xRow[32 * s + c]) * decoded[32 * s + c];
            if (bf16Halves) {
              double first[16], second[16];
              fmts::bf16MfmaHalves(products, first, second);
              acc = bf16MfmaStep(bf16MfmaStep(acc, first), second);
            } else {
              acc = bf16MfmaStep(acc, products);
            }
            continue;
          }
          if (fp8Blocks) {
            for (int64_t block32 = 4 * s; block32 < 4 * s + 4; ++block32)
              acc = fmts::fp8MfmaBlockStep(
                  acc, blockSumOf(xRow + block32 * 32, decoded + block32 * 32),
                  double(blockScale[block32]) * double(xScale[t * (k / 32) + block32]));
            continue;
          }
          double scaledBlocks[4];
          for (int64_t b = 0; b < 4; ++b) {
            const int64_t block32 = 4 * s + b;
            const double blockSum = blockSumOf(xRow + block32 * 32, decoded + block32 * 32);
            scaledBlocks[b] = blockSum * double(blockScale[block32]) *
                              double(xScale[t * (k / 32) + block32]);
          }
          acc = scaledMfmaStep(acc, scaledBlocks);
        }
        sum = split == 1 ? acc : sum + acc;
      }
      out[t * n + j] = sum;
    }
  }
  return out;
}

/// Records what a blocked poll waits for.
static void describeWait(Operation *wait, int64_t site, StringRef flags, int64_t first,
                         int64_t count, uint32_t tag, int64_t blocking, uint32_t seen,
                         Waiter *waiter) {
  if (!waiter)
    return;
  waiter->site = site;
  waiter->flags = flags.str();
  waiter->regions.clear();
  if (auto names = wait->getAttrOfType<ArrayAttr>("mono.regions"))
    for (Attribute n : names)
      waiter->regions.push_back(cast<StringAttr>(n).str());
  waiter->first = first;
  waiter->count = count;
  waiter->expectedTag = tag;
  waiter->blockingFlag = blocking;
  waiter->seenTag = seen;
}

TaskInterpreter::OpResult TaskInterpreter::step(Operation &op, Waiter *waiter) {
  if (auto wait = dyn_cast<WaitOp>(op)) {
    const RegionStorage &flags = memory.region(plan.region(wait.getFlags()).index);
    int64_t first = indices.lookup(wait.getFirst()), count = indices.lookup(wait.getCount());
    if (first < 0 || count <= 0 || first + count > flags.elements()) {
      wait.emitOpError() << "waits on flags [" << first << ", " << first + count
                         << ") outside '" << wait.getFlags() << "'";
      return OpResult::Error;
    }
    for (int64_t i = first; i < first + count; ++i) {
      uint32_t seen = static_cast<uint32_t>(flags.word(i) >> 32);
      if (seen == tag || gaveUp())
        continue;
      describeWait(wait, plan.waitSites.lookup(&op), wait.getFlags(), first, count, tag, i, seen,
                   waiter);
      return OpResult::Blocked;
    }
    return OpResult::Done;
  }
  if (auto wait = dyn_cast<WaitPeerOp>(op)) {
    const RegionStorage &flags = memory.region(plan.region(wait.getFlags()).index);
    int64_t first = indices.lookup(wait.getFirst()), count = indices.lookup(wait.getCount());
    const int64_t source = static_cast<int64_t>(wait.getRank());
    for (int64_t i = first; i < first + count; ++i) {
      uint32_t seen = static_cast<uint32_t>(flags.word(peerIndex(flags, source, i)) >> 32);
      if (seen == tag || gaveUp())
        continue;
      describeWait(wait, plan.waitSites.lookup(&op),
                   wait.getFlags().str() + " from rank " + std::to_string(source), first, count,
                   tag, i, seen, waiter);
      return OpResult::Blocked;
    }
    return OpResult::Done;
  }
  if (auto publish = dyn_cast<PublishPeerOp>(op)) {
    int64_t task = indices.lookup(publish.getTask());
    const size_t index = plan.region(publish.getFlags()).index;
    for (LaunchMemory *peer : peers) {
      RegionStorage &flags = peer->region(index);
      flags.setWord(peerIndex(flags, rank, task), flagWord(task));
    }
    return OpResult::Done;
  }
  if (auto store = dyn_cast<StorePeerOp>(op)) {
    const RegionInfo &region = plan.region(store.getRegionAttr());
    int64_t row = indices.lookup(store.getRow()), col = indices.lookup(store.getCol());
    int64_t size = sizeOf(store.getValue());
    if (row < 0 || row >= region.rows || col < 0 || col + size > region.cols) {
      store.emitOpError() << "writes outside peer region '" << region.name << "'";
      return OpResult::Error;
    }
    RegionStorage &r = peers[store.getRank()]->region(region.index);
    const View value = view(store.getValue());
    for (int64_t i = 0; i < size; ++i)
      r.set(peerIndex(r, rank, row * region.cols + col + i), value[i]);
    return OpResult::Done;
  }
  if (auto load = dyn_cast<LoadPeerOp>(op)) {
    const RegionInfo &region = plan.region(load.getRegionAttr());
    int64_t row = indices.lookup(load.getRow()), col = indices.lookup(load.getCol());
    int64_t size = sizeOf(load.getResult());
    if (row < 0 || row >= region.rows || col < 0 || col + size > region.cols) {
      load.emitOpError() << "reads outside peer region '" << region.name << "'";
      return OpResult::Error;
    }
    const RegionStorage &r = memory.region(region.index);
    TileValues out(size);
    for (int64_t i = 0; i < size; ++i)
      out[i] = r.get(peerIndex(r, load.getRank(), row * region.cols + col + i));
    tiles[load.getResult()] = std::move(out);
    return OpResult::Done;
  }
  if (auto publish = dyn_cast<PublishOp>(op)) {
    RegionStorage &flags = memory.region(plan.region(publish.getFlags()).index);
    int64_t task = indices.lookup(publish.getTask());
    flags.setWord(task, flagWord(task));
    return OpResult::Done;
  }
  return succeeded(compute(op)) ? OpResult::Done : OpResult::Error;
}

LogicalResult TaskInterpreter::compute(Operation &op) {
  auto unary = [&](Operation *o, auto fn) {
    const View in = view(o->getOperand(0));
    TileValues out(sizeOf(o->getResult(0)));
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = fn(in[i]);
    tiles[o->getResult(0)] = std::move(out);
    return success();
  };
  auto binary = [&](Operation *o, auto fn) {
    const View a = view(o->getOperand(0)), b = view(o->getOperand(1));
    TileValues out(sizeOf(o->getResult(0)));
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = fn(a[i], b[i]);
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
      .Case<RegionRowsOp>([&](RegionRowsOp rows) {
        tiles[rows.getResult()] =
            TileValues(1, float(rowsOf(plan.region(rows.getRegionAttr()))));
        return success();
      })
      .Case<RegionColsOp>([&](RegionColsOp cols) {
        tiles[cols.getResult()] =
            TileValues(1, float(colsOf(plan.region(cols.getRegionAttr()))));
        return success();
      })
      .Case<LoadAtOp>([&](LoadAtOp load) -> LogicalResult {
        const RegionInfo &region = plan.region(load.getRegionAttr());
        const int64_t row = indices.lookup(load.getRow()), cols = colsOf(region);
        if (row < 0 || row >= rowsOf(region))
          return load.emitOpError() << "reads row " << row << " outside region '" << region.name
                                    << "' (" << rowsOf(region) << " rows)";
        const RegionStorage &r = memory.region(region.index);
        View at = view(load.getCols());
        TileValues out(sizeOf(load.getResult()));
        for (size_t i = 0; i < out.size(); ++i) {
          // Clamped into the row, as the device does (C++ truncation).
          const int64_t c = std::clamp<int64_t>(static_cast<int64_t>(at[i]), 0, cols - 1);
          out[i] = r.get(row * cols + c);
        }
        tiles[load.getResult()] = std::move(out);
        return success();
      })
      .Case<IotaOp>([&](IotaOp iota) {
        TileValues out(sizeOf(iota.getResult()));
        const int64_t start = indices.lookup(iota.getStart());
        for (size_t i = 0; i < out.size(); ++i)
          out[i] = float(start + int64_t(i));
        tiles[iota.getResult()] = std::move(out);
        return success();
      })
      .Case<LoadOp>([&](LoadOp load) -> LogicalResult {
        const RegionInfo &region = plan.region(load.getRegionAttr());
        int64_t size = sizeOf(load.getResult());
        Type format = cast<TileType>(load.getResult().getType()).getElementType();
        const int64_t width = region.holdsBytes ? encodedBytes(format) : 1;
        auto base = window(load, region, load.getRow(), load.getCol(), size * width);
        if (failed(base))
          return failure();
        const RegionStorage &r = memory.region(region.index);
        TileValues out(size);
        if (region.holdsBytes) {
          const StorageFormat encoded = storageFormatOf(format);
          for (int64_t i = 0; i < size; ++i)
            out[i] = r.getEncoded(encoded, *base + i * width);
        } else {
          for (int64_t i = 0; i < size; ++i)
            out[i] = r.get(*base + i);
        }
        tiles[load.getResult()] = std::move(out);
        return success();
      })
      .Case<StoreOp>([&](StoreOp store) -> LogicalResult {
        const RegionInfo &region = plan.region(store.getRegionAttr());
        if (store.getGuard() && indices.lookup(store.getGuard()) < 0)
          return success();  // a pad row
        const View value = view(store.getValue());
        if (region.holdsBytes) {
          Type format = cast<TileType>(store.getValue().getType()).getElementType();
          const int64_t bytes = encodedBytes(format), size = sizeOf(store.getValue());
          auto base = window(store, region, store.getRow(), store.getCol(), size * bytes);
          if (failed(base))
            return failure();
          RegionStorage &r = memory.region(region.index);
          const StorageFormat encoded = storageFormatOf(format);
          for (int64_t i = 0; i < size; ++i)
            r.setEncoded(encoded, *base + i * bytes, value[i]);
          return success();
        }
        const int64_t width = store.getRowWidth();
        auto base = window(store, region, store.getRow(), store.getCol(), width);
        if (failed(base))
          return failure();
        if (indices.lookup(store.getRow()) + store.getRows() > rowsOf(region))
          return store.emitOpError() << "writes rows past region '" << region.name << "'";
        // A counted store leaves the rows from its count on alone.
        const int64_t rowsStored =
            store.getCount() ? indices.lookup(store.getCount()) : store.getRows();
        if (rowsStored < 0 || rowsStored > store.getRows())
          return store.emitOpError() << "count " << rowsStored << " is outside [0, "
                                     << store.getRows() << "]";
        RegionStorage &r = memory.region(region.index);
        for (int64_t row = 0; row < rowsStored; ++row)
          for (int64_t c = 0; c < width; ++c)
            r.set(*base + row * region.cols + c, value[row * width + c]);
        return success();
      })
      .Case<CastOp>([&](CastOp c) {
        const StorageFormat to =
            storageFormatOf(cast<TileType>(c.getResult().getType()).getElementType());
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
      .Case<ExpOp>([&](Operation *o) { return unary(o, [](float v) { return std::exp(v); }); })
      .Case<LogOp>([&](Operation *o) { return unary(o, [](float v) { return std::log(v); }); })
      .Case<SelectOp>([&](SelectOp op) {
        TileValues out(sizeOf(op.getResult()));
        const View av = view(op.getA()), bv = view(op.getB()), xv = view(op.getX()),
                   yv = view(op.getY());
        for (size_t i = 0; i < out.size(); ++i) {
          float a = av[i], b = bv[i];
          bool condition = op.getPredicate() == Predicate::Gt   ? a > b
                           : op.getPredicate() == Predicate::Lt ? a < b
                                                                : std::isnan(a);
          out[i] = condition ? xv[i] : yv[i];
        }
        tiles[op.getResult()] = std::move(out);
        return success();
      })
      .Case<GatherOp>([&](GatherOp op) -> LogicalResult {
        TileValues out(sizeOf(op.getResult()));
        for (size_t i = 0; i < out.size(); ++i) {
          float index = at(op.getIndices(), i);
          if (!(index >= 0 && index < sizeOf(op.getTable())))
            return op.emitOpError() << "index " << index << " is outside a table of "
                                    << sizeOf(op.getTable());
          out[i] = at(op.getTable(), static_cast<int64_t>(index));
        }
        tiles[op.getResult()] = std::move(out);
        return success();
      })
      .Case<TopKOp>([&](TopKOp op) {
        // mono_topk's order: ties to the lower index, NaN below numbers (k
        // selection passes here; the device ranks every value, same result).
        const TileValues &x = tile(op.getInput());
        std::vector<bool> taken(x.size(), false);
        TileValues values, indices;
        for (int64_t r = 0; r < static_cast<int64_t>(op.getK()); ++r) {
          int64_t best = -1;
          float bestValue = 0.0f;
          for (size_t i = 0; i < x.size(); ++i) {
            if (taken[i])
              continue;
            float v = x[i];
            if (best < 0 || (std::isnan(bestValue) && !std::isnan(v)) || v > bestValue) {
              best = static_cast<int64_t>(i);
              bestValue = v;
            }
          }
          taken[best] = true;
          values.push_back(bestValue);
          indices.push_back(static_cast<float>(best));
        }
        tiles[op.getValues()] = std::move(values);
        tiles[op.getIndices()] = std::move(indices);
        return success();
      })
      .Case<ExpertGroupsOp>([&](ExpertGroupsOp op) {
        // A walk over the places (the device counts slot starts in shared
        // memory: the same slots, exactly).
        const TileValues &experts = tile(op.getExperts());
        const int64_t n = static_cast<int64_t>(experts.size()), group = op.getGroup();
        TileValues expert(n, -1.0f), first(n, static_cast<float>(n)), count(n, 0.0f), row(n);
        int64_t slot = -1;
        for (int64_t q = 0; q < n; ++q) {
          if (q == 0 || experts[q] != experts[q - 1] || count[slot] == static_cast<float>(group)) {
            ++slot;
            expert[slot] = experts[q];
            first[slot] = static_cast<float>(q);
          }
          row[q] = static_cast<float>(slot * group + static_cast<int64_t>(count[slot]));
          count[slot] += 1.0f;
        }
        tiles[op.getSlotExpert()] = std::move(expert);
        tiles[op.getSlotFirst()] = std::move(first);
        tiles[op.getSlotCount()] = std::move(count);
        tiles[op.getPlaceRow()] = std::move(row);
        return success();
      })
      .Case<Exp2Op>([&](Operation *o) { return unary(o, [](float v) { return std::exp2(v); }); })
      .Case<SigmoidOp>([&](Operation *o) {
        return unary(o, [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
      })
      .Case<NegOp>([&](Operation *o) { return unary(o, [](float v) { return -v; }); })
      .Case<AbsOp>([&](Operation *o) { return unary(o, [](float v) { return std::fabs(v); }); })
      .Case<FloorOp>([&](Operation *o) { return unary(o, [](float v) { return std::floor(v); }); })
      .Case<ReduceOp>([&](ReduceOp r) {
        const TileValues &x = tile(r.getInput());
        if (!r.getShape()) {
          tiles[r.getResult()] = TileValues{reduce(x, r.getKind())};
          return success();
        }
        // Axis reductions: each result in index order (as the HIP printer).
        const int64_t cols = (*r.getShape())[1], rows = (*r.getShape())[0];
        const bool alongRows = *r.getAxis() == 1;
        TileValues out(alongRows ? rows : cols);
        for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
          float acc = r.getKind() == ReduceKind::Sum ? 0.0f
                                                     : -std::numeric_limits<float>::infinity();
          for (int64_t j = 0; j < (alongRows ? cols : rows); ++j) {
            float v = x[alongRows ? i * cols + j : j * cols + i];
            if (r.getKind() == ReduceKind::AbsMax)
              v = std::fabs(v);
            acc = r.getKind() == ReduceKind::Sum ? acc + v : deviceMax(acc, v);
          }
          out[i] = acc;
        }
        tiles[r.getResult()] = std::move(out);
        return success();
      })
      .Case<ExpandOp>([&](ExpandOp e) {
        const int64_t cols = e.getShape()[1];
        const bool alongRows = e.getAxis() == 1;
        const View in = view(e.getInput());
        TileValues out(sizeOf(e.getResult()));
        for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i)
          out[i] = in[alongRows ? i / cols : i % cols];
        tiles[e.getResult()] = std::move(out);
        return success();
      })
      .Case<SliceOp>([&](SliceOp sl) {
        TileValues out(sizeOf(sl.getResult()));
        const View in = view(sl.getInput());
        // SliceOp::sourceOf, its attributes read once rather than per value.
        const int64_t offset = sl.getOffset(), block = sl.getBlock(), stride = sl.getStride();
        for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i)
          out[i] = in[offset + (i / block) * stride + i % block];
        tiles[sl.getResult()] = std::move(out);
        return success();
      })
      .Case<InterleaveOp>([&](InterleaveOp op) {
        TileValues out(sizeOf(op.getResult()));
        for (size_t i = 0; i < out.size(); ++i)
          out[i] = at(i % 2 ? op.getB() : op.getA(), i / 2);
        tiles[op.getResult()] = std::move(out);
        return success();
      })
      .Case<ToIndexOp>([&](ToIndexOp op) -> LogicalResult {
        float v = at(op.getInput(), 0);
        if (!(v >= -1.0f) || v != std::floor(v) || v > 16777216.0f)
          return op.emitOpError() << "value " << v << " is not a whole number usable as an index";
        indices[op.getResult()] = static_cast<int64_t>(v);
        return success();
      })
      .Case<FmaOp>([&](FmaOp f) {
        TileValues out(sizeOf(f.getResult()));
        const View a = view(f.getA()), b = view(f.getB()), c = view(f.getC());
        for (size_t i = 0; i < out.size(); ++i)
          out[i] = std::fma(a[i], b[i], c[i]);
        tiles[f.getResult()] = std::move(out);
        return success();
      })
      .Case<QuantizeMxfp8Op>([&](QuantizeMxfp8Op q) {
        TileValues codes, scales;
        quantize(tile(q.getInput()), q.getVariant(), codes, scales);
        tiles[q.getCodes()] = std::move(codes);
        tiles[q.getScales()] = std::move(scales);
        return success();
      })
      .Case<AttendChunkOp>([&](AttendChunkOp a) { return attendChunk(a); })
      .Case<GemvRowsOp>([&](GemvRowsOp g) -> LogicalResult {
        const RegionInfo &weight = plan.region(g.getWeightAttr()), &x = plan.region(g.getXAttr());
        int64_t row0 = indices.lookup(g.getRow()), t0 = indices.lookup(g.getFirstToken());
        const int64_t count = g.getCount() ? indices.lookup(g.getCount()) : g.getTokens();
        if (count < 0 || count > g.getTokens())
          return g.emitOpError() << "count " << count << " is outside [0, " << g.getTokens()
                                 << "]";
        // Tokens past the count are not read: a task's rows may end the region.
        if (row0 < 0 || row0 + g.getOutputs() > weight.rows || t0 < 0 || t0 + count > x.rows)
          return g.emitOpError() << "reads weight rows [" << row0 << ", "
                                 << row0 + g.getOutputs() << ") or tokens [" << t0 << ", "
                                 << t0 + count << ") outside their regions";
        // Memoized on the tokens' bytes (and their scales'), over read-only
        // weights.
        std::string key;
        const RegionInfo *xScales = g.getXScales() ? &plan.region(g.getXScalesAttr()) : nullptr;
        const bool fixedWeights =
            !weight.writable &&
            !(g.getWeightScales() && plan.region(g.getWeightScalesAttr()).writable);
        const RegionStorage &xStorage = memory.region(x.index);
        const RegionStorage *xsStorage = xScales ? &memory.region(xScales->index) : nullptr;
        if (memo && fixedWeights && xStorage.format != StorageFormat::E2m1 &&
            (!xsStorage || xsStorage->format != StorageFormat::E2m1)) {
          appendKey(key, g.getOperation());
          appendKey(key, rank);
          appendKey(key, row0);
          appendKey(key, t0);
          appendKey(key, count);
          // Exactly the values the GEMV reads: tokens [t0, t0 + count) of k
          // values, and of k / 32 scales.
          const int64_t k = weight.cols;
          for (auto [r, perToken] : {std::pair(&xStorage, k), std::pair(xsStorage, k / 32)}) {
            if (!r)
              continue;
            const int64_t width = static_cast<int64_t>(r->bytes.size()) / r->elements();
            key.append(reinterpret_cast<const char *>(r->bytes.data()) + t0 * perToken * width,
                       count * perToken * width);
          }
          if (const std::vector<TileValues> *held = memo->find(key)) {
            tiles[g.getResult()] = (*held)[0];
            return success();
          }
        }
        // The weights as the prefetch read them, or read now; a count of 0
        // reads none.
        TileValues result;
        if (prefetchedRows) {
          result = gemvRows(g, *prefetchedRows, x, t0, count);
        } else {
          DecodedRows w;
          if (count > 0)
            decodeWeightRows(g, row0, w);
          result = gemvRows(g, w, x, t0, count);
        }
        if (!key.empty())
          memo->keep(std::move(key), {result});
        tiles[g.getResult()] = std::move(result);
        return success();
      })
      .Case<GemvOp>([&](GemvOp g) -> LogicalResult {
        const RegionInfo &weight = plan.region(g.getWeightAttr());
        int64_t row0 = indices.lookup(g.getRow());
        int64_t n = sizeOf(g.getResult());
        if (row0 < 0 || row0 + n > weight.rows)
          return g.emitOpError() << "reads weight rows [" << row0 << ", " << row0 + n
                                 << ") outside '" << weight.name << "'";
        tiles[g.getResult()] = gemv(g, weight, row0);
        return success();
      })
      // A task's ops run as one block without interleaving threads.
      .Case<SyncOp>([](SyncOp) { return success(); })
      .Default([](Operation *o) -> LogicalResult {
        return o->emitOpError() << "cannot be simulated";
      });
}


/// Picks the next CTA among those that may run.
class Scheduler {
public:
  Scheduler(const Schedule &schedule, int64_t ctas)
      : schedule(schedule), rng(schedule.seed), ctas(ctas) {
    if (schedule.policy == SchedulePolicy::RoundRobin ||
        schedule.policy == SchedulePolicy::Reverse) {
      const uint64_t n = static_cast<uint64_t>(ctas);
      last = static_cast<int64_t>(schedule.seed % n);
      // The seed's CTA goes first: start one before it (after it, reversed).
      last = schedule.policy == SchedulePolicy::RoundRobin ? last - 1 : last + 1;
      quantum = 1 + static_cast<int64_t>(schedule.seed / n % 3);
    }
    candidates.reserve(ctas);
  }

  /// -1 when no CTA can run.
  int64_t pick(const std::vector<char> &runnable) {
    auto nextFrom = [&](int64_t start, int64_t step, int64_t skip) -> int64_t {
      for (int64_t k = 0; k < ctas; ++k) {
        int64_t c = ((start + step * k) % ctas + ctas) % ctas;
        if (runnable[c] && c != skip)
          return c;
      }
      return -1;
    };
    auto randomOf = [&](int64_t skip) -> int64_t {
      candidates.clear();
      for (int64_t c = 0; c < ctas; ++c)
        if (runnable[c] && c != skip)
          candidates.push_back(c);
      if (candidates.empty())
        return -1;
      return candidates[std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(rng)];
    };
    switch (schedule.policy) {
    case SchedulePolicy::RoundRobin:
    case SchedulePolicy::Reverse: {
      // The CTA that ran last keeps its turn for `quantum` picks in a row.
      if (last >= 0 && last < ctas && runnable[last] && ++turnsInRow < quantum)
        return last;
      const int64_t step = schedule.policy == SchedulePolicy::RoundRobin ? 1 : -1;
      int64_t c = nextFrom(last + step, step, -1);
      if (c >= 0)
        last = c;
      turnsInRow = 0;
      return c;
    }
    case SchedulePolicy::Random:
      return randomOf(-1);
    case SchedulePolicy::StarveOne: {
      int64_t c = randomOf(schedule.starvedCta % ctas);
      return c >= 0 ? c : randomOf(-1);
    }
    }
    return -1;
  }

private:
  Schedule schedule;
  std::mt19937_64 rng;
  int64_t ctas;
  int64_t last = -1, quantum = 1, turnsInRow = 0;
  std::vector<int64_t> candidates;
};

} // namespace

const char *monodc::sim::policyName(SchedulePolicy policy) {
  switch (policy) {
  case SchedulePolicy::RoundRobin:
    return "round-robin";
  case SchedulePolicy::Reverse:
    return "reverse";
  case SchedulePolicy::Random:
    return "random";
  case SchedulePolicy::StarveOne:
    return "starve-one";
  }
  return "?";
}

std::string SimulationResult::describe() const {
  if (!deadlock)
    return "completed after " + std::to_string(steps) + " tasks";
  std::string text = "deadlock: " + std::to_string(waiters.size()) + " CTAs wait forever";
  for (const Waiter &w : waiters) {
    text += "\n  rank " + std::to_string(w.rank) + " CTA " + std::to_string(w.cta) +
            ", stage '" + w.stage + "', task " +
            std::to_string(w.task) + " waits on '" + w.flags + "' [" + std::to_string(w.first) +
            ", " + std::to_string(w.first + w.count) + ") for tag " +
            std::to_string(w.expectedTag) + " (data:";
    for (const std::string &r : w.regions)
      text += " '" + r + "'";
    text += "); flag " + std::to_string(w.blockingFlag) + " holds tag " +
            std::to_string(w.seenTag);
  }
  // What the GPU's bounded waits make of it.
  for (const Waiter &w : gaveUp)
    text += "\nthe budget runs out: rank " + std::to_string(w.rank) + " CTA " +
            std::to_string(w.cta) + " gives up at wait site " + std::to_string(w.site) + " ('" +
            w.stage + "' on '" + w.flags + "' flag " + std::to_string(w.blockingFlag) +
            ") and writes the rank's wait-fault record";
  if (!gaveUp.empty() && ended)
    text += "\nthe launch then ends (" + std::to_string(steps) + " tasks in all)";
  return text;
}

FailureOr<SimulationResult> monodc::sim::simulate(LaunchOp launch, LaunchMemory &memory,
                                                  const Schedule &schedule) {
  return simulateRanks(launch, {&memory}, schedule);
}

FailureOr<SimulationResult> monodc::sim::simulateRanks(LaunchOp launch,
                                                       const std::vector<LaunchMemory *> &memories,
                                                       const Schedule &schedule) {
  auto prepared = PreparedLaunch::prepare(launch);
  if (failed(prepared))
    return failure();
  return simulateRanks(**prepared, memories, schedule);
}

PreparedLaunch::PreparedLaunch(std::unique_ptr<Plan> plan) : plan_(std::move(plan)) {}
PreparedLaunch::~PreparedLaunch() = default;
LaunchOp PreparedLaunch::launch() const { return plan_->launch; }

FailureOr<std::unique_ptr<PreparedLaunch>> PreparedLaunch::prepare(LaunchOp launch) {
  auto plan = std::make_unique<Plan>();
  plan->launch = launch;
  auto tagOffset = launch->getAttrOfType<IntegerAttr>("mono.tag_offset");
  auto advance = launch->getAttrOfType<BoolAttr>("mono.advance_epoch");
  if (!tagOffset || !advance)
    return launch.emitOpError() << "is not synchronized; run the fusion passes first";
  plan->tagOffset = tagOffset.getInt();
  plan->advance = advance.getValue();
  plan->unfused = launch->hasAttr(MonoDialect::UnfusedAttrHelper::getNameStr());
  size_t index = 0;
  for (RegionOp region : launch.getBodyBlock().getOps<RegionOp>())
    plan->regions[region.getSymName()] = {region,           index++,
                                          region.getRows(), region.getCols(),
                                          region.holdsBytes(), region.isWritable(),
                                          region.getSymName(), region.getRowsAtLaunch(),
                                          region.getColsAtLaunch()};
  for (RegionOp region : launch.getBodyBlock().getOps<RegionOp>())
    if (region.getKind() == MemoryKind::Output)
      plan->outputs.push_back(&plan->region(region.getSymName()));
  if (!plan->regions.count("epoch"))
    return launch.emitOpError() << "is not synchronized; run the fusion passes first";
  for (auto [site, wait] : llvm::enumerate(waitSites(launch)))
    plan->waitSites[wait] = static_cast<int64_t>(site);
  plan->epochIndex = plan->region("epoch").index;
  plan->faultWord = epoch::faultWord(launch.getGrid());
  for (StageOp stage : launch.getBodyBlock().getOps<StageOp>()) {
    auto base = stage->getAttrOfType<IntegerAttr>("mono.base");
    if (!base)
      return stage.emitOpError() << "has no mono.base; run mono-place-tasks first";
    plan->stages.push_back(stage);
    plan->bases.push_back(base.getInt());
    auto claim = stage->getAttrOfType<IntegerAttr>("mono.claim");
    plan->claims.push_back(claim ? claim.getInt() : -1);
    const RegionInfo *publishes = nullptr;
    for (Operation &op : stage.getBodyBlock()) {
      if (auto publish = dyn_cast<PublishOp>(op); publish && !publishes)
        publishes = &plan->region(publish.getFlags());
      if (isa<WaitOp>(op) && op.hasAttr("mono.polled_once"))
        plan->polledOnce.insert(&op);
      // As the HIP printer places a prefetch: before the first wait of a
      // run that a gemv_rows marked mono.prefetched follows.
      if (!isa<WaitOp, WaitPeerOp>(op) ||
          (op.getPrevNode() && isa<WaitOp, WaitPeerOp>(op.getPrevNode())))
        continue;
      Operation *next = op.getNextNode();
      while (next && isa<WaitOp, WaitPeerOp, SyncOp>(next))
        next = next->getNextNode();
      if (auto g = dyn_cast_or_null<GemvRowsOp>(next); g && g->hasAttr("mono.prefetched"))
        plan->prefetchAt[&op] = g;
    }
    plan->publishFlags[stage] = publishes;
  }
  return std::unique_ptr<PreparedLaunch>(new PreparedLaunch(std::move(plan)));
}

namespace {
FailureOr<SimulationResult> runSchedule(const Plan &plan, const WeightCache *cache,
                                        OpMemo *memo, const std::vector<LaunchMemory *> &memories,
                                        const Schedule &schedule);
} // namespace

FailureOr<SimulationResult> monodc::sim::simulateRanks(const PreparedLaunch &prepared,
                                                       const std::vector<LaunchMemory *> &memories,
                                                       const Schedule &schedule) {
  return runSchedule(prepared.plan(), nullptr, nullptr, memories, schedule);
}

namespace {

FailureOr<SimulationResult> runSchedule(const Plan &plan, const WeightCache *cache,
                                        OpMemo *memo, const std::vector<LaunchMemory *> &memories,
                                        const Schedule &schedule) {
  LaunchOp launch = plan.launch;
  if (static_cast<int64_t>(memories.size()) != launch.getRanks())
    return launch.emitOpError() << "runs on " << launch.getRanks() << " ranks, given "
                                << memories.size() << " memories";
  const int64_t grid = launch.getGrid(), ranks = launch.getRanks();
  const auto &stages = plan.stages;
  const std::vector<int64_t> &bases = plan.bases, &claims = plan.claims;
  const size_t epochIndex = plan.region("epoch").index;
  const int64_t countersBase = epoch::countersWord(grid);
  auto counterWord = [&](uint64_t e, int64_t slot) {
    return countersBase + static_cast<int64_t>((epoch::kClaimsPerStep * e + slot) % epoch::kCounterSlots);
  };

  // Per rank: its epoch (read once, as every CTA does at its start), its tag
  // and an interpreter over its memory.
  std::vector<uint32_t> epochs;
  std::vector<TaskInterpreter> interpreters;
  for (int64_t r = 0; r < ranks; ++r) {
    uint32_t e = static_cast<uint32_t>(memories[r]->region(epochIndex).word(epoch::kEpochWord));
    epochs.push_back(e);
    interpreters.emplace_back(plan, cache, memo, memories, r,
                              2u * e + static_cast<uint32_t>(plan.tagOffset));
  }
  const int64_t slots = ranks * grid;
  std::vector<CtaState> ctas(slots);
  std::vector<char> runnable(slots, 1);
  std::vector<Waiter> waiting(slots);
  std::vector<int64_t> arrivals(ranks, 0);
  // CTAs of each rank that have left each stage (the unfused baseline's
  // stream order waits on them).
  std::vector<int64_t> left(ranks * stages.size(), 0);
  // The relaxed atomic add of a dynamic stage's counter (this step's slot):
  // the counter's value before adding `n`.
  auto claim = [&](int64_t r, size_t stage, uint64_t n) -> int64_t {
    RegionStorage &words = memories[r]->region(epochIndex);
    const int64_t word =
        counterWord(epochs[r], epoch::claimInStep(plan.tagOffset, claims[stage]));
    const uint64_t task = words.word(word);
    words.setWord(word, task + n);
    return static_cast<int64_t>(task);
  };
  Scheduler scheduler(schedule, slots);
  SimulationResult result;
  int64_t turn = 0;                         // the scheduler's picks so far
  std::vector<int64_t> blockedAt(slots, -1); // the turn a CTA's poll blocked

  // Runs CTA c of rank r (slot k) until it blocks, finishes a task, or ends
  // the launch.
  auto stepCta = [&](int64_t k) -> StepResult {
    const int64_t r = k / grid, c = k % grid;
    CtaState &cta = ctas[k];
    RegionStorage &epochWords = memories[r]->region(epochIndex);
    bool leftAStage = false;
    while (cta.task < 0) {
      if (plan.unfused && cta.stage > 0 && left[r * stages.size() + cta.stage - 1] < grid) {
        // The next stage's kernel starts once the previous one has ended.
        Waiter &w = waiting[k];
        w = {};
        w.rank = r;
        w.cta = c;
        StageOp previous = stages[cta.stage - 1];
        w.stage = cta.stage < stages.size() ? StageOp(stages[cta.stage]).getSymName().str()
                                            : "(end)";
        w.task = -1;
        w.flags = "(the stream: stage '" + previous.getSymName().str() +
                  "' has CTAs still running)";
        // Having left a stage is progress that may release the others.
        return leftAStage ? StepResult::Progress : StepResult::Blocked;
      }
      if (cta.stage == stages.size()) {
        // Epoch end: mark arrival; the last CTA of the rank zeroes the task
        // counters half a ring ahead and moves e on.
        epochWords.setWord(epoch::kMarks + c, epochs[r] + 1);
        if (plan.advance && ++arrivals[r] == grid) {
          for (int64_t j = 0; j < epoch::kClaimsPerStep; ++j)
            epochWords.setWord(counterWord(epochs[r] + epoch::kZeroAhead, j), 0);
          epochWords.setWord(epoch::kEpochWord, epochs[r] + 1);
        }
        cta.done = true;
        return StepResult::Done;
      }
      StageOp stage = stages[cta.stage];
      // Task t of a stage runs on CTA (base + t) mod G. A dynamic stage's
      // CTA claims as mono_claim_task does: its first claim takes two
      // consecutive tasks with one add, runs the first and holds the second.
      int64_t first;
      if (claims[cta.stage] >= 0) {
        first = claim(r, cta.stage, 2);
        cta.ahead = first + 1;
      } else {
        first = ((c - bases[cta.stage]) % grid + grid) % grid;
      }
      if (first >= stage.getTasks()) {
        ++left[r * stages.size() + cta.stage];
        leftAStage = true;
        ++cta.stage;
        continue;
      }
      cta.startTask(stage, first);
    }
    StageOp stage = stages[cta.stage];
    Waiter &w = waiting[k];
    if (schedule.trace)
      result.trace.push_back({r, c, stage.getSymName().str(), cta.task, "", turn, turn + 1});
    StepResult result_ = interpreters[r].resume(cta, stage, &w);
    if (result_ == StepResult::Blocked) {
      w.rank = r;
      w.cta = c;
      w.stage = stage.getSymName().str();
      w.task = cta.task;
      return result_;
    }
    if (result_ == StepResult::Error)
      return result_;
    // Task finished: the CTA's next task of this stage is G further on, or
    // (a dynamic stage) the one it holds, while it claims the one after.
    ++result.steps;
    int64_t next = cta.task + grid;
    if (claims[cta.stage] >= 0) {
      next = cta.ahead;
      cta.ahead = claim(r, cta.stage, 1);
    }
    if (next < stage.getTasks()) {
      cta.startTask(stage, next);
    } else {
      cta.task = -1;
      cta.pc = Block::iterator();
      ++left[r * stages.size() + cta.stage];
      ++cta.stage;
    }
    return StepResult::Progress;
  };

  int64_t live = slots;
  if (schedule.lostRank >= 0 && schedule.lostRank < ranks)
    for (int64_t c = 0; c < grid; ++c) {
      ctas[schedule.lostRank * grid + c].done = true;
      runnable[schedule.lostRank * grid + c] = 0;
      --live;
    }
  while (live > 0) {
    int64_t k = scheduler.pick(runnable);
    if (k < 0) {
      if (!result.deadlock) {
        result.deadlock = true;
        for (int64_t j = 0; j < slots; ++j)
          if (!ctas[j].done)
            result.waiters.push_back(waiting[j]);
      }
      // Every blocked poll's budget runs out: on each rank that has one, the
      // poll that blocked first writes the record, and the rank's polls give
      // up from then on. A rank blocked only on the stream has none: it goes
      // on once the ranks' stage kernels end.
      std::vector<int64_t> first(ranks, -1);
      for (int64_t j = 0; j < slots; ++j) {
        const int64_t r = j / grid;
        if (ctas[j].done || waiting[j].site < 0)
          continue;
        if (first[r] < 0 || blockedAt[j] < blockedAt[first[r]])
          first[r] = j;
      }
      bool anyGaveUp = false;
      for (int64_t r = 0; r < ranks; ++r) {
        if (first[r] < 0)
          continue;
        const Waiter &w = waiting[first[r]];
        RegionStorage &words = memories[r]->region(epochIndex);
        const int64_t f = plan.faultWord;
        words.setWord(f + MONO_FAULT_STATE, 1);
        words.setWord(f + MONO_FAULT_RANK, static_cast<uint64_t>(r));
        words.setWord(f + MONO_FAULT_CTA, static_cast<uint64_t>(w.cta));
        words.setWord(f + MONO_FAULT_SITE, static_cast<uint64_t>(w.site));
        words.setWord(f + MONO_FAULT_FLAG, static_cast<uint64_t>(w.blockingFlag));
        words.setWord(f + MONO_FAULT_EXPECTED, w.expectedTag);
        words.setWord(f + MONO_FAULT_SEEN, w.seenTag);
        result.gaveUp.push_back(w);
        anyGaveUp = true;
      }
      if (!anyGaveUp)
        return result;
      for (int64_t j = 0; j < slots; ++j)
        runnable[j] = !ctas[j].done;
      continue;
    }
    if (schedule.trace && blockedAt[k] >= 0) {
      const Waiter &w = waiting[k];
      result.trace.push_back({w.rank, w.cta, w.stage, w.task, w.flags, blockedAt[k], turn});
      blockedAt[k] = -1;
    }
    StepResult r = stepCta(k);
    ++turn;
    if (r == StepResult::Error)
      return failure();
    if (r == StepResult::Blocked) {
      runnable[k] = 0;
      blockedAt[k] = turn;
      continue;
    }
    // Progress may satisfy anyone's poll: every waiting CTA may try again.
    for (int64_t j = 0; j < slots; ++j)
      runnable[j] = !ctas[j].done;
    if (r == StepResult::Done)
      --live;
  }
  result.ended = true;
  return result;
}

} // namespace

Schedule monodc::sim::sweepSchedule(int64_t i, uint64_t seed, int64_t ctas) {
  const int64_t j = i / 4;
  // Distinct seeds for the seeded schedules of distinct sweep seeds.
  const uint64_t mixed = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i);
  switch (i % 4) {
  case 0:
    return {SchedulePolicy::RoundRobin, static_cast<uint64_t>(j), 0};
  case 1:
    return {SchedulePolicy::Reverse, static_cast<uint64_t>(j), 0};
  case 2:
    return {SchedulePolicy::StarveOne, mixed, j % ctas};
  default:
    return {SchedulePolicy::Random, mixed, 0};
  }
}

namespace {

/// FNV-1a over a schedule's outputs: counts distinct outcomes without
/// keeping each one (equality with schedule 0 is checked byte for byte).
uint64_t hashOutputs(const std::vector<std::unique_ptr<LaunchMemory>> &memories,
                     const std::vector<const RegionInfo *> &outputs) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto &memory : memories)
    for (const RegionInfo *region : outputs)
      for (uint8_t byte : memory->region(region->index).bytes)
        h = (h ^ byte) * 0x100000001b3ull;
  return h;
}

} // namespace

SweepResult monodc::sim::sweepSchedules(const PreparedLaunch &prepared,
                                        const std::vector<const LaunchMemory *> &inputs,
                                        const SweepOptions &options) {
  const Plan &plan = prepared.plan();
  LaunchOp launch = plan.launch;
  const int64_t ranks = launch.getRanks(), ctas = ranks * launch.getGrid();
  SweepResult sweep;
  if (options.trace)
    sweep.traces.resize(options.schedules);
  std::mutex mutex; // guards sweep and the sets below
  std::vector<uint64_t> differing; // hashes of outcomes other than schedule 0's
  // The read-only gemv_rows weights of every rank, decoded once.
  WeightCache cache;
  int64_t cached = 0;
  for (int64_t r = 0; r < ranks; ++r)
    for (StageOp stage : plan.stages)
      for (GemvRowsOp g : stage.getBodyBlock().getOps<GemvRowsOp>()) {
        const RegionInfo &weight = plan.region(g.getWeightAttr());
        const RegionInfo *scales = g.getWeightScales() ? &plan.region(g.getWeightScalesAttr()) : nullptr;
        if (weight.writable || (scales && scales->writable))
          continue;
        const RegionStorage &w = inputs[r]->region(weight.index);
        const RegionStorage *ws = scales ? &inputs[r]->region(scales->index) : nullptr;
        const int64_t k = weight.cols, scalesPerRow = (k + 31) / 32;
        if (cache.entries.count({&w, ws}) ||
            cached + weight.rows * (k + scalesPerRow) > WeightCache::kMaxValues)
          continue;
        WeightCache::Entry &entry = cache.entries[{&w, ws}];
        entry.values.resize(weight.rows * k);
        entry.scales.assign(weight.rows * scalesPerRow, 1.0f);
        decodeRows(w, ws, weight.rows, k, 0, weight.rows, entry.values.data(), entry.scales.data());
        cached += weight.rows * (k + scalesPerRow);
      }

  std::atomic<int64_t> next{1}, completed{0};
  std::atomic<bool> stop{false};

  // Runs schedule i on fresh memories; false when it failed (recorded).
  // A thread's memories from its previous schedule are zeroed and reused.
  auto run = [&](int64_t i, std::vector<std::unique_ptr<LaunchMemory>> &memories, OpMemo &memo) {
    std::vector<LaunchMemory *> pointers;
    for (int64_t r = 0; r < ranks; ++r) {
      if (static_cast<int64_t>(memories.size()) <= r) {
        memories.push_back(std::make_unique<LaunchMemory>(launch));
        if (llvm::Error e = memories.back()->shareReadOnly(*inputs[r]))
          llvm::report_fatal_error(std::move(e));
      } else {
        memories[r]->zeroWritable();
      }
      pointers.push_back(memories[r].get());
    }
    Schedule schedule = sweepSchedule(i, options.seed, ctas);
    schedule.trace = options.trace;
    schedule.lostRank = options.lostRank;
    auto result = runSchedule(plan, &cache, &memo, pointers, schedule);
    std::string failure;
    if (failed(result))
      failure = "simulation failed";
    else if (result->deadlock)
      failure = result->describe();
    std::lock_guard<std::mutex> lock(mutex);
    if (!failure.empty()) {
      if (sweep.failedSchedule < 0 || i < sweep.failedSchedule) {
        sweep.failedSchedule = i;
        sweep.failure = "schedule " + std::to_string(i) + " (" + policyName(schedule.policy) +
                        "): " + failure;
      }
      stop = true;
      return false;
    }
    if (options.trace)
      sweep.traces[i] = std::move(result->trace);
    ++completed;
    return true;
  };

  // Schedule 0 first: every other is compared with it.
  OpMemo firstMemo;
  if (options.schedules < 1 || !run(0, sweep.first, firstMemo))
    return sweep;
  auto compare = [&](int64_t i, const std::vector<std::unique_ptr<LaunchMemory>> &memories) {
    for (int64_t r = 0; r < ranks; ++r)
      for (const RegionInfo *region : plan.outputs) {
        if (memories[r]->region(region->index).bytes ==
            sweep.first[r]->region(region->index).bytes)
          continue;
        const uint64_t h = hashOutputs(memories, plan.outputs);
        std::lock_guard<std::mutex> lock(mutex);
        differing.push_back(h);
        if (sweep.firstDiffering < 0 || i < sweep.firstDiffering) {
          sweep.firstDiffering = i;
          sweep.differingRegion = region->name.str();
          sweep.differingRank = r;
        }
        return;
      }
  };
  auto worker = [&](OpMemo &memo) {
    std::vector<std::unique_ptr<LaunchMemory>> memories;
    for (int64_t i; !stop && (i = next++) < options.schedules;)
      if (run(i, memories, memo))
        compare(i, memories);
  };
  const unsigned threads =
      std::max(1u, std::min<unsigned>(options.threads, static_cast<unsigned>(options.schedules)));
  // Each thread its own memo; this one goes on with schedule 0's.
  std::vector<OpMemo> memos(threads - 1);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker, std::ref(memos[t - 1]));
  worker(firstMemo);
  for (std::thread &t : pool)
    t.join();

  sweep.schedules = completed;
  llvm::sort(differing);
  sweep.outcomes = 1 + (std::unique(differing.begin(), differing.end()) - differing.begin());
  return sweep;
}
