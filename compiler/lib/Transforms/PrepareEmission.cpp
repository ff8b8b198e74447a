//===- PrepareEmission.cpp - make a launch ready for the HIP printer ------===//
#include "monodc/Transforms/Passes.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

// The device library's gemv_rows slice shapes (runtime/device).
#include "monodc/device/gemv_shape.h"

namespace monodc::mono {
#define GEN_PASS_DEF_PREPAREEMISSION
#include "monodc/Transforms/Passes.h.inc"
} // namespace monodc::mono

using namespace mlir;
using namespace monodc::mono;

bool monodc::mono::isSupportedArch(llvm::StringRef arch) {
  return monodc::runtime::findTarget(std::string_view(arch.data(), arch.size())) != nullptr;
}

const monodc::runtime::Target &monodc::mono::targetOf(llvm::StringRef arch) {
  const monodc::runtime::Target *target =
      monodc::runtime::findTarget(std::string_view(arch.data(), arch.size()));
  if (!target)
    llvm::report_fatal_error(llvm::Twine("no target description for '") + arch +
                             "' (the verifier refuses such a launch first)");
  return *target;
}

int64_t monodc::mono::maxSharedBytes(llvm::StringRef arch) {
  return targetOf(arch).sharedBytesPerBlock;
}

int64_t monodc::mono::gemvRowsWeightKind(GemvRowsOp g) {
  Type element = lookupRegion(g, g.getWeightAttr()).getElementType();
  if (g.getWeightScales())
    return isa<Float4E2M1FNType>(element) ? 3 : 0;
  return element.isBF16() ? 1 : 2;
}

bool monodc::mono::gemvRowsUsesMma(GemvRowsOp g, int64_t block, llvm::StringRef arch) {
  // gemv_mma.h is written on the 16x8x16 f16 warp mma (MONO_HAS_MMA_F16).
  using monodc::runtime::MatrixOperand;
  if (!targetOf(arch).findMatrix(16, 8, 16, MatrixOperand::F16, MatrixOperand::F16))
    return false;
  const int64_t k = lookupRegion(g, g.getWeightAttr()).getCols();
  return mono_gemv_mma_chosen(static_cast<int>(g.getOutputs()), static_cast<int>(k),
                            static_cast<int>(gemvRowsWeightKind(g)), static_cast<int>(block));
}

int64_t monodc::mono::gemvRowsMmaPassTokens(GemvRowsOp g, int64_t block) {
  return mono_gemv_mma_pass_tokens(
      static_cast<int>(g.getOutputs()), static_cast<int>(lookupRegion(g, g.getWeightAttr()).getCols()),
      static_cast<int>(g.getTokens()), static_cast<int>(gemvRowsWeightKind(g)), static_cast<int>(block));
}

int64_t monodc::mono::gemvRowsRingBytes(GemvRowsOp g, int64_t block, llvm::StringRef arch) {
  if (!targetOf(arch).asyncCopy) // the ring is written on cp.async (MONO_HAS_ASYNC_COPY)
    return 0;
  if (g.getLowering() != GemvLowering::FmaChains && g.getLowering() != GemvLowering::FmaChainsF32)
    return 0;
  // One token only: with several, the loop already waits on shared memory
  // (each of a warp's threads reads its own token words), and the ring's
  // shared-memory reads made such GEMVs slower, while one-token GEMVs
  // gain from it.
  if (g.getTokens() != 1)
    return 0;
  // The device's slice shape (gemv_shape.h): a slice that stays in
  // registers needs no ring; otherwise the ring holds mono_ring_stages
  // groups of chunk slots for every thread.
  const int kind = static_cast<int>(gemvRowsWeightKind(g));
  const int64_t chunks = lookupRegion(g, g.getWeightAttr()).getCols() / 16;
  const int64_t threadsPerRow = std::max<int64_t>(1, block / g.getOutputs());
  const int64_t chunksPerThread = (chunks + threadsPerRow - 1) / threadsPerRow;
  if (mono_gemv_resident(static_cast<int>(chunksPerThread), kind))
    return 0;
  return int64_t{mono_ring_stages} * mono_gemv_group(kind) * block * mono_gemv_slot(kind);
}

