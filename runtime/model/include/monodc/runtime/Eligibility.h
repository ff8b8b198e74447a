//===- Eligibility.h - when the mono decode path may run ---------*- C++ -*-===//
//
// A serving engine asks, for a deployment, a layer and a step, whether the
// fused decode path runs it and with which launches, or why not. A
// deployment that opted in but cannot run is an error (checkDeployment); a
// step the path does not serve falls back to the engine's own path with the
// reason (eligibility). docs/runtime.md, "Eligibility".
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_ELIGIBILITY_H
#define MONODC_RUNTIME_ELIGIBILITY_H

#include "monodc/runtime/Result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace monodc::runtime {

/// The routed experts' weights the kernels read: MXFP4 in AITER's (16, 16)
/// shuffled layout with shuffled E8M0 scales.
inline constexpr std::string_view kRoutedWeightsMxfp4Aiter = "mxfp4_aiter";

/// What a deployment is, fixed when the engine opts in.
struct Deployment {
  std::string model = "dsv41";
  std::string arch;                    ///< the device's processor, e.g. gfx950
  std::vector<std::string> builtArchs; ///< the processors it has kernels for (empty: every target)
  int64_t tp = 0;                      ///< tensor-parallel ranks
  int64_t expertParallel = 1;          ///< expert-parallel ranks (the kernels take 1)
  int64_t dataParallel = 1;            ///< data-parallel attention ranks (the kernels take 1)
  std::string routedWeights = std::string(kRoutedWeightsMxfp4Aiter);
  int64_t computeUnits = 0;            ///< CUs (SMs) the device offers the engine
  int64_t grid = 0;                    ///< CTAs the kernels were built for (0: the arch's compute units)
  int64_t kvCachePages = 0;            ///< pages of the engine's KV caches (0: not checked)
  /// Positions the engine serves (max_model_len): the rows of the RoPE table
  /// it binds, which its block tables' pages a row reach (0: not checked).
  int64_t maxPositions = 0;
};

/// Tokens in a page of the KV caches (`fp8_ds_mla` records), and the most
/// pages the kernels take: they compute a cache slot (page x 32 + record)
/// in f32, exact up to 2^24.
inline constexpr int64_t kKvPageTokens = 32;
inline constexpr int64_t kMaxKvCachePages = (int64_t(1) << 24) / kKvPageTokens;

/// An error naming the first fact of `d` that rules the fused path out: an
/// arch outside the built ones (or no target at all), TP other than 2 or 4,
/// expert or data parallelism, routed weights in another format, fewer
/// compute units than the grid (a partitioned GPU), KV caches of more than
/// kMaxKvCachePages pages, more positions than positionLimit, an unknown
/// model.
Status checkDeployment(const Deployment &d);

/// What the engine knows of a step before it launches it.
struct StepFacts {
  int64_t rows = 0;              ///< tokens in the step
  bool uniformDecode = true;     ///< every request decodes one token (no prefill, no mixed step)
  bool piecewiseCapture = false; ///< a graph capture that may replay mixed batches
  bool causal = true;            ///< causal attention windows
  bool metadata = true;          ///< positions, slot mapping, block tables and top-k lists at hand
  int64_t maxPosition = 0;       ///< the step's largest position (0: the first, or not checked)
};

struct Eligibility {
  bool runs = false;
  std::vector<std::string> launches; ///< {"k1", "k2"} or {"ffn"} when it runs
  int64_t ratio = 0;                 ///< the layer's compress ratio (K2's build key)
  int64_t width = 0;                 ///< the step width it runs on (pad rows up to it)
  std::string reason;                ///< why not, when it does not run
};

/// Whether the fused path runs `layer` of the deployment's model for this
/// step. An error where the deployment fails checkDeployment or the layer is
/// not one of the model's; otherwise `runs`, or the reason the engine's own
/// path takes the step.
Result<Eligibility> eligibility(const Deployment &d, int64_t layer, const StepFacts &step);

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_ELIGIBILITY_H
