//===- AttentionBack.h - split attention, combine, wo_a, wo_b ---*- C++ -*-===//
#ifndef MONODC_STAGES_ATTENTIONBACK_H
#define MONODC_STAGES_ATTENTIONBACK_H

#include "monodc/dsl/Launch.h"
#include "monodc/stages/ModelConfig.h"
#include "monodc/stages/StepIndices.h"

namespace monodc::stages {

/// The attention back of one rank (docs/numerics.md section 4, back steps 1-5) for
/// `heads` local heads: split-K attention over the window keys and the
/// compressed keys (chunks of kAttentionChunk keys, 8 heads a task), the
/// combine with the sink folded in (o = bf16), the inverse RoPE (f32),
/// MXFP8 per head, wo_a per output group, MXFP8(z), wo_b -> the rank's
/// partial.
/// Split-K state of one key source, per (token, head) row and chunk column.
struct ChunkStateRegions {
  dsl::Region max, sum; ///< f32 [rows * heads, chunks] (base 2)
  dsl::Region values;   ///< f32 [rows * heads, chunks * headDim]
};

struct AttentionBackRegions {
  dsl::Region q;                      ///< bf16 [rows, heads * headDim], rotated
  dsl::Region positions, cosSin;      ///< i64 [rows, 1]; f32 [positions, ropeDim]
  dsl::Region slotMapping;            ///< i64 [rows, 1]: -1 marks a pad row
  dsl::Region windowCache;            ///< byte [pages, kvPageBytes]
  dsl::Region compressedCache;        ///< byte [pages, kvPageBytes]
  KeyTableRegions keyTables;          ///< block tables and top-k lists (StepIndices.h)
  dsl::Region sinks;                  ///< f32 [heads]
  ChunkStateRegions windowState, compressedState;
  dsl::Region o;                      ///< bf16 [rows, heads * headDim]
  dsl::Region oCodes, oScales;        ///< MXFP8(rotated o): [groups * rows, group width]
  dsl::Region woA, woAScales;         ///< e4m3 [groups * groupRank, group width] + E8M0
  dsl::Region zCodes, zScales;        ///< MXFP8(z), z = bf16 [rows, groups * groupRank]
  dsl::Region woB, woBScales;         ///< e4m3 [hidden, groups * groupRank] + E8M0
  dsl::Region partial;                ///< bf16 [rows, hidden]
};

/// Declares the regions of the attention back for `heads` local heads.
AttentionBackRegions declareAttentionBack(dsl::Launch &launch, const ModelConfig &config,
                                          int64_t heads);
/// `ratio` is the layer's compress ratio (StepIndices.h: compressedKeySlots).
void addAttentionBack(dsl::Launch &launch, const ModelConfig &config, int64_t heads,
                      int64_t ratio, const AttentionBackRegions &regions);

} // namespace monodc::stages

#endif
