//===- StepIndices.h - a step's indices as a serving engine holds them ----===//
//
// Positions (int64), block tables (int32) and the index source's top-k lists
// (int32), and the key slots the attention back computes from them
// (docs/numerics.md section 4: "Keys for a token").
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_STAGES_STEPINDICES_H
#define MONODC_STAGES_STEPINDICES_H

#include "monodc/dsl/Launch.h"
#include "monodc/dsl/Task.h"
#include "monodc/stages/ModelConfig.h"

namespace monodc::stages {

/// The RoPE table, f32 [positions, ropeDim], as long as the positions the
/// serving engine serves: its rows are given at launch
/// (config.ropePositions is only what a simulation allocates).
dsl::Region declareRopeTable(dsl::Launch &launch, const ModelConfig &config);

/// Each row's position, i64 [rows, 1] (a pad row's may be -1), a row of
/// `ropeTable`: its bound grows with the table's rows given at launch.
dsl::Region declarePositions(dsl::Launch &launch, const ModelConfig &config,
                             const dsl::Region &ropeTable);

/// A KV cache (`fp8_ds_mla` pages, byte [pages, kvPageBytes]) whose page
/// count the serving engine gives at each launch (config.kvCachePages is only
/// what a simulation allocates): written in place by the KV insert, or read.
enum class CacheUse { Written, Read };
dsl::Region declareCache(dsl::Launch &launch, const ModelConfig &config, const std::string &name,
                         CacheUse use);

/// What a row's keys are found through: the request's window-cache and
/// compressed-cache block tables, i32 [rows, pages] (logical page -> cache
/// page; an entry outside the cache, as sized at launch, masks its keys),
/// whose pages a row (config.blockTablePages() only what a simulation
/// allocates) the serving engine gives at launch, and the index source's
/// top-k list of compressed rows, i32 [rows, compressedKeys] (-1 masked).
struct KeyTableRegions {
  dsl::Region blockTable, compressedBlockTable, topk;
};
/// The block tables count pages of `windowCache` and `compressedCache`; the
/// top-k lists' rows grow with `ropeTable`'s positions.
KeyTableRegions declareKeyTables(dsl::Launch &launch, const ModelConfig &config,
                                 const dsl::Region &windowCache,
                                 const dsl::Region &compressedCache,
                                 const dsl::Region &ropeTable);

/// The cache slots of window keys [first, first + count) of row `token`
/// (the window of position p is positions max(0, p - windowKeys + 1) .. p,
/// key j at position max(0, p - windowKeys + 1) + j): -1 past p, for a pad
/// row, past the block table's pages, and where it names no page of `cache`.
dsl::Tile windowKeySlots(dsl::Task &task, const ModelConfig &config,
                         const dsl::Region &positions, const dsl::Region &slotMapping,
                         const KeyTableRegions &tables, const dsl::Region &cache,
                         dsl::Index token, dsl::Index first, int64_t count);

/// The cache slots of compressed keys [first, first + count) of row `token`
/// at compress ratio `ratio`: entry j of the top-k list names compressed row
/// i, at compressed slot table[i / B] * B + i % B; -1 where j >= n_c =
/// min((p + 1) div ratio, compressedKeys), where i is -1 or names a row not
/// yet written (i >= (p + 1) div ratio), for a pad row, and where the block
/// table names no page of `cache`. Ratio 0: every key masked.
dsl::Tile compressedKeySlots(dsl::Task &task, const ModelConfig &config, int64_t ratio,
                             const dsl::Region &positions, const dsl::Region &slotMapping,
                             const KeyTableRegions &tables, const dsl::Region &cache,
                             dsl::Index token, dsl::Index first, int64_t count);

} // namespace monodc::stages

#endif // MONODC_STAGES_STEPINDICES_H
