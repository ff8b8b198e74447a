//===- Task.h - task bodies: indices, tiles and tile ops --------*- C++ -*-===//
#ifndef MONODC_DSL_TASK_H
#define MONODC_DSL_TASK_H

#include "monodc/dsl/DType.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <string>
#include <vector>

namespace monodc::dsl {

class Launch;
class Task;

/// A handle to a region declared by a Launch.
class Region {
public:
  Region() = default;
  const std::string &name() const { return regionName; }
  DType dtype() const { return type; }
  const std::vector<int64_t> &shape() const { return extents; }
  int64_t rows() const { return extents.size() == 2 ? extents[0] : 1; }
  int64_t cols() const { return extents.empty() ? 0 : extents.back(); }
  bool writable() const { return isWritable; }
  /// An index input's bound (its values are below it); 0 for other regions.
  int64_t indexBound() const { return bound; }
  /// The caller gives the row count at each launch (a KV cache's pages);
  /// rows() is then the count a simulation allocates unless told otherwise.
  bool rowsAtLaunch() const { return launchRows; }
  /// The caller gives the column count at each launch (a block table's
  /// pages a row); cols() is then the count a simulation allocates unless
  /// told otherwise.
  bool colsAtLaunch() const { return launchCols; }

private:
  friend class Launch;
  Launch *owner = nullptr;
  std::string regionName;
  DType type = DType::F32;
  std::vector<int64_t> extents;
  bool isWritable = false;
  int64_t bound = 0;
  bool launchRows = false;
  bool launchCols = false;
};

/// An index value inside a task (the task id and arithmetic on it).
class Index {
public:
  Index(Task *task, mlir::Value value) : task(task), value(value) {}
  mlir::Value get() const { return value; }
  friend Index operator+(Index a, Index b);
  friend Index operator+(Index a, int64_t b);
  friend Index operator*(Index a, int64_t b);
  friend Index operator/(Index a, int64_t b);
  friend Index operator%(Index a, int64_t b);

private:
  Task *task;
  mlir::Value value;
};

/// A block-distributed vector of values; arithmetic is f32 only, so a
/// narrower tile must be cast with to(f32) first. A size-1 tile broadcasts.
/// A tile whose building failed is empty (no value) and poisons what uses it.
class Tile {
public:
  Tile() = default;
  Tile(Task *task, mlir::Value value) : task(task), value(value) {}
  bool valid() const { return static_cast<bool>(value); }
  mlir::Value get() const { return value; }
  int64_t size() const;
  DType dtype() const;
  Task *owner() const { return task; }

  /// Values offset, offset + stride, ... (count of them); with `block` B,
  /// runs of B consecutive values every `stride` (value i from
  /// offset + (i / B) * stride + i % B).
  Tile slice(int64_t offset, int64_t count, int64_t stride = 1, int64_t block = 1) const;
  /// Value i as a size-1 (uniform) tile.
  Tile at(int64_t i) const { return slice(i, 1); }

