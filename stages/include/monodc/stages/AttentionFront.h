//===- AttentionFront.h - seam norm, wqkv and the q/kv norms ----*- C++ -*-===//
#ifndef MONODC_STAGES_ATTENTIONFRONT_H
#define MONODC_STAGES_ATTENTIONFRONT_H

#include "monodc/dsl/Launch.h"
#include "monodc/stages/GemvStage.h"
#include "monodc/stages/ModelConfig.h"

namespace monodc::stages {

/// The seam norm: y = bf16(u * rsqrt(sum u^2 / H + eps) * w), one rounding,
/// then MXFP8(y) (codes, scales) for the GEMV that follows. One task a token.
struct SeamNormRegions {
  dsl::Region u, weight, y, codes, scales;
};
void addSeamNorm(dsl::Launch &launch, const ModelConfig &config, const std::string &name,
                 const SeamNormRegions &regions);

/// qkv = bf16(MXFP8(y) . wqkv^T). One task per 16 weight rows, all tokens.
struct WqkvRegions {
  dsl::Region codes, scales, weight, weightScales, qkv;
};
void addWqkvGemv(dsl::Launch &launch, const ModelConfig &config, const WqkvRegions &regions);
/// That stage's description (its task count: gemvStageTasks).
GemvStage wqkvGemvStage(const dsl::Launch &launch, const WqkvRegions &regions);

/// out = bf16(x * rsqrt(mean(x^2) + eps) * w) over columns [col, col + width)
/// of `source`. Used for the q norm and the kv norm. One task a token. With
/// `codes` (and `scales`) named, the task also stores MXFP8(out) there: the
/// q norm of K1, whose wq_b then needs no quantizing stage in between.
struct RowNormRegions {
  dsl::Region source, weight, out;
  int64_t col = 0;
  int64_t width = 0;
  dsl::Region codes, scales; ///< optional: e4m3 [rows, width], e8m0 [rows, width / 32]
};
void addRowNorm(dsl::Launch &launch, const ModelConfig &config, const std::string &name,
                const RowNormRegions &regions);

/// The key's RoPE (docs/numerics.md 4, front 3): dims [kvDim - ropeDim, kvDim) of kn
/// rotated as interleaved pairs by the token's row of the cos/sin table, in
/// f32 with one bf16 rounding; the other dims unchanged. One task a token.
struct KeyRopeRegions {
  dsl::Region kn;        ///< bf16 [rows, kvDim]
  dsl::Region positions; ///< f32 [rows, 1], whole numbers
  dsl::Region cosSin;    ///< f32 [positions, ropeDim]: cos then sin
  dsl::Region k;         ///< bf16 [rows, kvDim]
};
void addKeyRope(dsl::Launch &launch, const ModelConfig &config, const KeyRopeRegions &regions);

/// The KV insert (docs/numerics.md 4, front 4): each token's rotated key as one
/// fp8_ds_mla record into its cache slot; slot -1 (a pad row) is skipped.
/// The host keeps the step's slots distinct. One task a token.
struct KvInsertRegions {
  dsl::Region k;     ///< bf16 [rows, kvDim], rotated
  dsl::Region slots; ///< index input [rows, 1]: the slot, or -1
  dsl::Region cache; ///< byte [pages, kvPageBytes]
};
void addKvInsert(dsl::Launch &launch, const ModelConfig &config, const KvInsertRegions &regions);

/// The query (docs/numerics.md 4, front 5): q = bf16(MXFP8(qn) . wq_b^T) viewed as
/// [heads, headDim], then RoPE on each head's last ropeDim dims as for the key.
struct QueryRegions {
  dsl::Region qn, positions, cosSin; ///< bf16 [rows, qRank]; as KeyRopeRegions
  dsl::Region weight, weightScales;  ///< wq_b e4m3 [heads * headDim, qRank] + E8M0
  dsl::Region codes, scales;         ///< MXFP8(qn): e4m3 [rows, qRank], e8m0
  dsl::Region unrotated;             ///< bf16 [rows, heads * headDim]
  dsl::Region q;                     ///< bf16 [rows, heads * headDim]
};
/// `qnQuantized`: MXFP8(qn) is already in `codes`, `scales` (the q norm
/// stored it), so there is no front.q_quant stage.
void addQuery(dsl::Launch &launch, const ModelConfig &config, int64_t heads,
              const QueryRegions &regions, bool qnQuantized = false);

} // namespace monodc::stages

#endif // MONODC_STAGES_ATTENTIONFRONT_H