int64_t monodc::mono::gemvRowsChunkTokens(GemvRowsOp g, int64_t block, llvm::StringRef arch) {
  const int64_t k = lookupRegion(g, g.getWeightAttr()).getCols();
  const int64_t tokens = g.getTokens();
  const int64_t most = gemvRowsChunkTokensLimit(k, tokens, block);
  // With a runtime count nothing bounds a pass's tokens from below.
  if (targetOf(arch).isNvidia() || g.getCount())
    return most;
  // On AMD a pass's tokens, min(tokens - first, TC), are known to be at
  // least the last pass's (tokens % TC), so that many are computed without
  // the per-token guard; LLVM's IR code sinking (AMDGPU pipeline) moves
  // their fma chains below the guarded tokens' branches while their
  // shared-memory reads (8 registers a token and chunk) stay, so all those
  // reads are live at once (dsv41 K2's shared.down at TP 4 and 12 rows:
  // 160 registers beside 80 of decoded weights). TC is the largest whose
  // last pass is whole or holds at most half of a lane's 256 registers at
  // two waves a SIMD that way.
  constexpr int64_t kWordsATokenChunk = 8, kHeldWords = 128;
  const int kind = static_cast<int>(gemvRowsWeightKind(g));
  const int64_t threadsPerRow = std::max<int64_t>(1, block / g.getOutputs());
  const int64_t chunksPerThread = (k / 16 + threadsPerRow - 1) / threadsPerRow;
  // The unrolled run: a resident slice's chunks, else a streaming group.
  const int64_t run = mono_gemv_resident(static_cast<int>(chunksPerThread), kind)
                          ? chunksPerThread
                          : std::min<int64_t>(chunksPerThread, mono_gemv_group(kind));
  int64_t chunk = most;
  while (chunk > 1 && (tokens % chunk) * run * kWordsATokenChunk > kHeldWords)
    --chunk;
  return chunk;
}

bool monodc::mono::isRearrangement(Operation *op) {
  if (auto r = dyn_cast<ReduceOp>(op))
    return static_cast<bool>(r.getShape());
  return isa<SliceOp, ExpandOp, GatherOp>(op);
}

std::optional<Rearrangement> monodc::mono::rearrangementOf(Operation *op) {
  if (!isRearrangement(op))
    return std::nullopt;
  return llvm::TypeSwitch<Operation *, std::optional<Rearrangement>>(op)
      .Case<SliceOp, ExpandOp, GatherOp, ReduceOp>([](auto o) { return o.getVia(); })
      .Default([](Operation *) { return std::nullopt; });
}

bool monodc::mono::canRearrangeInThread(Operation *op, int64_t block) {
  std::optional<int64_t> axis;
  llvm::ArrayRef<int64_t> shape;
  if (auto r = dyn_cast<ReduceOp>(op); r && r.getShape()) {
    axis = r.getAxis();
    shape = *r.getShape();
  } else if (auto e = dyn_cast<ExpandOp>(op)) {
    axis = e.getAxis();
    shape = e.getShape();
  }
  return axis == 0 && shape.size() == 2 && shape[1] % block == 0;
}

ExpandOp monodc::mono::expandOfReduction(ReduceOp r) {
  return r->hasAttr(MonoDialect::WithExpandAttrHelper::getNameStr()) ? pairableExpand(r)
                                                                     : ExpandOp();
}

ExpandOp monodc::mono::pairableExpand(ReduceOp r) {
  if (!r.getShape() || !r.getResult().hasOneUse())
    return {};
  auto expand = dyn_cast<ExpandOp>(*r.getResult().getUsers().begin());
  if (!expand || expand.getAxis() != *r.getAxis() ||
      llvm::ArrayRef<int64_t>(expand.getShape()) != llvm::ArrayRef<int64_t>(*r.getShape()))
    return {};
  return expand;
}

std::pair<Value, Value> monodc::mono::rearrangedTiles(Operation *op) {
  if (auto r = dyn_cast<ReduceOp>(op))
    if (ExpandOp expand = expandOfReduction(r))
      return {r.getInput(), expand.getResult()};
  if (auto e = dyn_cast<ExpandOp>(op))
    if (auto r = e.getInput().getDefiningOp<ReduceOp>(); r && expandOfReduction(r) == e)
      return {r.getInput(), e.getResult()};
  if (auto g = dyn_cast<GatherOp>(op))
    return {g.getTable(), g.getResult()};
  return {op->getOperand(0), op->getResult(0)};
}

bool monodc::mono::canRearrangeByShuffle(Operation *op, int64_t block, int64_t waveSize) {
  auto [in, out] = rearrangedTiles(op);
  return block >= waveSize && tileSize(in) <= waveSize && tileSize(out) > 1 && tileSize(out) <= waveSize;
}

std::optional<std::string> monodc::mono::rearrangementRefusal(Operation *op, int64_t block,
                                                              int64_t waveSize) {
  std::optional<Rearrangement> via = rearrangementOf(op);
  if (!via)
    return std::nullopt;
  std::string reason;
  if (*via == Rearrangement::InThread && !canRearrangeInThread(op, block))
    reason = "only an axis-0 reduction or expand whose columns are whole blocks (" +
             std::to_string(block) + ") keeps its values in their threads";
  else if (*via == Rearrangement::Shuffle && !canRearrangeByShuffle(op, block, waveSize))
    reason = "shuffles need an input of at most a wave (" + std::to_string(waveSize) +
             " values) and a result of 2 to " + std::to_string(waveSize) + " values";
  if (reason.empty())
    return std::nullopt;
  return "via " + stringifyRearrangement(*via).str() + ": " + reason;
}

