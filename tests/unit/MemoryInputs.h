// Shared by the simulator tests: loading a launch's inputs into its memory,
// a refusal (unknown region, wrong size) being a test failure naming it.
#ifndef MONODC_TESTS_MEMORYINPUTS_H
#define MONODC_TESTS_MEMORYINPUTS_H

#include "monodc/Simulator/LaunchMemory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace monodc::testing {

/// Region `name` from values (encoded in its format).
inline void setValues(sim::LaunchMemory &memory, const std::string &name,
                      const std::vector<float> &values) {
  llvm::Error e = memory.setValues(name, values);
  EXPECT_FALSE(static_cast<bool>(e)) << name << ": " << llvm::toString(std::move(e));
}

/// Region `name` from its storage bytes.
inline void setBytes(sim::LaunchMemory &memory, const std::string &name,
                     const std::vector<uint8_t> &bytes) {
  llvm::Error e = memory.setBytes(name, bytes);
  EXPECT_FALSE(static_cast<bool>(e)) << name << ": " << llvm::toString(std::move(e));
}

} // namespace monodc::testing

#endif