  /// Converts to another number format (one rounding, RNE; saturating to
  /// e4m3/e2m1).
  Tile to(DType type) const;

private:
  Task *task = nullptr;
  mlir::Value value;
};

Tile operator+(const Tile &a, const Tile &b);
Tile operator-(const Tile &a, const Tile &b);
Tile operator*(const Tile &a, const Tile &b);
Tile operator/(const Tile &a, const Tile &b);
Tile operator+(const Tile &a, float b);
Tile operator-(const Tile &a, float b);
Tile operator*(const Tile &a, float b);
Tile operator/(const Tile &a, float b);
Tile operator*(float a, const Tile &b);
Tile operator-(const Tile &a);
Tile max(const Tile &a, const Tile &b);
Tile min(const Tile &a, const Tile &b);
Tile rsqrt(const Tile &x);
Tile exp(const Tile &x);
Tile log(const Tile &x);
/// Elementwise a > b ? x : y, a < b ? x : y (false for NaN), and x with its
/// NaNs replaced.
Tile selectGreater(const Tile &a, const Tile &b, const Tile &x, const Tile &y);
Tile selectLess(const Tile &a, const Tile &b, const Tile &x, const Tile &y);
Tile replaceNan(const Tile &x, float value);
/// The k largest values (descending, ties to the lower index, NaN last) and
/// their indices as exact f32.
struct TopK {
  Tile values, indices;
};
TopK topk(const Tile &x, int64_t k);
/// Slots of at most `group` consecutive places that share an expert (the
/// places' experts in `experts`, one expert's places together): per slot its
/// expert (-1 past the last slot), first place and count; per place its row
/// in buffers of `group` rows a slot. See mono.expert_groups.
struct ExpertGroups {
  Tile slotExpert, slotFirst, slotCount, placeRow;
};
ExpertGroups expertGroups(const Tile &experts, int64_t group);
/// result[2i] = a[i], result[2i + 1] = b[i].
Tile interleave(const Tile &a, const Tile &b);
/// result[i] = table[indices[i]].
Tile gather(const Tile &table, const Tile &indices);
/// a * b + c with one rounding.
Tile fma(const Tile &a, const Tile &b, const Tile &c);
/// Reductions of a tile read as [rows, cols] along an axis (1: per row).
Tile sumAlong(const Tile &x, int64_t rows, int64_t cols, int64_t axis);
Tile maxAlong(const Tile &x, int64_t rows, int64_t cols, int64_t axis);
/// The inverse: repeat per-row (axis 1) or per-column (axis 0) values.
Tile expand(const Tile &x, int64_t rows, int64_t cols, int64_t axis);
Tile sqrt(const Tile &x);
Tile exp2(const Tile &x);
Tile sigmoid(const Tile &x);
Tile abs(const Tile &x);
/// The largest whole number <= x (key arithmetic: a position's page).
Tile floor(const Tile &x);
/// Reductions to a size-1 (uniform) tile.
Tile sum(const Tile &x);
Tile maxOf(const Tile &x);
Tile absMax(const Tile &x);

/// Standard and Routed quantize 32-value groups (docs/numerics.md section 2);
/// KvRecord 64-value groups with amax floored at 1e-4 (the KV record).
enum class Mxfp8Flavour { Standard, Routed, KvRecord };

/// What a task whose count is 0 skips (Task::skipUnless): its own work, or
/// its own and that of every later task of the stage (higher ids), which
/// then need not be taken one at a time; PadRow: its own work, which is a
/// pad row's (count 0 where slot_mapping is -1), whose rows no real row
/// reads, so later stages may read what it stores at any rows.
enum class SkipScope { ThisTask, ThisAndLaterTasks, PadRow };

/// An MXFP8 row: e4m3 codes and one e8m0 scale per 32 values.
struct Mxfp8Tile {
  Tile codes;
  Tile scales;
};

/// Split-K attention state of query heads over a chunk of keys (base 2):
/// running max m and sum l per head, and p = sum 2^(t - m) k per head.
struct AttentionState {
  Tile m, l, p;
};

/// The program of one task of a stage.
class Task {
public:
  Task(Launch &launch, std::string stage, mlir::OpBuilder &builder, mlir::Value id)
      : launch(launch), stageName(std::move(stage)), builder(builder), taskId(id) {}

  Index id() { return Index(this, taskId); }
  Index index(int64_t value);

  /// `size` consecutive values of `region` starting at (row, col).
  Tile load(const Region &region, Index row, Index col, int64_t size);
  Tile load(const Region &region, Index row, int64_t col, int64_t size);
  /// A whole row.
  Tile loadRow(const Region &region, Index row);
  void store(const Region &region, Index row, Index col, const Tile &value);
  void store(const Region &region, Index row, int64_t col, const Tile &value);
  /// A store skipped when `guard` is negative (a pad slot). Its address may
  /// depend on data; only an output no stage of this launch reads may be
  /// written so.
  void storeIf(Index guard, const Region &region, Index row, Index col, const Tile &value);
  /// The rest of the task runs only when `count` > 0: a task with nothing to
  /// do (an empty slot) skips its work and still publishes. Once a task, no
  /// peer store after it. Later stages read what the task stores after it
  /// at rows given by data, or through a gemv_rows counted by the same
  /// loaded word (see mono.skip_unless). ThisAndLaterTasks promises that
  /// every later task skips too (the simulator checks it).
  void skipUnless(Index count, SkipScope scope = SkipScope::ThisTask);
  /// `size` values of format `type` at byte `col` of a byte region's row.
  Tile loadBytes(const Region &region, DType type, Index row, Index col, int64_t size);

  /// Stores a tile of `rows` rows (row-major, size / rows values each) at
  /// rows [row, row + rows) from column `col`.
  void storeRows(const Region &region, Index row, Index col, int64_t rows, const Tile &value);
  /// The same for rows [row, row + count) only (a runtime number, 0 ..
  /// rows): the others keep what they held. Later stages of the launch may
  /// read such a region only at rows given by data (see mono.store).
  void storeRows(const Region &region, Index row, Index col, int64_t rows, const Tile &value,
                 Index count);

