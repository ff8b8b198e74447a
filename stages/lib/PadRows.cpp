//===- PadRows.cpp - what a stage does with a pad row ---------------------===//
#include "monodc/stages/PadRows.h"

#include <algorithm>

using namespace monodc::dsl;

Region monodc::stages::declareSlotMapping(Launch &launch, const ModelConfig &c) {
  return launch.indexInput("slot_mapping", {launch.options().rows, 1},
                           c.kvCachePages * c.kKvPageTokens, i64);
}

Index monodc::stages::tableRow(Task &t, const Region &positions, const Region &table,
                               Index token) {
  // A position past the table (its rows as given at launch) reads its last
  // row, not outside it.
  if (positions.indexBound() < 1)
    t.fail("a table row from '" + positions.name() + "', which is not an index input");
  Tile last = t.rowsOf(table) - 1.0f;
  return t.toIndex(min(max(t.load(positions, token, 0, 1), t.constant(0.0f)), last));
}

void monodc::stages::skipPadRow(Task &t, const Region &slotMapping, Index token) {
  // 1 for a slot (>= 0), 0 for -1.
  Tile real = min(max(t.load(slotMapping, token, 0, 1) + 1.0f, t.constant(0.0f)), t.constant(1.0f));
  t.skipUnless(t.toIndex(real), SkipScope::PadRow);
}

Tile monodc::stages::unlessPad(const Tile &slot, const Tile &values, float padValue) {
  Task &t = *slot.owner();
  return selectLess(slot, t.constant(0.0f), t.constant(padValue), values);
}
