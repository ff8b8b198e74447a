//===- StepIndices.cpp - a step's indices and the keys found through them -===//
#include "monodc/stages/StepIndices.h"

#include "monodc/stages/PadRows.h"

using namespace monodc::dsl;
using namespace monodc::stages;

namespace {

/// The cache slot of `place` (a key position or a compressed row, a whole
/// number >= 0) through a row's block table: entry floor(place / B) names
/// its page, place mod B its record. -1 where the entry is not a page of the
/// cache (the pages given at launch) or the place is past the table (its
/// pages a row given at launch): a slot is never outside the cache.
Tile slotThroughTable(Task &t, const Region &table, const Region &cache, Index token,
                      const Tile &place) {
  const float pageTokens = float(ModelConfig::kKvPageTokens);
  Tile page = floor(place * (1.0f / pageTokens));
  // One entry a place, at a column from data (loadAt keeps it in the row).
  Tile block = t.loadAt(table, token, page);
  Tile slot = fma(block, t.constant(pageTokens), place - page * pageTokens);
  slot = selectLess(block, t.constant(0.0f), t.constant(-1.0f), slot);
  slot = selectLess(block, t.rowsOf(cache), slot, t.constant(-1.0f));
  return selectLess(page, t.colsOf(table), slot, t.constant(-1.0f));
}

/// A row's position (0 for a pad row's -1: its keys are masked anyway).
Tile positionOf(Task &t, const Region &positions, Index token) {
  return max(t.load(positions, token, 0, 1), t.constant(0.0f));
}

} // namespace

Region monodc::stages::declareRopeTable(Launch &launch, const ModelConfig &c) {
  return launch.weight("cos_sin", f32, {c.ropePositions, c.ropeDim}, Rows::AtLaunch);
}

Region monodc::stages::declarePositions(Launch &launch, const ModelConfig &c,
                                        const Region &ropeTable) {
  Region positions =
      launch.indexInput("positions", {launch.options().rows, 1}, c.ropePositions, i64);
  launch.indexesRowsOf(positions, ropeTable);
  return positions;
}

Region monodc::stages::declareCache(Launch &launch, const ModelConfig &c, const std::string &name,
                                    CacheUse use) {
  std::vector<int64_t> shape{c.kvCachePages, c.kvPageBytes()};
  return use == CacheUse::Written ? launch.output(name, byte, shape, Rows::AtLaunch)
                                  : launch.input(name, byte, shape, Rows::AtLaunch);
}

KeyTableRegions monodc::stages::declareKeyTables(Launch &launch, const ModelConfig &c,
                                                  const Region &windowCache,
                                                  const Region &compressedCache,
                                                  const Region &ropeTable) {
  const int64_t rows = launch.options().rows;
  KeyTableRegions r{
      launch.indexInput("block_table", {rows, c.blockTablePages()}, c.kvCachePages, i32,
                        Cols::AtLaunch),
      launch.indexInput("compressed_block_table", {rows, c.blockTablePages()}, c.kvCachePages,
                        i32, Cols::AtLaunch),
      launch.indexInput("index_topk", {rows, c.compressedKeys}, c.ropePositions, i32)};
  launch.indexesRowsOf(r.blockTable, windowCache);
  launch.indexesRowsOf(r.compressedBlockTable, compressedCache);
  launch.indexesRowsOf(r.topk, ropeTable);
  return r;
}

Tile monodc::stages::windowKeySlots(Task &t, const ModelConfig &c, const Region &positions,
                                    const Region &slotMapping, const KeyTableRegions &tables,
                                    const Region &cache, Index token, Index first,
                                    int64_t count) {
  Tile p = positionOf(t, positions, token);
  Tile oldest = max(p - float(c.windowKeys - 1), t.constant(0.0f));
  Tile place = oldest + t.iota(first, count);
  Tile slot = slotThroughTable(t, tables.blockTable, cache, token, place);
  slot = selectGreater(place, p, t.constant(-1.0f), slot);
  return unlessPad(t.load(slotMapping, token, 0, 1), slot, -1.0f);
}

Tile monodc::stages::compressedKeySlots(Task &t, const ModelConfig &c, int64_t ratio,
                                        const Region &positions, const Region &slotMapping,
                                        const KeyTableRegions &tables, const Region &cache,
                                        Index token, Index first, int64_t count) {
  if (ratio == 0)
    return t.constant(-1.0f, count);
  Tile p = positionOf(t, positions, token);
  // Rows written so far, (p + 1) div ratio; the list's first n_c entries count.
  Tile written = floor((p + 1.0f) * (1.0f / float(ratio)));
  Tile picks = min(written, t.constant(float(c.compressedKeys)));
  Tile row = t.load(tables.topk, token, first, count);
  Tile slot = slotThroughTable(t, tables.compressedBlockTable, cache, token,
                               max(row, t.constant(0.0f)));
  slot = selectLess(row, t.constant(0.0f), t.constant(-1.0f), slot);
  slot = selectLess(row, written, slot, t.constant(-1.0f));
  slot = selectLess(t.iota(first, count), picks, slot, t.constant(-1.0f));
  return unlessPad(t.load(slotMapping, token, 0, 1), slot, -1.0f);
}