  /// Peer memory: a store into rank `rank`'s buffer (in this rank's slot),
  /// and a load of the slot rank `rank` wrote in this rank's buffer.
  void storePeer(const Region &region, int64_t rank, Index row, int64_t col, const Tile &value);
  Tile loadPeer(const Region &region, int64_t rank, Index row, int64_t col, int64_t size);

  Tile constant(float value, int64_t size = 1);
  /// The row count of `region` as a one-value tile: the count the caller
  /// gave at this launch for a region sized at launch, its fixed rows else.
  Tile rowsOf(const Region &region);
  /// The column count of `region` as a one-value tile: the count the caller
  /// gave at this launch for a region whose columns are given at launch,
  /// its fixed columns else.
  Tile colsOf(const Region &region);
  /// result[i] = region[row][cols[i]]: an index input's entries at columns
  /// given by data (whole numbers; one outside the row is clamped into it).
  /// The only read of a region whose columns are given at launch.
  Tile loadAt(const Region &region, Index row, const Tile &cols);
  /// start, start + 1, ..., start + size - 1 (the places of a chunk's keys).
  Tile iota(Index start, int64_t size);
  /// A whole number held in a size-1 tile (a position), as an index for
  /// addressing tables. As the row of a load of memory an earlier stage
  /// hands over, it makes the load wait for the whole producer stage (every
  /// row must be written); never as a column of such memory.
  Index toIndex(const Tile &value);
  Mxfp8Tile quantizeMxfp8(const Tile &x, Mxfp8Flavour flavour = Mxfp8Flavour::Standard);

  /// `rows` dot products of x with weight rows [row, row + rows): an MXFP8
  /// activation against an e4m3 weight with its 32x32 E8M0 block scales.
  Tile gemv(const Region &weight, const Region &weightScales, Index row, int64_t rows,
            const Mxfp8Tile &x);
  /// `outputs` dot products for each of `tokens` activation rows of the
  /// regions `x` (e4m3 codes) and `xScales` (e8m0 per 32), from row
  /// `firstToken`, with weight rows [row, row + outputs): the weights are
  /// streamed once for all tokens. The result is token-major. An e2m1 weight
  /// (MXFP4) is read in AITER's shuffled layouts (see mono.gemv_rows).
  Tile gemvRows(const Region &weight, const Region &weightScales, Index row, int64_t outputs,
                const Region &x, const Region &xScales, Index firstToken, int64_t tokens);
  /// The same for the first `count` tokens only (a runtime number, 0 ..
  /// tokens): the others' results are 0, and a count of 0 reads no weights.
  Tile gemvRows(const Region &weight, const Region &weightScales, Index row, int64_t outputs,
                const Region &x, const Region &xScales, Index firstToken, int64_t tokens,
                Index count);
  /// The same against a bf16 or f32 weight with a bf16 or f32 activation.
  Tile gemvRows(const Region &weight, Index row, int64_t outputs, const Region &x,
                Index firstToken, int64_t tokens);
  /// Attention of `heads` query heads (bf16, `headDim` values each, from
  /// column `col` of row `row` of `q`) over the keys at `slots` (f32 whole
  /// numbers, -1 masked) of byte region `cache`, a KV-record cache whose
  /// records end in `ropeDim` bf16 dims. See mono.attend_chunk.
  AttentionState attendChunk(const Region &q, Index row, Index col, int64_t heads,
                             int64_t headDim, int64_t ropeDim, const Region &cache,
                             const Tile &slots);
  /// The same against a bf16 weight (f32 or bf16 activation).
  Tile gemv(const Region &weight, Index row, int64_t rows, const Tile &x);

  // Used by the free functions on tiles.
  mlir::OpBuilder &b() { return builder; }
  void fail(const std::string &message);
  Tile asF32Operand(const Tile &tile, const char *what);
  const std::string &stage() const { return stageName; }

private:
  bool checkRegion(const Region &region, const char *verb);
  /// Both storeRows forms; a null `count` stores every row.
  void storeRowsCounted(const Region &region, Index row, Index col, int64_t rows,
                        const Tile &value, mlir::Value count);
  /// Both scaled gemvRows forms; a null `count` computes every token.
  Tile scaledGemvRows(const Region &weight, const Region &weightScales, Index row, int64_t outputs,
                      const Region &x, const Region &xScales, Index firstToken, int64_t tokens,
                      mlir::Value count);

  Launch &launch;
  std::string stageName;
  mlir::OpBuilder &builder;
  bool skips = false;  ///< a skipUnless was given
  mlir::Value taskId;
};

} // namespace monodc::dsl

#endif // MONODC_DSL_TASK_H
