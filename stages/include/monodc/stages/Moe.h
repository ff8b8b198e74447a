//===- Moe.h - MoE router, routing and the shared expert --------*- C++ -*-===//
//
// docs/numerics.md section 5: the router GEMV (bf16 weights, f32 logits), the routing
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
  /// experts' plan (left undeclared, it is not written); a pad row's pairs
  /// hold `experts` (no expert), which sorts after every real one.
  dsl::Region pairExperts;
  /// index [rows, 1]: the step's slot_mapping; a pad row (-1) picks nothing:
  /// indices -1, weights 0.
  dsl::Region slotMapping;
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
/// In parts, so that other work can run between them: gate/up, the
/// activation (which waits for every gate/up task of its token), then the
/// down projection (which waits for every token's h).
void addSharedExpertGateUp(dsl::Launch &launch, const SharedExpertRegions &regions);
void addSharedExpertAct(dsl::Launch &launch, const ModelConfig &config, int64_t intermediate,
                        const SharedExpertRegions &regions);
void addSharedExpertDown(dsl::Launch &launch, const ModelConfig &config,
                         const SharedExpertRegions &regions);

/// The routed experts (docs/numerics.md §5, a8w4) for the step's tokens and their
/// top-k: xr = MXFP8r(x); for each (token, k) with expert e: g, u = xr .
/// W1_e^T, xr . W3_e^T in f32; h = bf16(g' sigmoid(g') clamp(u)), g' =
/// min(g, limit); d = MXFP8r(h) . W2_e^T in f32; then per token routed =
/// bf16(routed + bf16(d_k w_k)) in top-k order and out = bf16(routed + shared).
/// Weights are MXFP4 in AITER's shuffled layouts, experts stacked along rows.
struct RoutedExpertRegions {
  dsl::Region x;                ///< bf16 [rows, H]
  dsl::Region indices, weights; ///< f32 [rows, topK] (the routing)
  dsl::Region pairExperts;      ///< f32 [1, rows topK] (the router's)
  /// f32 [5, rows topK], see kPlan*: the (token, k) pairs in expert order
  /// (stable); the slots (at most kRoutedGroup consecutive places of one
  /// expert) with their expert, first place and count; each pair's row in
  /// the slot-row buffers.
  dsl::Region plan;
  dsl::Region tokenCodes, tokenScales; ///< MXFP8r(x) of each token, token order
  dsl::Region xCodes, xScales;  ///< the same of each place's token, place order
  dsl::Region w13, w13Scales;   ///< e2m1 [E 2I, H] (16-row gate/up tiles), shuffled E8M0
  /// MXFP8r(h) [slots G, I]: slot s's tokens at rows [sG, sG + count)
  /// (the rest of its rows hold the code of 0).
  dsl::Region hCodes, hScales;
  dsl::Region w2, w2Scales;     ///< e2m1 [E H, I], shuffled E8M0
  /// f32 [slots G, H] in slot rows, written only up to each slot's count.
  dsl::Region down;
  dsl::Region shared;           ///< bf16 [rows, H]: the shared expert's output
  dsl::Region out;              ///< bf16 [rows, H]: the rank's partial
};
/// Tokens a routed-expert task takes together: one tensor-core token tile.
constexpr int64_t kRoutedGroup = 8;
/// The rows of the routed plan.
enum RoutedPlanRow : int64_t {
  kPlanPairAtPlace = 0, ///< the pair at each place of the expert order
  kPlanSlotExpert = 1,  ///< each slot's expert (-1 past the last slot and for pad rows')
  kPlanSlotFirst = 2,   ///< each slot's first place (rows topK past the last)
  kPlanSlotCount = 3,   ///< each slot's places (0 past the last and for pad rows')
  kPlanPairRow = 4,     ///< each pair's row in the slot-row buffers
  kPlanRows = 5
};
/// Declares the routed experts' regions for intermediate `intermediate`.
RoutedExpertRegions declareRoutedExperts(dsl::Launch &launch, const ModelConfig &config,
                                         int64_t intermediate, const dsl::Region &x,
                                         const RouterRegions &router, const dsl::Region &shared);
/// In six parts: MXFP8r(x) of each token (routed.xq); the plan; those
/// codes in its order (routed.xr); the gate/up GEMV with the activation
/// (routed.ug); the down GEMV (up to `down`, routed.down); the combine with
/// the shared expert's output. The GEMVs take a slot of up to kRoutedGroup
/// tokens of one expert a task (the union of experts), so each expert
/// weight is read and decoded once for all its tokens of the step (fewer
/// than kRoutedGroup: once a slot); both are dynamic stages.
void addRoutedTokens(dsl::Launch &launch, const RoutedExpertRegions &regions);
void addRoutedPlan(dsl::Launch &launch, const ModelConfig &config,
                   const RoutedExpertRegions &regions);
void addRoutedInput(dsl::Launch &launch, const ModelConfig &config,
                    const RoutedExpertRegions &regions);
void addRoutedGateUp(dsl::Launch &launch, const ModelConfig &config, int64_t intermediate,
                     const RoutedExpertRegions &regions);
void addRoutedDown(dsl::Launch &launch, const ModelConfig &config,
                   const RoutedExpertRegions &regions);
void addRoutedCombine(dsl::Launch &launch, const ModelConfig &config,
                      const RoutedExpertRegions &regions);

} // namespace monodc::stages

#endif
