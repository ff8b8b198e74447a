//===- Eligibility.cpp - when the mono decode path may run ----------------===//
#include "monodc/runtime/Eligibility.h"

#include "monodc/runtime/LayerMap.h"
#include "monodc/runtime/StepWidths.h"
#include "monodc/runtime/Target.h"

#include <algorithm>

using namespace monodc::runtime;

namespace {

/// Every fact of checkDeployment but the model's layer map, which the
/// callers read themselves.
Status checkDeploymentFacts(const Deployment &d) {
  const Target *target = findTarget(d.arch);
  if (!target)
    return makeError("arch '" + d.arch + "' is not a target (known: " + targetNames() + ")");
  if (!d.builtArchs.empty() &&
      std::find(d.builtArchs.begin(), d.builtArchs.end(), d.arch) == d.builtArchs.end()) {
    std::string built;
    for (const std::string &a : d.builtArchs)
      built += (built.empty() ? "" : ", ") + a;
    return makeError("arch '" + d.arch + "' has no kernels in this deployment (built: " + built +
                     ")");
  }
  if (d.tp != 2 && d.tp != 4)
    return makeError("TP " + std::to_string(d.tp) + " is not served (the kernels take 2 or 4)");
  if (d.expertParallel != 1)
    return makeError("expert parallelism " + std::to_string(d.expertParallel) +
                     " is not served (every rank holds its share of every expert)");
  if (d.dataParallel != 1)
    return makeError("data parallelism " + std::to_string(d.dataParallel) +
                     " is not served (the attention is tensor-parallel only)");
  if (d.routedWeights != kRoutedWeightsMxfp4Aiter)
    return makeError("routed expert weights '" + d.routedWeights + "' are not served (the " +
                     "kernels read " + std::string(kRoutedWeightsMxfp4Aiter) +
                     ": MXFP4 in AITER's shuffled layout)");
  const int64_t grid = d.grid > 0 ? d.grid : target->defaultGrid;
  if (d.computeUnits < grid)
    return makeError("the device offers " + std::to_string(d.computeUnits) +
                     " compute units and the kernels need " + std::to_string(grid) +
                     " (one CTA each, all resident: a partitioned GPU cannot run them)");
  if (d.kvCachePages < 0 || d.kvCachePages > kMaxKvCachePages)
    return makeError("KV caches of " + std::to_string(d.kvCachePages) + " pages are not served " +
                     "(the kernels address at most " + std::to_string(kMaxKvCachePages) +
                     " pages of " + std::to_string(kKvPageTokens) + " tokens: 2^24 slots)");
  if (Result<int64_t> limit = positionLimit(d.model);
      limit && (d.maxPositions < 0 || d.maxPositions > *limit))
    return makeError(std::to_string(d.maxPositions) + " positions are not served (the kernels " +
                     "take a RoPE table of at most " + std::to_string(*limit) +
                     " rows: positions stay exact in f32)");
  return Status::success();
}

} // namespace

Status monodc::runtime::checkDeployment(const Deployment &d) {
  if (Result<std::vector<LayerPlan>> map = layerMap(d.model); !map)
    return map.error();
  return checkDeploymentFacts(d);
}

Result<Eligibility> monodc::runtime::eligibility(const Deployment &d, int64_t layer,
                                                 const StepFacts &step) {
  Result<std::vector<LayerPlan>> map = layerMap(d.model);
  if (!map)
    return map.error();
  if (Status ok = checkDeploymentFacts(d); !ok)
    return ok.error();
  if (layer < 0 || layer >= int64_t(map->size()))
    return makeError("layer " + std::to_string(layer) + " is not a layer of " + d.model + " (0.." +
                     std::to_string(map->size() - 1) + ")");
  const LayerPlan &plan = (*map)[size_t(layer)];
  Eligibility e;
  auto notRun = [&](std::string reason) {
    e.reason = std::move(reason);
    return e;
  };
  if (!step.uniformDecode)
    return notRun("not a uniform decode step (prefill or mixed)");
  if (step.piecewiseCapture)
    return notRun("a piecewise graph capture, which may replay mixed batches");
  if (!step.causal)
    return notRun("a non-causal attention window");
  if (!step.metadata)
    return notRun("the step's positions, slot mapping, block tables or top-k lists are missing");
  if (Result<int64_t> limit = positionLimit(d.model); step.maxPosition >= *limit)
    return notRun("position " + std::to_string(step.maxPosition) + " is past the " +
                  std::to_string(*limit) + " positions the kernels serve");
  if (d.maxPositions > 0 && step.maxPosition >= d.maxPositions)
    return notRun("position " + std::to_string(step.maxPosition) + " is past the " +
                  std::to_string(d.maxPositions) + " positions the deployment serves (the " +
                  "RoPE table and block tables it binds)");
  const std::optional<int64_t> width = stepWidthFor(step.rows);
  if (!width)
    return notRun(std::to_string(step.rows) + " rows (the kernels serve 1.." +
                  std::to_string(kMaxStepRows) + ")");
  e.runs = true;
  e.launches = plan.launches();
  e.ratio = plan.ratio;
  e.width = *width;
  return e;
}
