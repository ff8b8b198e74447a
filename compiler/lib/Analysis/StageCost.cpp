//===- StageCost.cpp - what a stage costs on MI355X, by the ISA's rates ---===//
#include "monodc/Analysis/StageCost.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <set>

using namespace mlir;
using namespace monodc::mono;

namespace {

/// Storage bytes of one weight value, its E8M0 scales included: e4m3 has a
/// scale per 32x32 block, MXFP4 one per 32 values.
double bytesPerWeight(Type element, bool scaled) {
  if (isa<Float4E2M1FNType>(element))
    return 0.5 + (scaled ? 1.0 / 32 : 0.0);
  const double bytes = element.getIntOrFloatBitWidth() / 8.0;
  return bytes + (scaled ? 1.0 / 1024 : 0.0);
}

} // namespace

std::vector<StageCost> monodc::mono::estimateStageCosts(LaunchOp launch, const IssueModel &model) {
  std::vector<StageCost> costs;
  for (StageOp stage : launch.getOps<StageOp>()) {
    StageCost cost;
    cost.stage = stage.getSymName().str();
    cost.tasks = static_cast<int64_t>(stage.getTasks());
    std::set<std::string> lowerings;
    double mfmaCycles = 0, valuMacs = 0;
    const double tasks = static_cast<double>(cost.tasks);
    stage.walk([&](Operation *op) {
      if (auto g = dyn_cast<GemvRowsOp>(op)) {
        RegionOp weight = lookupRegion(g, g.getWeightAttr());
        const double n = static_cast<double>(g.getOutputs()), k = weight.getCols();
        const double t = static_cast<double>(g.getTokens());
        cost.weightBytes +=
            tasks * n * k * bytesPerWeight(weight.getElementType(), bool(g.getWeightScales()));
        cost.macs += tasks * n * k * t;
        const GemvLowering lowering = g.getLowering().value_or(GemvLowering::FmaChains);
        lowerings.insert(stringifyGemvLowering(lowering).str());
        if (lowering == GemvLowering::ScaledMfma || lowering == GemvLowering::Bf16Mfma ||
            lowering == GemvLowering::Fp8Mfma) {
          // A 16-row tile by a 16-token tile, 128 (scaled) or 32 (bf16, fp8)
          // k an instruction.
          const bool scaled = lowering == GemvLowering::ScaledMfma;
          const double instructions = (n / 16) * std::ceil(t / 16) * (k / (scaled ? 128 : 32));
          cost.mfmaInstructions += tasks * instructions;
          mfmaCycles += tasks * instructions *
                        static_cast<double>(scaled                                 ? model.scaledMfmaCycles
                                            : lowering == GemvLowering::Fp8Mfma ? model.fp8MfmaCycles
                                                                                : model.bf16MfmaCycles);
        } else {
          valuMacs += tasks * n * k * t;
        }
      } else if (auto g = dyn_cast<GemvOp>(op)) {
        RegionOp weight = lookupRegion(g, g.getWeightAttr());
        const double n = cast<TileType>(g.getResult().getType()).getSize(), k = weight.getCols();
        cost.weightBytes +=
            tasks * n * k * bytesPerWeight(weight.getElementType(), bool(g.getWeightScales()));
        cost.macs += tasks * n * k;
        valuMacs += tasks * n * k;
        lowerings.insert("fma_chains");
      } else if (auto a = dyn_cast<AttendChunkOp>(op)) {
        // Scores and values over every key slot of the chunk: q . k and p k.
        const double keys = static_cast<double>(a.getKeys());
        const double macs = 2.0 * static_cast<double>(a.getHeads()) * keys *
                            static_cast<double>(a.getHeadDim());
        cost.macs += tasks * macs;
        const AttendLowering lowering = a.getLowering().value_or(AttendLowering::FmaChains);
        lowerings.insert("attention_" + stringifyAttendLowering(lowering).str());
        if (lowering == AttendLowering::Bf16Mfma) {
          // 16 keys (dims) x 16 columns x 32 k an instruction: the scores
          // take keys/16 x dims/32, the values dims/16 x keys/32 (high and
          // low weight halves in one instruction's 16 columns).
          const double dims = static_cast<double>(a.getHeadDim());
          const double instructions = 2.0 * (keys / 16) * (dims / 32);
          cost.mfmaInstructions += tasks * instructions;
          mfmaCycles += tasks * instructions * static_cast<double>(model.bf16MfmaCycles);
        } else {
          valuMacs += tasks * macs;
        }
        RegionOp cache = lookupRegion(a, a.getCacheAttr());
        // A key record: the cache row's bytes over its page's tokens.
        cost.kvBytes += tasks * keys * (static_cast<double>(cache.getCols()) /
                                        static_cast<double>(a.getPageTokens()));
      }
    });
    // The CUs the stage occupies share the HBM rate and issue in parallel.
    const double cus = static_cast<double>(std::min(cost.tasks, model.computeUnits));
    const double share = model.hbmBytesPerSecond * cus / static_cast<double>(model.computeUnits);
    cost.hbmMicros = cus > 0 ? 1e6 * (cost.weightBytes + cost.kvBytes) / share : 0;
    const double cuCycles =
        mfmaCycles / static_cast<double>(model.simdsPerCu) +
        valuMacs / static_cast<double>(model.valuMacsPerCuCycle);
    cost.issueMicros = cus > 0 ? 1e6 * cuCycles / (cus * model.clockHz) : 0;
    cost.lowering = lowerings.empty() ? "-" : llvm::join(lowerings, "+");
    costs.push_back(std::move(cost));
  }
  return costs;
}