bool monodc::mono::usesOneSharedArea(Operation *op) {
  if (auto r = dyn_cast<ReduceOp>(op))
    return !r.getShape() && tileSize(r.getInput()) > 1;
  if (auto q = dyn_cast<QuantizeMxfp8Op>(op))
    return tileSize(q.getInput()) + tileSize(q.getScales()) <= kSmallRearrangementWords;
  return false;
}

Value monodc::mono::rearrangedTile(Operation *op) {
  if (rearrangementOf(op) != Rearrangement::Shared)
    return {};
  if (auto r = dyn_cast<ReduceOp>(op))
    return r.getInput();
  if (auto g = dyn_cast<GatherOp>(op))
    return g.getTable();
  return op->getOperand(0);
}

int64_t monodc::mono::sharedBytesFor(Operation *op, int64_t block, llvm::StringRef arch) {
  // Every building block works in f32 words of shared memory. What fits an
  // area may go to any of them (from the last one's start), more from word
  // 0: a rearrangement's tile, a block reduction's block of words, an
  // interleave's pair, a quantization's values and scales (the emitter's
  // areas, as mono-plan-shared gives them).
  auto inAnArea = [](int64_t words) {
    return (words <= kSmallRearrangementWords
                ? (kRearrangementAreas - 1) * kSmallRearrangementWords + words
                : words) *
           4;
  };
  if (auto via = rearrangementOf(op); via && *via != Rearrangement::Shared)
    return 0;
  const Value in = rearrangedTile(op);
  const int64_t rearranged = in ? inAnArea(tileSize(in)) : 0;
  if (auto r = dyn_cast<ReduceOp>(op))
    return std::max({inAnArea(block), tileSize(r.getInput()) * 4, rearranged});
  if (rearranged)
    return rearranged;
  if (isa<InterleaveOp>(op))
    return inAnArea(2 * tileSize(op->getOperand(0)));
  if (auto t = dyn_cast<TopKOp>(op))
    return (tileSize(t.getInput()) + 2 * t.getK()) * 4;
  // The experts, the slot starts and the slots' first places (one past the last).
  if (auto g = dyn_cast<ExpertGroupsOp>(op))
    return (3 * tileSize(g.getExperts()) + 1) * 4;
  if (auto q = dyn_cast<QuantizeMxfp8Op>(op))
    return inAnArea(tileSize(q.getInput()) + tileSize(q.getScales()));
  if (auto g = dyn_cast<GemvRowsOp>(op)) {
    int64_t k = lookupRegion(g, g.getWeightAttr()).getCols();
    if (g.getLowering() == GemvLowering::ScaledMfma || g.getLowering() == GemvLowering::Bf16Mfma ||
        g.getLowering() == GemvLowering::Fp8Mfma)
      return mono_gemv_mfma_shared_bytes(static_cast<int>(g.getOutputs()),
                                         static_cast<int>(g.getTokens()), static_cast<int>(block));
    if (g.getLowering() == GemvLowering::WarpMma)
      return mono_gemv_mma_shared_bytes(static_cast<int>(g.getOutputs()), static_cast<int>(k),
                                        static_cast<int>(g.getTokens()),
                                        static_cast<int>(gemvRowsWeightKind(g)), static_cast<int>(block));
    int64_t chunk = gemvRowsChunkTokens(g, block, arch);
    int64_t own = chunk * k * (g.getLowering() == GemvLowering::FmaChainsF32 ? 4 : 2) + chunk * block * 4 +
                  tileSize(g.getResult()) * 4;
    int64_t ring = gemvRowsRingBytes(g, block, arch);
    return ring ? llvm::alignTo(own, 16) + ring : own;
  }
  if (auto a = dyn_cast<AttendChunkOp>(op)) {
    const AttendLowering lowering = a.getLowering().value_or(AttendLowering::FmaChains);
    if (lowering != AttendLowering::FmaChains)
      return attendMatrixSharedBytes(a, lowering, block);
    // Key and query rows are D + parts words (mono_attend_word's gaps).
    const int64_t parts = a.scoreParts(block), row = a.getHeadDim() + parts;
    return (a.getKeys() + (AttendChunkOp::kKeyBatch + a.getHeads()) * row +
            a.getHeads() * AttendChunkOp::kKeyBatch * parts + 3 * a.getHeads()) *
           4;
  }
  if (auto g = dyn_cast<GemvOp>(op))
    return (tileSize(g.getX()) + tileSize(g.getX()) / 32 + block + tileSize(g.getResult())) * 4;
  return 0;
}

