//===- MaterializeSync.cpp - tagged publishes and batched polls -----------===//
#include "monodc/Analysis/Handoffs.h"
#include "monodc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace monodc::mono {
#define GEN_PASS_DEF_MATERIALIZESYNC
#include "monodc/Transforms/Passes.h.inc"
} // namespace monodc::mono

using namespace mlir;
using namespace monodc::mono;

namespace {

/// first(t) = (t / divisor) * stride + offset, count(t) = count.
struct AffineNeed {
  int64_t divisor = 1, stride = 0, offset = 0, count = 0;
};

/// Fits the per-task needs to the affine form, or widens them to the hull of
/// all needs (always correct: it only waits on more).
AffineNeed fitNeeds(const std::vector<TaskRange> &needs, bool &exact) {
  exact = false;
  AffineNeed fit;
  if (needs.empty())
    return fit;
  bool sameCount = llvm::all_of(needs, [&](const TaskRange &r) { return r.count == needs[0].count; });
  if (sameCount) {
    int64_t d = 1;
    while (d < static_cast<int64_t>(needs.size()) && needs[d].first == needs[0].first)
      ++d;
    fit = {d, d < static_cast<int64_t>(needs.size()) ? needs[d].first - needs[0].first : 0,
           needs[0].first, needs[0].count};
    exact = true;
    for (size_t t = 0; t < needs.size() && exact; ++t)
      exact = needs[t].first == static_cast<int64_t>(t) / fit.divisor * fit.stride + fit.offset;
    if (exact)
      return fit;
  }
  int64_t lo = needs[0].first, hi = needs[0].first + needs[0].count;
  for (const TaskRange &r : needs) {
    lo = std::min(lo, r.first);
    hi = std::max(hi, r.first + r.count);
  }
  return {1, 0, lo, hi - lo};
}

struct MaterializeSync : public monodc::mono::impl::MaterializeSyncBase<MaterializeSync> {
  using MaterializeSyncBase::MaterializeSyncBase;

  void runOnOperation() override {
    for (auto launch : getOperation().getOps<LaunchOp>())
      if (failed(materialize(launch)))
        return signalPassFailure();
  }

  LogicalResult materialize(LaunchOp launch) {
    if (!launch->hasAttr("mono.scratch_bytes"))
      return launch.emitOpError() << "needs mono-plan-memory before mono-materialize-sync";
    if (launch->hasAttr("mono.tag_offset"))
      return launch.emitOpError() << "is already synchronized";
    // A launch that declares its place in the step (mono.step_tag,
    // mono.ends_step: K1 1 and no, K2/FFN 2 and yes) overrides the options.
    int64_t offset = tagOffset;
    bool advance = advanceEpoch;
    if (auto tag = launch->getAttrOfType<IntegerAttr>("mono.step_tag"))
      offset = tag.getInt();
    if (auto ends = launch->getAttrOfType<BoolAttr>("mono.ends_step"))
      advance = ends.getValue();
    if (offset != 1 && offset != 2)
      return launch.emitOpError() << "tag offset must be 1 (K1) or 2 (K2/FFN), got " << offset;
    auto handoffs = analyzeHandoffs(launch);
    if (failed(handoffs))
      return failure();
    OpBuilder b(&getContext());
    // Dynamic stages claim their tasks through the step's counters.
    int64_t claims = 0;
    for (auto stage : launch.getBodyBlock().getOps<StageOp>()) {
      if (!stage.getDynamic())
        continue;
      if (claims == epoch::kClaimsPerLaunch)
        return stage.emitOpError() << "is the launch's third dynamic stage; a launch has "
                                   << epoch::kClaimsPerLaunch << " task counters a step";
      stage->setAttr("mono.claim", b.getI64IntegerAttr(claims++));
    }
    llvm::SmallPtrSet<Operation *, 8> producers, peerProducers;
    for (Handoff &h : *handoffs) {
      (h.peerRank >= 0 ? peerProducers : producers).insert(h.producer);
      bool exact;
      AffineNeed need = fitNeeds(h.needs, exact);
      b.setInsertionPoint(h.firstRead);
      Location loc = h.firstRead->getLoc();
      Value task = h.consumer.getTaskIndex();
      auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
      Value first;
      if (need.stride == 0)
        first = constant(need.offset);
      else {
        Value t = need.divisor == 1 ? task
                                    : arith::DivUIOp::create(b, loc, task, constant(need.divisor)).getResult();
        Value scaled = need.stride == 1
                           ? t
                           : arith::MulIOp::create(b, loc, t, constant(need.stride)).getResult();
        first = need.offset == 0
                    ? scaled
                    : arith::AddIOp::create(b, loc, scaled, constant(need.offset)).getResult();
      }
      Operation *wait =
          h.peerRank >= 0
              ? WaitPeerOp::create(b, loc, peerFlagsRegionName(h.producer), first,
                                   constant(need.count), h.peerRank)
                    .getOperation()
              : WaitOp::create(b, loc, flagsRegionName(h.producer), first, constant(need.count))
                    .getOperation();
      SmallVector<Attribute> names;
      for (RegionOp r : h.regions)
        names.push_back(b.getStringAttr(r.getSymName()));
      wait->setAttr("mono.regions", b.getArrayAttr(names));
      if (!exact)
        wait->setAttr("mono.whole_producer", b.getUnitAttr());
    }
    for (auto stage : launch.getBodyBlock().getOps<StageOp>()) {
      if (stage.getSymName() == testOmitPublish.getValue())
        continue;
      b.setInsertionPointToEnd(&stage.getBodyBlock());
      if (producers.contains(stage))
        PublishOp::create(b, stage.getLoc(), flagsRegionName(stage), stage.getTaskIndex());
      if (peerProducers.contains(stage))
        PublishPeerOp::create(b, stage.getLoc(), peerFlagsRegionName(stage),
                              stage.getTaskIndex());
      // A claimed task that ends with its publish takes the next task in
      // the same release (thread 0's claim overlaps the publish).
      Block &body = stage.getBodyBlock();
      if (stage->hasAttr("mono.claim") && !body.empty() && isa<PublishOp>(body.back()))
        stage->setAttr(MonoDialect::HandOverAttrHelper::getNameStr(), b.getUnitAttr());
    }
    launch->setAttr("mono.tag_offset", b.getI64IntegerAttr(offset));
    launch->setAttr("mono.advance_epoch", b.getBoolAttr(advance));
    return success();
  }
};

} // namespace
