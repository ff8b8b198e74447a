// A layer's launches on one GPU with every TP rank on it, for the layer
// check (LayerCheck.cpp): the compiled launches; what each rank keeps from
// one layer to the next (its epoch buffer, each launch's scratch and peer
// buffers); and one layer's buffers on every rank, its inputs uploaded, a
// step run with the ranks' kernels concurrent on their own streams, and the
// outputs read back.
#ifndef MONODC_BENCH_GPU_LAYERDEVICE_H
#define MONODC_BENCH_GPU_LAYERDEVICE_H

#include "CudaSupport.h"
#include "LayerCase.h"

#include "monodc/reference/LaunchInputs.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace gpu {

/// One launch of one rank: its buffers by region name.
using Buffers = std::map<std::string, CUdeviceptr>;
/// Output regions as the device wrote them, by region name.
using RawOutputs = std::map<std::string, std::string>;

/// A launch's manifest and kernel.
struct CompiledLaunch {
  std::string name; ///< for messages: "k1", "k2 (ratio 1)", "ffn"
  Manifest manifest;
  CUfunction kernel = nullptr;
};

/// STEM.manifest and STEM.hip, compiled; dies when `tp` grids of it cannot be
/// resident together, or when a launch with peer memory is built for
/// another TP.
CompiledLaunch compileLaunch(const std::string &stem, const std::string &name, int tp,
                             const Device &device);

/// What each rank keeps across a step's layers, as a serving engine does:
/// one epoch buffer for every launch (K1 tags with it; K2 and the FFN launch
/// end the step and advance it), a scratch buffer a launch and, for a launch
/// with peer memory, its peer buffers; all zeroed when made.
class RankState {
public:
  RankState(int tp, const std::vector<const CompiledLaunch *> &launches);
  ~RankState();
  RankState(const RankState &) = delete;
  RankState &operator=(const RankState &) = delete;

  int tp() const { return int(epochs_.size()); }
  CUdeviceptr epoch(int rank) const { return epochs_[rank]; }
  CUdeviceptr scratch(const CompiledLaunch &launch, int rank) const;
  /// The table of `launch`'s peer buffers (0 for a launch without).
  CUdeviceptr peerTable(const CompiledLaunch &launch) const;
  /// Word 0 of each rank's epoch buffer: the steps ended so far.
  std::vector<uint32_t> stepsEnded() const;

private:
  std::vector<CUdeviceptr> epochs_;
  std::map<const CompiledLaunch *, std::vector<CUdeviceptr>> scratch_;
  std::map<const CompiledLaunch *, PeerBuffers> peers_;
};

/// One layer's launches on every rank, run in order on each rank's stream
/// (K1 then K2, or the FFN launch alone): each launch's buffers on each rank,
/// but for the regions K2 takes from K1 (its manifest's `from` lines), which
/// are K1's. The buffers are freed with it; the rank state must outlive it.
class LayerOnDevice {
public:
  LayerOnDevice(std::vector<const CompiledLaunch *> launches, RankState &state);
  ~LayerOnDevice();
  LayerOnDevice(const LayerOnDevice &) = delete;
  LayerOnDevice &operator=(const LayerOnDevice &) = delete;

  int tp() const { return state_.tp(); }
  const Buffers &buffers(size_t launch, int rank) const { return buffers_[launch][rank]; }

  /// Writes `inputs` into launch `launch`'s buffers of `rank`, each checked
  /// against its region in the manifest.
  void upload(size_t launch, int rank, const ref::LaunchInputs &inputs);
  /// The routed experts of `rank`, in the launch that holds them: zero codes
  /// under unit scales everywhere (finite, and never read unless a token
  /// routes elsewhere than the reference), then the images of `experts`,
  /// made on host threads (at full size each is megabytes of shuffled codes).
  void uploadExperts(int rank, const ref::ExpertSource &source, const std::vector<int> &experts);
  /// Dies naming a launch's input that nothing was written to.
  void requireInputsWritten() const;

  /// One step: the outputs poisoned with 0xFF (not byte records: the KV
  /// cache is K1's state), each rank's launches in order on its stream; then
  /// the regions `names` of every rank as the device wrote them.
  std::vector<RawOutputs> step(const std::vector<CUstream> &streams,
                               const std::vector<std::string> &names);
  /// Regions decoded by their formats.
  RegionOutputs decode(const RawOutputs &raw) const;

private:
  /// The launch whose argument `name` is: the first that has it.
  size_t launchOf(const std::string &name) const;

  std::vector<const CompiledLaunch *> launches_;
  RankState &state_;
  std::vector<CUdeviceptr> owned_;
  std::vector<std::vector<Buffers>> buffers_;                 ///< [launch][rank]
  std::vector<std::vector<std::set<std::string>>> written_;   ///< [launch][rank]
  std::vector<int> ranks_;                                    ///< launches take them by address
  std::vector<std::vector<std::vector<CUdeviceptr>>> values_; ///< [launch][rank]
  std::vector<std::vector<std::vector<void *>>> params_;      ///< [launch][rank]
};

/// K1's and K2's inputs of every rank (`layer` holds K1 then K2), the routed
/// experts `selected`; dies when an input is left unwritten.
void uploadWholeLayer(LayerOnDevice &layer, const ref::LayerWeights &weights,
                      const ref::ExpertSource &experts, const std::vector<int> &selected,
                      const ref::StepInputs &step);

/// The FFN launch's inputs of every rank (`layer` holds it alone): rank r's
/// attention partial `partials[r]`, the step's slots, the seam's streams and
/// gates, the FFN half's weights and the routed experts `selected`; dies when
/// an input is left unwritten.
void uploadFfnLaunch(LayerOnDevice &layer, const ref::LayerWeights &weights,
                     const ref::ExpertSource &experts, const std::vector<int> &selected,
                     const std::vector<std::vector<float>> &partials,
                     const std::vector<float> &slots, const ref::MhcOutputs &seam);

/// Whether every rank wrote the same bytes.
bool ranksAgree(const std::vector<RawOutputs> &outputs);

/// The check's line for ranksAgree.
const char *ranksLine(bool agree);

} // namespace gpu

#endif
