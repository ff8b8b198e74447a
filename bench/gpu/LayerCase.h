// The host side of the GPU layer check (LayerCheck.cpp), without CUDA so it
// also runs where there is no GPU (LayerReference.cpp): one step of a whole
// layer at the dims its K1 and K2 manifests give, with random weights in the
// real formats, the reference layer's outputs, and the comparison of a step's
// output regions with them (docs/numerics.md section 6).
#ifndef MONODC_BENCH_GPU_LAYERCASE_H
#define MONODC_BENCH_GPU_LAYERCASE_H

#include "LayerFiles.h"

#include "monodc/reference/Layer.h"

#include <map>
#include <string>
#include <vector>

namespace gpu {

namespace ref = monodc::reference;

/// The routed scaling of the reference that the check must reject.
inline constexpr double kOffRoutedScaling = 1.03;

/// One width's case. The routed experts come from `experts`, made on demand.
struct LayerCase {
  ref::LayerDims dims;
  ref::LayerWeights weights;
  ref::ExpertSource experts;
  ref::StepInputs step;
  ref::LayerOutputs want;
  /// The same step with the routed scaling kOffRoutedScaling times too high
  /// (the FFN half recomputed from want's attention half, which it keeps).
  ref::LayerOutputs wantOff;
};

/// A layer's dims read from its K1 and K2 manifests (region shapes); the
/// contract's constants (eps, routed scaling, swiglu limit) are the same for
/// every config.
ref::LayerDims layerDims(const Manifest &k1, const Manifest &k2);

/// Builds the case for launches of `rows` rows, printing how long each part
/// took. With `padRows`, the last `padRows` rows of the step are pad rows
/// (slot_mapping and position -1, NaN in every stream; ref::padStep) and
/// `want` is the reference of the real rows alone: a padded step's real
/// rows must come out as the unpadded step's.
LayerCase makeLayerCase(const Manifest &k1, const Manifest &k2, int rows, unsigned seed,
                        int padRows = 0);

/// A layer of a stretch of the model's layer map (layer_check --layers): its
/// own random weights and routed experts, its step (the stretch's tokens with
/// the streams the previous layer handed over, caches of its own and the
/// compressed keys of its ratio) and the reference layer on that step. A layer
/// that the FFN launch serves takes each rank's attention partial from the
/// reference: its attention runs outside the fused path.
struct StretchLayer {
  ref::LayerWeights weights;
  ref::ExpertSource experts;
  ref::StepInputs step;
  ref::LayerOutputs want;
  std::vector<std::vector<float>> partials; ///< the FFN launch's layers only
};

/// `streams`: the stretch's tokens and the streams handed over; `ratio`: the
/// layer's compress ratio. Prints how long each part took.
StretchLayer makeStretchLayer(const ref::LayerDims &dims, const ref::StepInputs &streams,
                              bool ffnLaunch, int ratio, unsigned seed);

/// `in` with the streams of `from` (a layer fed another layer's inputs).
ref::StepInputs withStreamsOf(ref::StepInputs in, const ref::StepInputs &from);

/// Output regions of K1 and K2, decoded, by region name.
using RegionOutputs = std::map<std::string, std::vector<float>>;

/// The regions the check compares, as the reference gives them.
RegionOutputs referenceRegions(const ref::LayerOutputs &want);

/// One line of the check's table.
struct OutputCheck {
  std::string region;
  std::string bound; ///< what it must meet
  double relativeError = 0, cosine = 1;
  bool nonFinite = false; ///< some value is NaN or infinite (the statistics skip it)
  bool pass = false;
};

struct LayerVerdict {
  std::vector<OutputCheck> checks;
  int tokens = 0, excluded = 0;
  bool pass() const;
};

/// got against want: K1's attention seam and K2's reduced attention output
/// and FFN seam within the stage bounds; the routing as a stage on got's own
/// ffn_y (the router of `weights`, dims' routed scaling): for the tokens that
/// are not near-ties there, the top-6 indices exact and their weights within
/// the stage bounds; every token's x_out cosine >= 0.999 but for want's
/// near-ties (x_out's relative error shown, not bounded: a whole layer is held
/// to the cosine).
LayerVerdict checkLayer(const ref::LayerDims &dims, const ref::LayerWeights &weights,
                        const RegionOutputs &got, const ref::LayerOutputs &want);

/// The FFN launch (the FFN half alone, from each rank's attention partial):
/// the reduced attention output (want.attnOut) and the FFN half's checks of
/// checkLayer.
LayerVerdict checkFfnLaunch(const ref::LayerDims &dims, const ref::LayerWeights &weights,
                            const RegionOutputs &got, const ref::LayerOutputs &want);

/// The output regions of the FFN launch that checkFfnLaunch compares.
const std::vector<std::string> &ffnLaunchOutputs();

/// dims with the routed scaling of the case the check must reject.
ref::LayerDims offDims(ref::LayerDims dims);

void printVerdict(const LayerVerdict &verdict, int rows, const char *title);

} // namespace gpu

#endif
