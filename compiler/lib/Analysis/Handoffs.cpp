//===- Handoffs.cpp - who writes what a stage reads -----------------------===//
#include "monodc/Analysis/Handoffs.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace monodc::mono;

FailureOr<llvm::DenseMap<Value, int64_t>> monodc::mono::evaluateIndices(StageOp stage,
                                                                        int64_t task) {
  llvm::DenseMap<Value, int64_t> values;
  values[stage.getTaskIndex()] = task;
  for (Operation &op : stage.getBodyBlock()) {
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      if (auto i = dyn_cast<IntegerAttr>(c.getValue()); i && c.getType().isIndex())
        values[c.getResult()] = i.getInt();
      continue;
    }
    if (!isa<arith::ArithDialect>(op.getDialect()) || op.getNumOperands() != 2)
      continue;
    // Data-dependent indices (mono.to_index) stay unknown, and so does
    // everything computed from them.
    if (!values.count(op.getOperand(0)) || !values.count(op.getOperand(1)))
      continue;
    int64_t a = values.lookup(op.getOperand(0)), b = values.lookup(op.getOperand(1));
    if (isa<arith::DivUIOp, arith::DivSIOp, arith::RemUIOp, arith::RemSIOp>(op) && b == 0)
      return op.emitOpError() << "divides by zero for task " << task;
    std::optional<int64_t> r = llvm::TypeSwitch<Operation *, std::optional<int64_t>>(&op)
                                   .Case<arith::AddIOp>([&](auto) { return a + b; })
                                   .Case<arith::SubIOp>([&](auto) { return a - b; })
                                   .Case<arith::MulIOp>([&](auto) { return a * b; })
                                   .Case<arith::DivUIOp, arith::DivSIOp>([&](auto) { return a / b; })
                                   .Case<arith::RemUIOp, arith::RemSIOp>([&](auto) { return a % b; })
                                   .Default([](auto) { return std::nullopt; });
    if (!r)
      return op.emitOpError() << "is not an index operation the analysis can evaluate";
    values[op.getResult(0)] = *r;
  }
  return values;
}

