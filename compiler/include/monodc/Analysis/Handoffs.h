//===- Handoffs.h - who writes what a stage reads ---------------*- C++ -*-===//
//
// The data hand-offs of a launch: for every stage that reads a region written
// by an earlier stage, which tasks of the producer each consumer task needs.
// Index expressions are pure functions of the task id, so the analysis
// evaluates every task's windows exactly.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_ANALYSIS_HANDOFFS_H
#define MONODC_ANALYSIS_HANDOFFS_H

#include "monodc/Dialect/Mono/MonoDialect.h"

#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace monodc::mono {

/// The index values of one task of `stage` (task id and arith on it).
mlir::FailureOr<llvm::DenseMap<mlir::Value, int64_t>> evaluateIndices(StageOp stage,
                                                                      int64_t task);

/// A contiguous run of producer tasks.
struct TaskRange {
  int64_t first = 0;
  int64_t count = 0;
};

/// `consumer` reads `regions`, written by `producer`, an earlier stage.
struct Handoff {
  StageOp producer;
  StageOp consumer;
  std::vector<RegionOp> regions;
  /// The first op of the consumer that reads one of them.
  mlir::Operation *firstRead = nullptr;
  /// Per consumer task: the producer tasks whose stores it reads (hull).
  std::vector<TaskRange> needs;
  /// For peer memory: the rank whose producer tasks these are (-1: local).
  int64_t peerRank = -1;
};

/// Checks the launch's plan and returns its hand-offs. A read whose row
/// comes from data may read any row: it needs the window written in every
/// row, and every producer task that writes it. Refuses, with the stage,
/// the region and the reason: a read of scratch/output/peer memory with no
/// writer in an earlier stage (none at all, the same stage, or a later one),
/// a read of words no producer task writes (for a row from data: in any
/// row), a column from data, a region with two writer stages, a word written
/// by two tasks of a stage.
mlir::FailureOr<std::vector<Handoff>> analyzeHandoffs(LaunchOp launch);

} // namespace monodc::mono

#endif
