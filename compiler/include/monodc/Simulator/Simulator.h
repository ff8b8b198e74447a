//===- Simulator.h - execute a launch on the CPU ----------------*- C++ -*-===//
#ifndef MONODC_SIMULATOR_SIMULATOR_H
#define MONODC_SIMULATOR_SIMULATOR_H

#include "monodc/Simulator/LaunchMemory.h"

namespace monodc::sim {

/// Executes `launch` op by op on `memory`: stages in order, every task of a
/// stage. Tile building blocks reproduce the device library's arithmetic
/// order for the launch's block size (reductions, MXFP8, GEMV), so results
/// can be compared with a GPU run. The simulator never calls the CPU
/// reference. A read or write outside a region is an error naming the op.
/// (First version: sequential; the resumable-CTA scheduler comes with the
/// mailbox passes.)
mlir::LogicalResult simulate(mono::LaunchOp launch, LaunchMemory &memory);

} // namespace monodc::sim

#endif
