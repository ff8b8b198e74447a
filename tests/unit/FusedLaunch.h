// Shared by the simulator tests: a registered launch built at a test's grid
// and taken through the fusion passes, ready to simulate.
#ifndef MONODC_TESTS_FUSEDLAUNCH_H
#define MONODC_TESTS_FUSEDLAUNCH_H

#include "monodc/Transforms/Passes.h"
#include "monodc/stages/Launches.h"

#include <gtest/gtest.h>

#include <string>

namespace monodc::testing {

/// Launch `name` of `c` at `rows` and TP `tp` on `grid` CTAs (0: the arch's
/// compute units), fused with the launch's own place in the step. A failure
/// is a test failure naming it, and the module is then null.
inline mlir::OwningOpRef<mlir::ModuleOp> buildFusedLaunch(mlir::MLIRContext &ctx,
                                                          const std::string &name,
                                                          const stages::ModelConfig &c,
                                                          int64_t rows, int64_t tp = 2,
                                                          int64_t grid = 0, int64_t ratio = 2) {
  stages::BuildParams params;
  params.rows = rows;
  params.tp = tp;
  params.grid = grid;
  params.ratio = ratio;
  auto module = stages::buildLaunch(ctx, name, c, params);
  EXPECT_TRUE(static_cast<bool>(module)) << name << ": "
                                         << (module ? "" : llvm::toString(module.takeError()));
  if (!module)
    return nullptr;
  if (failed(mono::runFusionPipeline(**module))) {
    ADD_FAILURE() << name << ": the fusion passes failed";
    return nullptr;
  }
  return std::move(*module);
}

/// The launch of a module built as above.
inline mono::LaunchOp launchOf(mlir::ModuleOp module) {
  return *module.getOps<mono::LaunchOp>().begin();
}

} // namespace monodc::testing

#endif
