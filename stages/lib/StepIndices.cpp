//===- StepIndices.cpp - a step's indices and the keys found through them -===//
#include "monodc/stages/StepIndices.h"

#include "monodc/stages/PadRows.h"

using namespace monodc::dsl;
using namespace monodc::stages;

namespace {

/// The cache slot of `place` (a key position or a compressed row, a whole
/// number >= 0) through a row's block table: entry floor(place / B) names
/// its page, place mod B its record. -1 where the entry is not a page of the
/// cache (the pages given at launch) or the place is past the table (a
/// position beyond its bound): a slot is never outside the cache.
Tile slotThroughTable(Task &t, const Region &table, const Region &cache, Index token,
                      const Tile &place) {
  const float pageTokens = float(ModelConfig::kKvPageTokens);
  const float lastPlace = float(table.cols()) * pageTokens - 1.0f;
  Tile page = min(floor(place * (1.0f / pageTokens)), t.constant(float(table.cols() - 1)));
  Tile block = gather(t.loadRow(table, token), page);
  Tile slot = fma(block, t.constant(pageTokens), place - page * pageTokens);
  slot = selectLess(block, t.constant(0.0f), t.constant(-1.0f), slot);
  slot = selectLess(block, t.rowsOf(cache), slot, t.constant(-1.0f));
  return selectGreater(place, t.constant(lastPlace), t.constant(-1.0f), slot);
}

/// A row's position (0 for a pad row's -1: its keys are masked anyway).
Tile positionOf(Task &t, const Region &positions, Index token) {
  return max(t.load(positions, token, 0, 1), t.constant(0.0f));
}

} // namespace

Region monodc::stages::declarePositions(Launch &launch, const ModelConfig &c) {
  return launch.indexInput("positions", {launch.options().rows, 1}, c.ropePositions, i64);
}

Region monodc::stages::declareCache(Launch &launch, const ModelConfig &c, const std::string &name,
                                    CacheUse use) {
  std::vector<int64_t> shape{c.kvCachePages, c.kvPageBytes()};
  return use == CacheUse::Written ? launch.output(name, byte, shape, Rows::AtLaunch)
                                  : launch.input(name, byte, shape, Rows::AtLaunch);
}

KeyTableRegions monodc::stages::declareKeyTables(Launch &launch, const ModelConfig &c,
                                                  const Region &windowCache,
                                                  const Region &compressedCache) {
  const int64_t rows = launch.options().rows;
  KeyTableRegions r{
      launch.indexInput("block_table", {rows, c.blockTablePages()}, c.kvCachePages, i32),
      launch.indexInput("compressed_block_table", {rows, c.blockTablePages()}, c.kvCachePages,
                        i32),
      launch.indexInput("index_topk", {rows, c.compressedKeys}, c.ropePositions, i32)};
  launch.indexesRowsOf(r.blockTable, windowCache);
  launch.indexesRowsOf(r.compressedBlockTable, compressedCache);
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
