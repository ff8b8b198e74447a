//===- AllReduce.h - the exact tensor-parallel all-reduce -------*- C++ -*-===//
//
// docs/numerics.md section 4.6: every rank pushes its bf16 partial to every rank's
// peer buffer (system scope); each rank then sums the partials in rank order
// in f32 and rounds once to bf16, so all ranks hold bit-identical results.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_STAGES_ALLREDUCE_H
#define MONODC_STAGES_ALLREDUCE_H

#include "monodc/dsl/Launch.h"

namespace monodc::stages {

struct AllReduceRegions {
  dsl::Region partial; ///< bf16 [rows, width], this rank's
  dsl::Region peer;    ///< bf16 [rows, width] peer region
  dsl::Region out;     ///< bf16 [rows, width], the same on every rank
  /// The step's slot_mapping, where the launch has one: a pad row's sum is
  /// skipped (its push still runs: no peer store may follow a skip).
  dsl::Region slotMapping = {};
};

/// Stages `<prefix>.push` and `<prefix>.reduce`, one task per token.
void addAllReduce(dsl::Launch &launch, const std::string &prefix, const AllReduceRegions &regions);

} // namespace monodc::stages

#endif