namespace {

struct Write {
  int64_t col, end, task;
  int64_t dest = -1; ///< the rank a peer store writes to; -1 for local memory
};

/// Every window a stage writes, per region and row.
using WriteMap = std::map<std::string, std::map<int64_t, std::vector<Write>>>;

/// One read of a region: `rows` rows from `row`, `size` values from `col`
/// (a null col is column 0); `peerRank` the slot a peer load reads. Rows
/// [row, row + rows) of the op's index space are rows [row / rowDiv,
/// (row + rows - 1) / rowDiv] of the region (a scale row covers rowDiv weight
/// rows), widened to whole groups of `rowGroup` rows (a layout that permutes
/// rows within such groups). A null row is a row from data (any row), or,
/// with `everyRow`, every row of the region (a layout the analysis does not
/// follow row by row).
struct Read {
  RegionOp region;
  Value row, col;
  int64_t rows, size;
  int64_t peerRank = -1;
  int64_t rowDiv = 1, rowGroup = 1;
  bool everyRow = false;
};

/// The region reads of an op: loads, and what a gemv_rows streams: its
/// activations and their scales, its weight rows and their scales.
SmallVector<Read> readsOf(Operation &op) {
  SmallVector<Read> reads;
  if (auto load = dyn_cast<LoadOp>(op)) {
    if (RegionOp r = lookupRegion(load, load.getRegionAttr()))
      reads.push_back({r, load.getRow(), load.getCol(), 1, tileSize(load.getResult())});
  } else if (auto load = dyn_cast<LoadAtOp>(op)) {
    // Columns from data: the whole row.
    if (RegionOp r = lookupRegion(load, load.getRegionAttr()))
      reads.push_back({r, load.getRow(), Value(), 1, r.getCols()});
  } else if (auto load = dyn_cast<LoadPeerOp>(op)) {
    if (RegionOp r = lookupRegion(load, load.getRegionAttr()))
      reads.push_back({r, load.getRow(), load.getCol(), 1, tileSize(load.getResult()),
                       static_cast<int64_t>(load.getRank())});
  } else if (auto attend = dyn_cast<AttendChunkOp>(op)) {
    if (RegionOp q = lookupRegion(attend, attend.getQAttr()))
      reads.push_back({q, attend.getRow(), attend.getCol(), 1, tileSize(attend.getP())});
    // The keys' rows come from data (the slots): no known row.
    if (RegionOp cache = lookupRegion(attend, attend.getCacheAttr()))
      reads.push_back({cache, Value(), Value(), 1, cache.getCols()});
  } else if (auto gemv = dyn_cast<GemvRowsOp>(op)) {
    for (FlatSymbolRefAttr name : {gemv.getXAttr(), gemv.getXScalesAttr()})
      if (RegionOp r = name ? lookupRegion(gemv, name) : RegionOp())
        reads.push_back({r, gemv.getFirstToken(), Value(), static_cast<int64_t>(gemv.getTokens()),
                         r.getCols()});
    // Weights are read-only in every shipped launch, but a weight operand may
    // name scratch a stage writes: then it is a hand-off like any other read.
    RegionOp weight = lookupRegion(gemv, gemv.getWeightAttr());
    if (!weight)
      return reads;
    const bool mxfp4 = isa<Float4E2M1FNType>(weight.getElementType());
    Read w{weight, gemv.getRow(), Value(), gemv.getOutputs(), weight.getCols()};
    w.rowGroup = mxfp4 ? 16 : 1; // AITER's shuffle permutes rows within 16-row groups
    reads.push_back(w);
    if (RegionOp scales = gemv.getWeightScalesAttr() ? lookupRegion(gemv, gemv.getWeightScalesAttr())
                                                     : RegionOp()) {
      // e4m3: one scale row per 32 weight rows; MXFP4: AITER's permuted,
      // padded scale layout, taken whole.
      Read ws{scales, mxfp4 ? Value() : gemv.getRow(), Value(), gemv.getOutputs(),
              scales.getCols()};
      ws.rowDiv = 32;
      ws.everyRow = mxfp4;
      reads.push_back(ws);
    }
  }
  return reads;
}

/// The memory word a count comes from, for a count that is a whole number
/// loaded from one word at a row and column the task knows (a plan's entry).
struct CountWord {
  Operation *region = nullptr;
  int64_t row = -1, col = -1;
  bool operator==(const CountWord &o) const {
    return region == o.region && row == o.row && col == o.col;
  }
};
std::optional<CountWord> countWordOf(Value count, const llvm::DenseMap<Value, int64_t> &values) {
  auto toIndex = count ? count.getDefiningOp<ToIndexOp>() : ToIndexOp();
  auto load = toIndex ? toIndex.getInput().getDefiningOp<LoadOp>() : LoadOp();
  if (!load || tileSize(load.getResult()) != 1 || !values.count(load.getRow()) ||
      !values.count(load.getCol()))
    return std::nullopt;
  return CountWord{lookupRegion(load, load.getRegionAttr()), values.lookup(load.getRow()),
                   values.lookup(load.getCol())};
}

bool handedOff(RegionOp region) {
  return region.getKind() == MemoryKind::Scratch || region.getKind() == MemoryKind::Output ||
         region.getKind() == MemoryKind::Peer;
}

/// What a read's windows [col, col + size) of rows [firstRow, firstRow +
/// rowCount) find among a stage's writes (sorted by column): the first and
/// last task that wrote them, or the first row they do not cover and how far
/// it is covered.
struct Coverage {
  int64_t lo = INT64_MAX, hi = -1;
  int64_t uncoveredRow = -1, coveredTo = 0;
};
Coverage coverRows(const std::map<int64_t, std::vector<Write>> &writes, const Read &read,
                   int64_t firstRow, int64_t rowCount, int64_t col) {
  Coverage c;
  // A peer load of slot s reads what rank s stored to this rank; every
  // rank stores the same windows, so rank 0's destination stands for all.
  const int64_t dest = read.peerRank >= 0 ? 0 : -1;
  for (int64_t row = firstRow; row < firstRow + rowCount; ++row) {
    auto written = writes.find(row);
    int64_t covered = col;
    if (written != writes.end())
      for (const Write &write : written->second) {
        if (write.dest != dest || write.end <= col || write.col >= col + read.size)
          continue;
        if (write.col > covered)
          break;
        covered = std::max(covered, write.end);
        c.lo = std::min(c.lo, write.task);
        c.hi = std::max(c.hi, write.task);
      }
    if (covered < col + read.size) {
      c.uncoveredRow = row;
      c.coveredTo = covered;
      return c;
    }
  }
  return c;
}

class Analysis {
public:
  explicit Analysis(LaunchOp launch) : launch(launch) {}
  FailureOr<std::vector<Handoff>> run();

private:
  LogicalResult recordWrites(StageOp stage);
  LogicalResult checkReads(StageOp stage, std::vector<Handoff> &handoffs);