namespace {
struct PrepareEmission
    : public monodc::mono::impl::PrepareEmissionBase<PrepareEmission> {
  using PrepareEmissionBase::PrepareEmissionBase;

  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](LaunchOp launch) {
      if (!isSupportedArch(launch.getArch())) {
        launch.emitOpError() << "unsupported arch '" << launch.getArch()
                             << "' (supported: " << monodc::runtime::targetNames() << ")";
        failed = true;
        return;
      }
      int64_t block = launch.getBlock();
      for (auto stage : launch.getBodyBlock().getOps<StageOp>()) {
        Block &body = stage.getBodyBlock();
        if (stage->hasAttr(MonoDialect::HandOverAttrHelper::getNameStr()) &&
            (!stage->hasAttr(MonoDialect::ClaimAttrHelper::getNameStr()) || body.empty() ||
             !isa<PublishOp>(body.back()))) {
          stage.emitOpError() << "hands its next task over in a publish (mono.hand_over) but "
                                 "does not claim its tasks or does not end with mono.publish";
          failed = true;
        }
      }
      int64_t shared = 0;
      launch.walk([&](Operation *op) {
        for (Value result : op->getResults()) {
          auto tile = dyn_cast<TileType>(result.getType());
          if (tile && slotsPerThread(tile.getSize(), block) > maxSlotsPerThread) {
            op->emitOpError() << "tile of " << tile.getSize()
                              << " values needs "
                              << slotsPerThread(tile.getSize(), block)
                              << " registers per thread at block " << block
                              << " (limit " << static_cast<int64_t>(maxSlotsPerThread)
                              << "); split the stage into more tasks";
            failed = true;
          }
        }
        if (auto g = dyn_cast<GemvRowsOp>(op); g && (g.getOutputs() > block || block % g.getOutputs() != 0)) {
          g.emitOpError() << "computes " << g.getOutputs()
                          << " outputs per token; the building block needs a divisor of the "
                             "block ("
                          << block << ")";
          failed = true;
          return;  // its shape functions assume a divisor
        }
        const bool unlowered = (isa<GemvRowsOp>(op) && !cast<GemvRowsOp>(op).getLowering()) ||
                               (isa<AttendChunkOp>(op) && !cast<AttendChunkOp>(op).getLowering());
        if (unlowered) {
          op->emitOpError() << "has no lowering: mono-lower-tiles chooses its building block "
                               "before the emission is prepared";
          failed = true;
          return;
        }
        if (auto r = dyn_cast<ReduceOp>(op);
            r && r->hasAttr(MonoDialect::WithExpandAttrHelper::getNameStr()) &&
            !pairableExpand(r)) {
          op->emitOpError() << "is paired with an expand (mono.with_expand), but no expand of "
                               "the same shape and axis takes its result alone";
          failed = true;
          return;
        }
        if (isRearrangement(op) && !rearrangementOf(op)) {
          op->emitOpError() << "has no `via`: mono-lower-tiles chooses how it moves its values "
                               "before the emission is prepared";
          failed = true;
          return;
        }
        if (auto why = loweringRefusal(op, block, launch.getArch())) {
          op->emitOpError() << *why;
          failed = true;
          return;
        }
        if (auto g = dyn_cast<GemvRowsOp>(op)) {
          auto i64 = IntegerType::get(&getContext(), 64);
          if (int64_t ring = gemvRowsRingBytes(g, block, launch.getArch()))
            g->setAttr("mono.ring_bytes", IntegerAttr::get(i64, ring));
          if (g.getLowering() == GemvLowering::FmaChains ||
              g.getLowering() == GemvLowering::FmaChainsF32)
            g->setAttr(MonoDialect::ChunkTokensAttrHelper::getNameStr(),
                       IntegerAttr::get(i64, gemvRowsChunkTokens(g, block, launch.getArch())));
        }
        int64_t bytes = sharedBytesFor(op, block, launch.getArch());
        if (bytes > maxSharedBytes(launch.getArch())) {
          op->emitOpError() << "needs " << bytes << " bytes of shared memory; a CTA of "
                            << launch.getArch() << " has at most "
                            << maxSharedBytes(launch.getArch());
          failed = true;
        }
        shared = std::max(shared, bytes);
      });
      launch->setAttr("mono.lds_bytes",
                      IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                       std::max<int64_t>(shared, 4)));
      // On CUDA each fused stage is a function of its own that is not
      // inlined: ptxas then allocates its registers as for the stage alone,
      // instead of for one body holding every stage (the fused K2 spilled
      // where no stage's own kernel does). The AMD targets keep one body: a
      // call there needs scratch.
      if (targetOf(launch.getArch()).isNvidia())
        launch->setAttr(MonoDialect::StageCallsAttrHelper::getNameStr(),
                        UnitAttr::get(&getContext()));
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
