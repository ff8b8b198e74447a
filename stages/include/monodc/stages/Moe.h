//===- Moe.h - MoE router, routing and the shared expert --------*- C++ -*-===//
//
// DSV41.md section 5: the router GEMV (bf16 weights, f32 logits), the routing
// (sqrt(softplus) + bias, stable top-k, weights renormalized from the
// unbiased scores) and the shared expert (MXFP8 GEMVs, clamped SiLU with its
// two bf16 roundings).
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_STAGES_MOE_H
#define MONODC_STAGES_MOE_H

#include "monodc/dsl/Launch.h"
#include "monodc/stages/ModelConfig.h"
#include "monodc/stages/Quantize.h"

namespace monodc::stages {

struct RouterRegions {
  dsl::Region x;        ///< bf16 [rows, H]
  dsl::Region gate;     ///< bf16 [experts, H]
  dsl::Region bias;     ///< f32 [experts]
  dsl::Region logits;   ///< f32 [rows, experts]
  dsl::Region indices;  ///< f32 [rows, topK] (exact integers)
  dsl::Region weights;  ///< f32 [rows, topK]
  /// f32 [1, rows topK]: the indices again, all in one row, for the routed
  /// experts' plan (left undeclared, it is not written).
  dsl::Region pairExperts;
};
void addRouter(dsl::Launch &launch, const ModelConfig &config, const RouterRegions &regions);

struct SharedExpertRegions {
  dsl::Region codes, scales;                  ///< MXFP8 of x: e4m3 [rows, H], e8m0 [rows, H/32]
  dsl::Region gateUp, gateUpScale;            ///< e4m3 [2I, H] (gate rows, then up rows), e8m0
  dsl::Region down, downScale;                ///< e4m3 [H, I], e8m0 [H/32, I/32]
  dsl::Region gateUpOut;                      ///< bf16 [rows, 2I]
  dsl::Region hCodes, hScales;                ///< MXFP8 of h: e4m3 [rows, I], e8m0 [rows, I/32]
  dsl::Region out;                            ///< bf16 [rows, H]
};
/// In two parts, so that other work can run between them: gate/up and the
/// activation, then the down projection (which waits for every token's h).
void addSharedExpertUp(dsl::Launch &launch, const ModelConfig &config, int64_t intermediate,
                       const SharedExpertRegions &regions);
void addSharedExpertDown(dsl::Launch &launch, const ModelConfig &config,
                         const SharedExpertRegions &regions);

/// The routed experts (DSV41.md §5, a8w4) for the step's tokens and their
/// top-k: xr = MXFP8r(x); for each (token, k) with expert e: g, u = xr .
/// W1_e^T, xr . W3_e^T in f32; h = bf16(g' sigmoid(g') clamp(u)), g' =
/// min(g, limit); d = MXFP8r(h) . W2_e^T in f32; then per token routed =
/// bf16(routed + bf16(d_k w_k)) in top-k order and out = bf16(routed + shared).
/// Weights are MXFP4 in AITER's shuffled layouts, experts stacked along rows.
struct RoutedExpertRegions {
  dsl::Region x;                ///< bf16 [rows, H]
  dsl::Region indices, weights; ///< f32 [rows, topK] (the routing)
  dsl::Region pairExperts;      ///< f32 [1, rows topK] (the router's)
  /// f32 [3, rows topK]: the (token, k) pairs in expert order (stable), the
  /// expert at each place of that order, and each pair's place in it.
  dsl::Region plan;
  dsl::Region xCodes, xScales;  ///< MXFP8r(x)
  dsl::Region w13, w13Scales;   ///< e2m1 [E 2I, H] (16-row gate/up tiles), shuffled E8M0
  dsl::Region h;                ///< bf16 [rows topK, I], pairs in plan order
  dsl::Region hCodes, hScales;  ///< MXFP8r(h)
  dsl::Region w2, w2Scales;     ///< e2m1 [E H, I], shuffled E8M0
  dsl::Region down;             ///< f32 [rows topK, H], pairs in plan order
  dsl::Region shared;           ///< bf16 [rows, H]: the shared expert's output
  dsl::Region out;              ///< bf16 [rows, H]: the rank's partial
};
/// Declares the routed experts' regions for intermediate `intermediate`.
RoutedExpertRegions declareRoutedExperts(dsl::Launch &launch, const ModelConfig &config,
                                         int64_t intermediate, const dsl::Region &x,
                                         const RouterRegions &router, const dsl::Region &shared);
/// In three parts: MXFP8r(x) and the plan; the GEMVs and the activation (up
/// to `down`); the combine with the shared expert's output. The GEMVs take
/// the pairs in the plan's order, so that pairs of one expert are claimed
/// one after another and all but the first read its weights from L2.
void addRoutedInput(dsl::Launch &launch, const RoutedExpertRegions &regions);
void addRoutedGemvs(dsl::Launch &launch, const ModelConfig &config, int64_t intermediate,
                    const RoutedExpertRegions &regions);
void addRoutedCombine(dsl::Launch &launch, const ModelConfig &config,
                      const RoutedExpertRegions &regions);

} // namespace monodc::stages

#endif
