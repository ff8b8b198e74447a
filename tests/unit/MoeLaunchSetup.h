// Shared by the MoE tests: building a MoE launch for the simulator and
// loading its router and shared-expert inputs.
#ifndef MONODC_TESTS_MOELAUNCHSETUP_H
#define MONODC_TESTS_MOELAUNCHSETUP_H

#include "FusedLaunch.h"
#include "MemoryInputs.h"

#include "monodc/Simulator/Simulator.h"
#include "monodc/reference/Reference.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace monodc::testing {

/// A MoE launch (`moe_router_shared` or `moe`) through the fusion passes,
/// with its memory.
struct MoeLaunch {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mono::LaunchOp launch;
  std::unique_ptr<sim::LaunchMemory> memory;
};

inline std::unique_ptr<MoeLaunch> buildMoeLaunch(const std::string &name,
                                                 const stages::ModelConfig &c, int rows, int tp) {
  auto built = std::make_unique<MoeLaunch>();
  built->module = buildFusedLaunch(built->context, name, c, rows, tp, /*grid=*/16);
  if (!built->module)
    return nullptr;
  built->launch = launchOf(*built->module);
  built->memory = std::make_unique<sim::LaunchMemory>(built->launch);
  // Rows past a slot's count are never written: reading one must show.
  built->memory->poisonScratch();
  return built;
}

/// x, the router's gate and bias, and the shared expert's weights.
inline void loadRouterAndShared(sim::LaunchMemory &memory, const std::vector<float> &x,
                                const std::vector<float> &gate, const std::vector<float> &bias,
                                const reference::BlockScaledE4m3 &gateUp,
                                const reference::BlockScaledE4m3 &down) {
  setValues(memory, "x", x);
  setValues(memory, "gate", gate);
  setValues(memory, "gate_bias", bias);
  setBytes(memory, "shared_gate_up", gateUp.codes);
  setBytes(memory, "shared_gate_up_scale", gateUp.scales);
  setBytes(memory, "shared_down", down.codes);
  setBytes(memory, "shared_down_scale", down.scales);
}

} // namespace monodc::testing

#endif
