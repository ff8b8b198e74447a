// What each region of a layer's launches (K1, K2, the FFN launch) receives,
// by the region names of their manifests: one list that the simulator tests
// load into launch memory and the GPU harness uploads, so both give the
// kernels the same bytes; and the output regions read back as a layer's
// outputs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "monodc/reference/Layer.h"

namespace monodc::reference {

// Values the loader encodes in the region's format (bf16 or f32).
struct RegionValues {
  std::string region;
  std::vector<float> values;
};

// A whole region's bytes, already in its format (block-scaled codes and
// scales, KV records).
struct RegionBytes {
  std::string region;
  std::vector<uint8_t> bytes;
};

// Bytes of a part of a region at a byte offset into it: a routed expert's
// slice of the tensor of every expert, in AITER's layouts.
struct RegionSlice {
  std::string region;
  size_t offset = 0;
  std::vector<uint8_t> bytes;
};

struct LaunchInputs {
  std::vector<RegionValues> values;
  std::vector<RegionBytes> bytes;
  std::vector<RegionSlice> slices;

  void append(LaunchInputs more);
};

// K1 of a rank: the step's streams and gates, the attention seam's weights,
// the front's (wqkv, the norms, wq_b), positions, the cos/sin table, slots
// and the window cache (which K1 updates in place).
LaunchInputs k1Inputs(const LayerWeights& weights, int rank, const StepInputs& in);

// The FFN half's weights on a rank (in K2 and in the FFN launch), all but the
// routed experts.
LaunchInputs ffnHalfInputs(const LayerWeights& weights, int rank);

// K2 of a rank, all but the routed experts and the regions K1 hands over
// (K2's manifest names them: `from` lines): the attention back's inputs and
// weights, then
// ffnHalfInputs.
LaunchInputs k2Inputs(const LayerWeights& weights, int rank, const StepInputs& in);

// One routed expert's slices of w13, w2 and their scales: the weights packed
// two codes a byte and shuffled, the scales shuffled (AiterShuffle.h), each
// at the expert's place in the tensor of every expert.
LaunchInputs expertInputs(const ExpertWeights& expert, int index);

// And back: what K2 (or the FFN launch) wrote, x_out and the FFN seam's
// streams and gates, read by region name (nearTie and the reference-only
// parts left empty).
LayerOutputs layerOutputs(const std::function<std::vector<float>(const std::string&)>& region);

}  // namespace monodc::reference
