// Shared by the simulator tests: loading a launch's inputs into its memory,
// a refusal (unknown region, wrong size) being a test failure naming it.
#ifndef MONODC_TESTS_MEMORYINPUTS_H
#define MONODC_TESTS_MEMORYINPUTS_H

#include "monodc/Simulator/LaunchMemory.h"
#include "monodc/reference/LaunchInputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
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

/// A layer launch's inputs (reference/LaunchInputs.h): values, whole
/// regions, then slices written over the region's current bytes.
inline void setInputs(sim::LaunchMemory &memory, const reference::LaunchInputs &inputs) {
  for (const reference::RegionValues &v : inputs.values)
    setValues(memory, v.region, v.values);
  for (const reference::RegionBytes &b : inputs.bytes)
    setBytes(memory, b.region, b.bytes);
  std::map<std::string, std::vector<uint8_t>> sliced;
  for (const reference::RegionSlice &s : inputs.slices) {
    if (!memory.has(s.region)) {
      ADD_FAILURE() << "the launch has no region " << s.region;
      continue;
    }
    auto [image, fresh] = sliced.try_emplace(s.region);
    if (fresh)
      image->second = memory.bytes(s.region);
    if (s.offset + s.bytes.size() > image->second.size()) {
      ADD_FAILURE() << s.region << ": a slice ends past the region";
      continue;
    }
    std::copy(s.bytes.begin(), s.bytes.end(), image->second.begin() + s.offset);
  }
  for (const auto &[region, bytes] : sliced)
    setBytes(memory, region, bytes);
}

} // namespace monodc::testing

#endif