  LaunchOp launch;
  /// The stage that writes each region, and where.
  llvm::DenseMap<Operation *, StageOp> writerOf;
  /// Output regions written where data decides (or not at all, when a guard
  /// is negative): no stage of this launch may read them.
  llvm::DenseSet<Operation *> scattered;
  /// Regions written by counted stores: which of a window's rows hold data
  /// is known at run time only, so reads must come at rows given by data.
  llvm::DenseSet<Operation *> counted;
  /// Regions written only by tasks that may skip (mono.skip_unless, other
  /// than a pad row's: what a pad row holds is unspecified anyway), with
  /// each row's writers' count words (none: not traceable to one word).
  /// Such a region may also be read at fixed rows by a counted gemv_rows
  /// whose count is the same word as the writers': when a writer skips,
  /// the reader reads none of its rows.
  std::map<Operation *, std::map<int64_t, std::vector<std::optional<CountWord>>>> skippable;
  std::map<std::string, WriteMap> writesOf; // stage name -> its writes
};

LogicalResult Analysis::recordWrites(StageOp stage) {
  WriteMap &writes = writesOf[stage.getSymName().str()];
  auto skips = stage.getBodyBlock().getOps<SkipUnlessOp>();
  SkipUnlessOp skip = skips.empty() ? SkipUnlessOp() : *skips.begin();
  for (int64_t t = 0; t < stage.getTasks(); ++t) {
    auto values = evaluateIndices(stage, t);
    if (failed(values))
      return failure();
    const std::optional<CountWord> skipWord = skip ? countWordOf(skip.getCount(), *values) : std::nullopt;
    for (Operation &op : stage.getBodyBlock()) {
      auto store = dyn_cast<StoreOp>(op);
      auto peer = dyn_cast<StorePeerOp>(op);
      if (!store && !peer)
        continue;
      RegionOp region = lookupRegion(&op, store ? store.getRegionAttr() : peer.getRegionAttr());
      if (!region)
        return failure();
      if (t == 0) {
        StageOp &writer = writerOf[region];
        if (writer && writer != stage)
          return op.emitOpError()
                 << "region '" << region.getSymName() << "' is written by stages '"
                 << writer.getSymName() << "' and '" << stage.getSymName()
                 << "'; a word has one writer per step";
        writer = stage;
      }
      Value rowValue = store ? store.getRow() : peer.getRow();
      Value colValue = store ? store.getCol() : peer.getCol();
      int64_t rows = store ? store.getRows() : 1;
      int64_t width = store ? store.getRowWidth() : tileSize(peer.getValue());
      int64_t dest = peer ? static_cast<int64_t>(peer.getRank()) : -1;
      if (!values->count(rowValue) || !values->count(colValue) || (store && store.getGuard())) {
        // A cache insert: the host's slot mapping, not the plan, keeps its
        // words apart, and only a later launch reads them.
        if (region.getKind() != MemoryKind::Output)
          return op.emitOpError()
                 << "writes " << stringifyMemoryKind(region.getKind()) << " region '"
                 << region.getSymName()
                 << "' at an address that depends on data (or under a guard); only an output "
                    "region, read by a later launch, may be written so";
        scattered.insert(region);
        continue;
      }
      int64_t row = values->lookup(rowValue), col = values->lookup(colValue);
      if (store && store.getCount())
        counted.insert(region);
      else if (skip && !skip.getPad() && skip->isBeforeInBlock(&op))
        for (int64_t r = 0; r < rows; ++r)
          skippable[region][row + r].push_back(skipWord);
      // A counted store's window is its whole R rows: tasks still own
      // disjoint rows whatever the counts.
      for (int64_t r = 0; r < rows; ++r)
        writes[region.getSymName().str()][row + r].push_back({col, col + width, t, dest});
    }
  }
  // Two tasks of the stage must not write one word.
  for (auto &[region, rows] : writes)
    for (auto &[row, list] : rows) {
      // Peer stores to different ranks land in different buffers.
      std::sort(list.begin(), list.end(), [](const Write &a, const Write &b) {
        return std::tie(a.dest, a.col) < std::tie(b.dest, b.col);
      });
      for (size_t i = 1; i < list.size(); ++i)
        if (list[i].dest == list[i - 1].dest && list[i].col < list[i - 1].end)
          return stage.emitOpError()
                 << "tasks " << list[i - 1].task << " and " << list[i].task
                 << " of stage '" << stage.getSymName() << "' both write region '"
                 << region << "' row " << row << " column " << list[i].col;
      // A peer load reads its slot as rank 0's destination lays it out, so
      // every destination must receive the same windows from the same tasks.
      if (list.empty() || list.front().dest < 0)
        continue;
      auto windowsTo = [&](int64_t dest) {
        std::vector<std::tuple<int64_t, int64_t, int64_t>> out;
        for (const Write &w : list)
          if (w.dest == dest)
            out.push_back({w.col, w.end, w.task});
        return out;
      };
      const auto first = windowsTo(list.front().dest);
      for (const Write &w : list)
        if (windowsTo(w.dest) != first)
          return stage.emitOpError()
                 << "stage '" << stage.getSymName() << "' stores different windows of peer "
                 << "region '" << region << "' row " << row << " to rank " << w.dest
                 << " than to rank " << list.front().dest
                 << "; every rank must receive the same layout";
    }
  return success();
}

LogicalResult Analysis::checkReads(StageOp stage, std::vector<Handoff> &handoffs) {
  // Regions this stage reads, grouped by their producer stage.
  std::map<std::string, Handoff> byProducer;
  std::vector<std::pair<Operation *, Read>> reads;
  for (Operation &op : stage.getBodyBlock()) {
    for (const Read &read : readsOf(op)) {
      RegionOp region = read.region;
      if (!handedOff(region))
        continue;
      StageOp writer = writerOf.lookup(region);
      if (scattered.contains(region))
        return op.emitOpError() << "stage '" << stage.getSymName() << "' reads region '"
                                << region.getSymName() << "', which stage '"
                                << writer.getSymName()
                                << "' writes at addresses that depend on data; only a later "
                                   "launch may read it";
      if (!writer) {
        // This stage or a later one may write it: a poll that would never end.
        for (auto later : launch.getBodyBlock().getOps<StageOp>())
          for (auto store : later.getBodyBlock().getOps<StoreOp>())
            if (store.getRegion() == region.getSymName() && later == stage)
              return op.emitOpError()
                     << "stage '" << stage.getSymName() << "' reads region '"
                     << region.getSymName()
                     << "' which it writes itself; tasks of one stage are independent, "
                        "so the read needs an earlier stage";
            else if (store.getRegion() == region.getSymName())
              return op.emitOpError()
                     << "stage '" << stage.getSymName() << "' reads region '"
                     << region.getSymName() << "' written by the later stage '"
                     << later.getSymName() << "'; it would wait forever";
        return op.emitOpError() << "stage '" << stage.getSymName() << "' reads "
                                << stringifyMemoryKind(region.getKind()) << " region '"
                                << region.getSymName()
                                << "' which no stage of the launch writes";
      }
      Handoff &h = byProducer[writer.getSymName().str() + "@" + std::to_string(read.peerRank)];
      if (!h.firstRead) {
        h.producer = writer;
        h.consumer = stage;
        h.firstRead = &op;
        h.needs.assign(stage.getTasks(), TaskRange{});
        h.peerRank = read.peerRank;
      }
      if (llvm::find(h.regions, region) == h.regions.end())
        h.regions.push_back(region);
      reads.push_back({&op, read});
    }
  }

  // What each read looks up is the same for every task: its hand-off and
  // its writer's windows of the region, row by row.
  struct ResolvedRead {
    StageOp writer;
    Handoff *handoff;
    const std::map<int64_t, std::vector<Write>> *rows;
  };
  static const std::map<int64_t, std::vector<Write>> kNoRows;
  std::vector<ResolvedRead> resolved;
  for (auto &[op, read] : reads) {
    StageOp writer = writerOf.lookup(read.region);
    const WriteMap &writes = writesOf[writer.getSymName().str()];
    auto rows = writes.find(read.region.getSymName().str());
    resolved.push_back(
        {writer, &byProducer[writer.getSymName().str() + "@" + std::to_string(read.peerRank)],
         rows == writes.end() ? &kNoRows : &rows->second});
  }

  std::map<std::pair<size_t, int64_t>, Coverage> wholeRegionCoverage;
  for (int64_t t = 0; t < stage.getTasks() && !reads.empty(); ++t) {
    auto values = evaluateIndices(stage, t);
    if (failed(values))
      return failure();
    for (auto [index, opAndRead] : llvm::enumerate(reads)) {
      auto &[op, read] = opAndRead;
      RegionOp region = read.region;
      StageOp writer = resolved[index].writer;
      Handoff &h = *resolved[index].handoff;
      if (read.col && !values->count(read.col))
        return op->emitOpError() << "reads handed-off region '" << region.getSymName()
                                 << "' at a column that depends on data";
      // A row chosen by data (mono.to_index) may be any row: the task needs
      // the window written in every row, by whichever producer tasks.
      const bool rowKnown = read.row && values->count(read.row);
      // The region rows read: [firstRow, firstRow + rowCount).
      int64_t firstRow = 0, rowCount = region.getRows();
      if (rowKnown) {
        const int64_t row = values->lookup(read.row);
        firstRow = row / read.rowDiv / read.rowGroup * read.rowGroup;
        const int64_t end = ((row + read.rows - 1) / read.rowDiv / read.rowGroup + 1) * read.rowGroup;
        rowCount = end - firstRow;
      }
      // A read of every row needs every row written whatever the counts.
      if (read.everyRow && (counted.contains(region) || skippable.count(region)))
        return op->emitOpError()
               << "task " << t << " of stage '" << stage.getSymName() << "' reads region '"
               << region.getSymName() << "' whole, but stage '" << writer.getSymName()
               << "' writes it with counted stores or in tasks that may skip, so some rows "
                  "may hold nothing of this step";
      // A skipping writer stores none of its rows; a fixed-row read is sure
      // to avoid them only when its count is the word the writer skipped on.
      if (rowKnown && skippable.count(region) && !counted.contains(region)) {
        auto gemv = dyn_cast<GemvRowsOp>(op);
        const std::optional<CountWord> readWord =
            gemv ? countWordOf(gemv.getCount(), *values) : std::nullopt;
        const auto &rowsWritten = skippable[region];
        for (int64_t r = 0; r < rowCount; ++r) {
          auto at = rowsWritten.find(firstRow + r);
          if (at == rowsWritten.end())
            continue;  // unwritten rows are reported below
          for (const std::optional<CountWord> &word : at->second)
            if (!readWord || !word || *word != *readWord)
              return op->emitOpError()
                     << "task " << t << " of stage '" << stage.getSymName() << "' reads region '"
                     << region.getSymName() << "' at fixed row " << firstRow + r
                     << ", but stage '" << writer.getSymName()
                     << "' writes it in tasks that may skip (mono.skip_unless); read it at rows "
                        "given by data, or through a gemv_rows counted by the same word as "
                        "the writer's skip";
        }
      }
      // Rows past a counted store's count hold nothing of this step; a read
      // at a fixed row cannot show it avoids them, a row from data (the
      // plan that also gave the count) can.
      if (rowKnown && counted.contains(region))
        return op->emitOpError()
               << "task " << t << " of stage '" << stage.getSymName() << "' reads region '"
               << region.getSymName() << "' at fixed row " << firstRow
               << ", but stage '" << writer.getSymName()
               << "' writes it with counted stores (rows past a task's count are left "
                  "unwritten); read it at rows given by data";
      const int64_t col = read.col ? values->lookup(read.col) : 0;
      // A read at rows from data (or of every row) covers the same rows in
      // every task: their coverage is worked out once per column.
      Coverage rows;
      if (!rowKnown) {
        auto key = std::make_pair(index, col);
        auto known = wholeRegionCoverage.find(key);
        if (known == wholeRegionCoverage.end())
          known = wholeRegionCoverage
                      .insert({key, coverRows(*resolved[index].rows, read, 0, rowCount, col)})
                      .first;
        rows = known->second;
      } else {
        rows = coverRows(*resolved[index].rows, read, firstRow, rowCount, col);
      }
      if (rows.uncoveredRow >= 0 && !rowKnown)
        return op->emitOpError()
               << "task " << t << " of stage '" << stage.getSymName() << "' reads region '"
               << region.getSymName()
               << (read.everyRow ? "' whole (a layout read as one block)"
                                 : "' at a row that depends on data")
               << ", so every row must be written, but no task of stage '" << writer.getSymName()
               << "' writes row " << rows.uncoveredRow << " columns [" << rows.coveredTo << ", "
               << col + read.size << ")";
      if (rows.uncoveredRow >= 0)
        return op->emitOpError()
               << "task " << t << " of stage '" << stage.getSymName() << "' reads row "
               << rows.uncoveredRow << " columns [" << rows.coveredTo << ", " << col + read.size
               << ") of region '" << region.getSymName() << "', which no task of stage '"
               << writer.getSymName() << "' writes";
      TaskRange &need = h.needs[t];
      int64_t first = need.count ? std::min(need.first, rows.lo) : rows.lo;
      int64_t last = need.count ? std::max(need.first + need.count - 1, rows.hi) : rows.hi;
      need = {first, last - first + 1};
    }
  }
  for (auto &[name, h] : byProducer)
    handoffs.push_back(std::move(h));
  return success();
}

FailureOr<std::vector<Handoff>> Analysis::run() {
  std::vector<Handoff> handoffs;
  for (auto stage : launch.getBodyBlock().getOps<StageOp>()) {
    // Reads are checked against earlier stages only, then this stage's
    // writes join the map.
    if (failed(checkReads(stage, handoffs)) || failed(recordWrites(stage)))
      return failure();
  }
  return handoffs;
}

} // namespace

FailureOr<std::vector<Handoff>> monodc::mono::analyzeHandoffs(LaunchOp launch) {
  return Analysis(launch).run();
}
