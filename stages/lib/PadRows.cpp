//===- PadRows.cpp - what a stage does with a pad row ---------------------===//
#include "monodc/stages/PadRows.h"

using namespace monodc::dsl;

Region monodc::stages::declareSlotMapping(Launch &launch, const ModelConfig &c) {
  return launch.indexInput("slot_mapping", {launch.options().rows, 1},
                           c.kvCachePages * c.kKvPageTokens, i64);
}

Index monodc::stages::tableRow(Task &t, const Region &positions, Index token) {
  return t.toIndex(max(t.load(positions, token, 0, 1), t.constant(0.0f)));
}

Tile monodc::stages::unlessPad(const Tile &slot, const Tile &values, float padValue) {
  Task &t = *slot.owner();
  return selectLess(slot, t.constant(0.0f), t.constant(padValue), values);
}
