//===- PlanShared.cpp - shared-memory areas and the barriers between them -===//
#include "monodc/Transforms/Passes.h"

#include <array>

namespace monodc::mono {
#define GEN_PASS_DEF_PLANSHARED
#include "monodc/Transforms/Passes.h.inc"
} // namespace monodc::mono

using namespace mlir;
using namespace monodc::mono;

namespace {

/// Shared memory as one task has used it so far, between barriers.
class TaskPlanner {
public:
  TaskPlanner(int64_t block, llvm::StringRef arch) : block(block), arch(arch) {}

  void plan(StageOp stage);

private:
  struct Area {
    Value content;             ///< the tile the area holds, while it does
    bool readsPending = false; ///< read since the last barrier
    int64_t lastUse = 0;
  };

  /// A mono.sync at `at`: every read and write before it is done.
  void barrier(Block &body, Block::iterator at, llvm::StringRef note) {
    OpBuilder b(&body, at);
    SyncOp::create(b, body.getParentOp()->getLoc(), note);
    afterBarrier();
  }
  void barrierBefore(Operation *op, llvm::StringRef note) {
    barrier(*op->getBlock(), op->getIterator(), note);
  }
  /// A barrier was crossed (a mono.sync, or one inside a building block).
  void afterBarrier() {
    quiet = true;
    for (Area &a : areas)
      a.readsPending = false;
  }
  void forget() {
    for (Area &a : areas)
      a.content = {};
  }
  /// Something other than a rearrangement may have used shared memory.
  void usedElsewhere() {
    quiet = false;
    forget();
  }
  /// The least recently used area nobody has read since the last barrier,
  /// after a barrier (before `op`) if every one has been read.
  int64_t claimFreeArea(Operation *op) {
    auto free = [&](int a) { return !areas[a].readsPending; };
    if (llvm::none_of(llvm::seq<int>(0, kRearrangementAreas), free))
      barrierBefore(op, "every area has been read");
    int area = 0;
    for (int a = 0; a < kRearrangementAreas; ++a)
      if (free(a) && (!free(area) || areas[a].lastUse < areas[area].lastUse))
        area = a;
    return area;
  }
  void markRead(int64_t area) {
    areas[area].readsPending = true;
    areas[area].lastUse = ++clock;
  }
  /// A barrier at `at` behind the small rearrangements' reads, if any are in
  /// flight.
  void settleReads(Block &body, Block::iterator at) {
    if (llvm::any_of(areas, [](const Area &a) { return a.readsPending; }))
      barrier(body, at, "the rearrangements' reads are done");
  }
  void setArea(Operation *op, int64_t area) {
    op->setAttr(MonoDialect::AreaAttrHelper::getNameStr(),
                IntegerAttr::get(IntegerType::get(op->getContext(), 64), area));
  }

  void rearrange(Operation *op);
  void interleave(InterleaveOp op);

  int64_t block;
  llvm::StringRef arch;
  bool quiet = true; ///< no other user of shared memory since the last barrier
  std::array<Area, kRearrangementAreas> areas;
  int64_t clock = 0;
};

/// A rearrangement via shared: its input to an area (or read where an area
/// still holds it), a barrier, then its reads, which stay behind no barrier;
/// a large one uses shared memory from word 0 with a barrier on either side.
void TaskPlanner::rearrange(Operation *op) {
  auto [in, out] = rearrangedTiles(op);
  const bool small = tileSize(in) <= kSmallRearrangementWords;
  if (!small || !quiet)
    barrierBefore(op, "");
  int64_t area = 0;
  if (small) {
    auto held = llvm::find_if(areas, [&](const Area &a) { return a.content == in; });
    if (held != areas.end()) {
      area = held - areas.begin();
      op->setAttr(MonoDialect::ReuseAttrHelper::getNameStr(), UnitAttr::get(op->getContext()));
    } else {
      area = claimFreeArea(op);
      afterBarrier(); // the one between its writes and reads
      areas[area].content = in;
    }
    markRead(area);
  } else {
    afterBarrier(); // between its writes and reads, and after its reads
    forget();       // the tile spans the areas
  }
  setArea(op, area);
}

/// An interleave's pair goes through shared memory as a rearrangement's
/// tile does, but is never read again from there.
void TaskPlanner::interleave(InterleaveOp op) {
  const bool small = 2 * tileSize(op.getA()) <= kSmallRearrangementWords;
  if (!small || !quiet)
    barrierBefore(op, "");
  const int64_t area = small ? claimFreeArea(op) : 0;
  afterBarrier(); // between its writes and reads
  if (small) {
    areas[area].content = {};
    markRead(area);
  } else {
    forget(); // a barrier after its reads too
  }
  setArea(op, area);
}

void TaskPlanner::plan(StageOp stage) {
  Block &body = stage.getBodyBlock();
  bool skipOpen = false;
  // A skip's block closes at its task's publish or at the body's end: the
  // task may or may not have run it, so its reads are settled inside, and
  // the next rearrangement waits as after any other user.
  auto closeSkip = [&](Block::iterator at) {
    settleReads(body, at);
    usedElsewhere();
  };
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (isa<PublishOp>(op) && skipOpen) {
      closeSkip(op.getIterator());
      skipOpen = false;
    }
    // A reduction that an expand takes whole moves with the expand.
    if (auto r = dyn_cast<ReduceOp>(op); r && expandOfReduction(r))
      continue;
    if (rearrangedTile(&op)) {
      rearrange(&op);
      continue;
    }
    if (auto pair = dyn_cast<InterleaveOp>(op)) {
      interleave(pair);
      continue;
    }
    if (usesOneSharedArea(&op)) {
      // A library call that ends with a barrier: to an area nobody has read
      // since the last barrier where nothing but rearrangements has used
      // shared memory since; else behind the reads, at area 0 (back.combine's
      // tasks reduce and quantize between their rearrangements).
      int64_t area = 0;
      if (quiet)
        area = claimFreeArea(&op);
      else
        settleReads(body, op.getIterator());
      setArea(&op, area);
      afterBarrier();
      areas[area].content = {};
      continue;
    }
    const bool otherUser = sharedBytesFor(&op, block, arch) > 0;
    if (otherUser || isa<SkipUnlessOp>(op))
      settleReads(body, op.getIterator());
    if (isa<QuantizeMxfp8Op>(op)) {
      afterBarrier(); // it ends with one
      forget();       // a large one uses shared memory from word 0 on
    } else if (otherUser) {
      usedElsewhere();
    }
    skipOpen = skipOpen || isa<SkipUnlessOp>(op);
  }
  if (skipOpen)
    closeSkip(body.end());
}

struct PlanShared : public monodc::mono::impl::PlanSharedBase<PlanShared> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](LaunchOp launch) {
      launch.walk([&](Operation *op) {
        if (isRearrangement(op) && !rearrangementOf(op)) {
          op->emitOpError() << "has no `via`: run mono-lower-tiles before mono-plan-shared";
          failed = true;
        }
      });
      if (failed)
        return;
      for (StageOp stage : launch.getBodyBlock().getOps<StageOp>())
        TaskPlanner(launch.getBlock(), launch.getArch()).plan(stage);
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
