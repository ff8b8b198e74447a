//===- PadRows.h - what a stage does with a pad row -----------------------===//
//
// A padded step (a graph captured for more rows than the step has) marks its
// pad rows with slot_mapping -1. A pad row reads no KV cache and picks no
// routed expert; per-row stages whose tasks are a row's alone skip it
// (skipPadRow); other dense per-row work (norms, the GEMVs' token columns)
// runs on whatever the row holds and stays in the row. Its outputs are
// unspecified and no real row reads them (docs/numerics.md section 7).
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_STAGES_PADROWS_H
#define MONODC_STAGES_PADROWS_H

#include "monodc/dsl/Launch.h"
#include "monodc/dsl/Task.h"
#include "monodc/stages/ModelConfig.h"

namespace monodc::stages {

/// The step's slot_mapping, index [rows, 1]: each row's KV cache slot, or
/// -1 for a pad row.
dsl::Region declareSlotMapping(dsl::Launch &launch, const ModelConfig &config);

/// Row `token` of an index input [rows, 1] as a row of `table` (positions
/// into the RoPE table): a pad row's -1 becomes row 0 and a position past
/// the table's rows (as given at launch) its last, so that its reads stay
/// inside the table.
dsl::Index tableRow(dsl::Task &task, const dsl::Region &positions, const dsl::Region &table,
                    dsl::Index token);

/// The rest of the task runs only for a real row (slot_mapping[token] >= 0):
/// a pad row's task of a per-row stage skips its work (Task::skipUnless,
/// SkipScope::PadRow) and leaves its rows as they were. Give it before the
/// task's loads of what earlier stages hand over, so that a pad row's task
/// waits for none of them.
void skipPadRow(dsl::Task &task, const dsl::Region &slotMapping, dsl::Index token);

/// `values` where `slot` (a row's slot_mapping, loaded) is a real slot, else
/// `padValue`.
dsl::Tile unlessPad(const dsl::Tile &slot, const dsl::Tile &values, float padValue);

} // namespace monodc::stages

#endif // MONODC_STAGES_PADROWS_H
