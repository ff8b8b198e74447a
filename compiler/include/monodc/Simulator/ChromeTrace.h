//===- ChromeTrace.h - simulator schedules as a Chrome/Perfetto trace -*- C++ -*-===//
//
// Writes the slices the simulator records (Schedule::trace) in the Chrome
// trace event format, which Perfetto (ui.perfetto.dev) and chrome://tracing
// open: a process per run and rank, a track per CTA, a slice per piece of a
// task ("stage task") and per wait ("wait flags"). The clock is the
// scheduler's turn: one turn shows as one microsecond.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_SIMULATOR_CHROMETRACE_H
#define MONODC_SIMULATOR_CHROMETRACE_H

#include "monodc/Simulator/Simulator.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

namespace monodc::sim {

/// One simulated run (a schedule) of `ranks` ranks.
struct TraceRun {
  std::string label;  ///< e.g. "schedule 1 (random, seed 1001)"
  int64_t ranks = 1;
  std::vector<TraceSlice> slices;
};

void writeChromeTrace(llvm::raw_ostream &os, llvm::ArrayRef<TraceRun> runs);

} // namespace monodc::sim

#endif
