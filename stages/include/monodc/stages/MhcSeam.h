//===- MhcSeam.h - the mHC seam between sublayers ---------------*- C++ -*-===//
//
// docs/numerics.md section 3 as four stages: fold (R', u and the sums of squares per
// column slice), mix (the 24 mixes of R' for all tokens), gate (pre, post and
// the Sinkhorn comb per token) and the seam norm (AttentionFront.h). The
// norm needs only the fold; mix and gate feed the next seam alone.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_STAGES_MHCSEAM_H
#define MONODC_STAGES_MHCSEAM_H

#include "monodc/dsl/Launch.h"
#include "monodc/stages/ModelConfig.h"

namespace monodc::stages {

struct SeamRegions {
  // Inputs: R [rows, 4H] (stream-major), x [rows, H], the previous seam's
  // post [rows, 4], comb [rows, 16] (comb[h][o]) and pre [rows, 4].
  dsl::Region residual, x, postIn, combIn, preIn;
  // Weights: fn f32 [24, 4H], base f32 [24], scale f32 [3].
  dsl::Region fn, base, scale;
  // Outputs: R' [rows, 4H], pre, post [rows, 4], comb [rows, 16].
  dsl::Region residualOut, preOut, postOut, combOut;
  // Scratch: u [rows, H] (bf16), sums of squares [rows, slices], mixes [rows, 24].
  dsl::Region u, sumsOfSquares, mixes;
  // The step's slot_mapping, where the launch has one: a pad row's fold and
  // gate are skipped (its streams and gates are then what they were).
  dsl::Region slotMapping = {};
};

/// Declares the seam's regions in `launch` with the names the tests use, each
/// prefixed by `prefix` (a second seam in one launch: "ffn_"). With `x` the
/// seam folds that region (an earlier stage's output) instead of an input.
SeamRegions declareSeamRegions(dsl::Launch &launch, const ModelConfig &config,
                               const std::string &prefix = "", const dsl::Region *x = nullptr);

/// Fold: R', u and the sums of squares, what the seam norm reads. `prefix`
/// names the stages ("seam" -> seam.fold).
void addSeamFold(dsl::Launch &launch, const ModelConfig &config, const std::string &prefix,
                 const SeamRegions &regions);

/// Mix and gate (after the fold): pre, post and comb, which only the next
/// seam reads, so a fused launch places them where they hold up no chain.
/// `dynamicMix`: the mix's tasks are claimed by whichever CTA is free.
void addSeamMixes(dsl::Launch &launch, const ModelConfig &config, const std::string &prefix,
                  const SeamRegions &regions, bool dynamicMix);

} // namespace monodc::stages

#endif
