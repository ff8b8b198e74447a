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
void addSharedExpert(dsl::Launch &launch, const ModelConfig &config, int64_t intermediate,
                     const SharedExpertRegions &regions);

} // namespace monodc::stages

#endif
