// A layer's launches on one GPU with every TP rank on it (see LayerDevice.h).
#include "LayerDevice.h"

#include "RegionCodec.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace gpu {
namespace {

const char *const kRoutedRegions[4] = {"w13", "w13_scale", "w2", "w2_scale"};

} // namespace

CompiledLaunch compileLaunch(const std::string &stem, const std::string &name, int tp,
                             const Device &device) {
  CompiledLaunch launch{name, readManifest(stem + ".manifest"), nullptr};
  launch.kernel = compileKernel(stem + ".hip", launch.manifest.kernelName);
  requireResident(launch.kernel, launch.manifest, tp, device.sms, stem);
  if (launch.manifest.peerSlotBytes > 0 && launch.manifest.ranks != tp)
    die(name + " is built for " + std::to_string(launch.manifest.ranks) + " ranks, not " +
        std::to_string(tp));
  return launch;
}

RankState::RankState(int tp, const std::vector<const CompiledLaunch *> &launches) {
  int64_t epochWords = 0;
  for (const CompiledLaunch *launch : launches)
    epochWords = std::max(epochWords, launch->manifest.epochWords);
  for (int r = 0; r < tp; ++r) {
    epochs_.push_back(alloc(4 * epochWords));
    check(cuMemsetD8(epochs_.back(), 0, 4 * epochWords), "zero epoch");
  }
  for (const CompiledLaunch *launch : launches) {
    const Manifest &m = launch->manifest;
    for (int r = 0; r < tp; ++r) {
      scratch_[launch].push_back(alloc(m.scratchBytes));
      check(cuMemsetD8(scratch_[launch].back(), 0, m.scratchBytes ? m.scratchBytes : 1),
            "zero scratch");
    }
    if (m.peerSlotBytes > 0)
      peers_[launch] = allocatePeers(m, tp);
  }
}

RankState::~RankState() {
  for (CUdeviceptr p : epochs_)
    cuMemFree(p);
  for (auto &[launch, buffers] : scratch_)
    for (CUdeviceptr p : buffers)
      cuMemFree(p);
  for (auto &[launch, peers] : peers_)
    freePeers(peers);
}

CUdeviceptr RankState::scratch(const CompiledLaunch &launch, int rank) const {
  const auto found = scratch_.find(&launch);
  if (found == scratch_.end())
    die("no scratch of " + launch.name + ": it is not one of the rank state's launches");
  return found->second[rank];
}

CUdeviceptr RankState::peerTable(const CompiledLaunch &launch) const {
  const auto found = peers_.find(&launch);
  return found == peers_.end() ? 0 : found->second.table;
}

std::vector<uint32_t> RankState::stepsEnded() const {
  std::vector<uint32_t> steps(epochs_.size());
  for (size_t r = 0; r < epochs_.size(); ++r)
    check(cuMemcpyDtoH(&steps[r], epochs_[r], 4), "read epoch");
  return steps;
}

LayerOnDevice::LayerOnDevice(std::vector<const CompiledLaunch *> launches, RankState &state)
    : launches_(std::move(launches)), state_(state) {
  const int tp = state.tp();
  buffers_.assign(launches_.size(), std::vector<Buffers>(tp));
  written_.assign(launches_.size(), std::vector<std::set<std::string>>(tp));
  values_.assign(launches_.size(), std::vector<std::vector<CUdeviceptr>>(tp));
  params_.assign(launches_.size(), std::vector<std::vector<void *>>(tp));
  for (int r = 0; r < tp; ++r)
    ranks_.push_back(r);
  for (size_t l = 0; l < launches_.size(); ++l) {
    const CompiledLaunch &launch = *launches_[l];
    for (int r = 0; r < tp; ++r) {
      for (const Region &reg : launch.manifest.arguments) {
        // K2's inputs that K1 wrote, as the manifest's `from` lines say.
        if (l > 0 && reg.handedFromKernel == launches_[0]->manifest.kernelName) {
          const Region &source = argument(launches_[0]->manifest, reg.handedFromRegion);
          if (source.bytes != reg.bytes || source.format != reg.format)
            die(launch.name + "'s " + reg.name + " is not " + launches_[0]->name + "'s " +
                source.name);
          buffers_[l][r][reg.name] = buffers_[0][r].at(source.name);
          written_[l][r].insert(reg.name);
          continue;
        }
        buffers_[l][r][reg.name] = owned_.emplace_back(alloc(reg.bytes));
      }
      if (l > 0 && written_[l][r].empty())
        die(launch.name + "'s manifest names nothing handed from " + launches_[0]->name +
            " (no `from` lines: emitted by an older monodc?)");
      values_[l][r] = argumentValues(
          launch.manifest, [&](const Region &reg) { return buffers_[l][r].at(reg.name); },
          state.scratch(launch, r), state.epoch(r), state.peerTable(launch));
    }
  }
  // The parameters point into values_ and ranks_, complete from here on.
  for (size_t l = 0; l < launches_.size(); ++l)
    for (int r = 0; r < tp; ++r)
      params_[l][r] = kernelParams(values_[l][r], launches_[l]->manifest, ranks_[r]);
}

LayerOnDevice::~LayerOnDevice() {
  for (CUdeviceptr p : owned_)
    cuMemFree(p);
}

size_t LayerOnDevice::launchOf(const std::string &name) const {
  for (size_t l = 0; l < launches_.size(); ++l)
    if (launches_[l]->manifest.argument(name))
      return l;
  die("no launch of the layer has a region " + name);
}

void LayerOnDevice::upload(size_t launch, int rank, const ref::LaunchInputs &inputs) {
  const Manifest &m = launches_[launch]->manifest;
  auto put = [&](const std::string &name, size_t offset, const std::vector<uint8_t> &bytes,
                 bool whole) {
    const Region &reg = argument(m, name);
    if (whole ? bytes.size() != size_t(reg.bytes) : offset + bytes.size() > size_t(reg.bytes))
      die(m.kernelName + ": " + std::to_string(bytes.size()) + " bytes at " +
          std::to_string(offset) + " do not fit region " + name + " of " +
          std::to_string(reg.bytes));
    check(cuMemcpyHtoD(buffers_[launch][rank].at(name) + offset, bytes.data(), bytes.size()),
          "upload");
    written_[launch][rank].insert(name);
  };
  for (const ref::RegionValues &v : inputs.values)
    put(v.region, 0, encodeRegion(argument(m, v.region).format, v.values), true);
  for (const ref::RegionBytes &b : inputs.bytes)
    put(b.region, 0, b.bytes, true);
  for (const ref::RegionSlice &s : inputs.slices)
    put(s.region, s.offset, s.bytes, false);
}

void LayerOnDevice::uploadExperts(int rank, const ref::ExpertSource &source,
                                  const std::vector<int> &experts) {
  const size_t launch = launchOf("w13");
  const Manifest &m = launches_[launch]->manifest;
  for (const char *name : kRoutedRegions) {
    const Region &reg = argument(m, name);
    check(cuMemsetD8(buffers_[launch][rank].at(name), reg.format == "e8m0" ? 127 : 0, reg.bytes),
          "routed filler");
    written_[launch][rank].insert(name);
  }
  std::vector<ref::LaunchInputs> images(experts.size());
  std::atomic<size_t> next{0};
  auto makeImages = [&] {
    for (size_t i = next++; i < experts.size(); i = next++)
      images[i] = ref::expertInputs(source(rank, experts[i]), experts[i]);
  };
  std::vector<std::thread> pool(
      std::min<size_t>(experts.size(), std::max(1u, std::thread::hardware_concurrency())));
  for (std::thread &t : pool)
    t = std::thread(makeImages);
  for (std::thread &t : pool)
    t.join();
  for (const ref::LaunchInputs &image : images)
    upload(launch, rank, image);
}

void LayerOnDevice::requireInputsWritten() const {
  for (size_t l = 0; l < launches_.size(); ++l)
    for (int r = 0; r < tp(); ++r)
      for (const Region &reg : launches_[l]->manifest.arguments)
        if (reg.kind != "output" && !written_[l][r].count(reg.name))
          die(launches_[l]->name + ": nothing written to input " + reg.name);
}

std::vector<RawOutputs> LayerOnDevice::step(const std::vector<CUstream> &streams,
                                            const std::vector<std::string> &names) {
  for (size_t l = 0; l < launches_.size(); ++l)
    for (int r = 0; r < tp(); ++r)
      for (const Region &reg : launches_[l]->manifest.arguments)
        if (reg.kind == "output" && reg.format != "byte")
          check(cuMemsetD8(buffers_[l][r].at(reg.name), 0xFF, reg.bytes), "poison");
  check(cuCtxSynchronize(), "uploads");
  for (int r = 0; r < tp(); ++r)
    for (size_t l = 0; l < launches_.size(); ++l)
      launchOnGrid(launches_[l]->kernel, launches_[l]->manifest, streams[r], params_[l][r].data(),
                   launches_[l]->name.c_str());
  check(cuCtxSynchronize(), "layer step");
  std::vector<RawOutputs> got(tp());
  for (int r = 0; r < tp(); ++r)
    for (const std::string &name : names) {
      const size_t l = launchOf(name);
      got[r][name] =
          download(buffers_[l][r].at(name), argument(launches_[l]->manifest, name).bytes);
    }
  return got;
}

RegionOutputs LayerOnDevice::decode(const RawOutputs &raw) const {
  RegionOutputs decoded;
  for (const auto &[name, bytes] : raw)
    decoded[name] = decodeRegion(argument(launches_[launchOf(name)]->manifest, name).format, bytes);
  return decoded;
}

void uploadWholeLayer(LayerOnDevice &layer, const ref::LayerWeights &weights,
                      const ref::ExpertSource &experts, const std::vector<int> &selected,
                      const ref::StepInputs &step) {
  for (int r = 0; r < layer.tp(); ++r) {
    layer.upload(0, r, ref::k1Inputs(weights, r, step));
    layer.upload(1, r, ref::k2Inputs(weights, r, step));
    layer.uploadExperts(r, experts, selected);
  }
  layer.requireInputsWritten();
}

void uploadFfnLaunch(LayerOnDevice &layer, const ref::LayerWeights &weights,
                     const ref::ExpertSource &experts, const std::vector<int> &selected,
                     const std::vector<std::vector<float>> &partials,
                     const std::vector<float> &slots, const ref::MhcOutputs &seam) {
  for (int r = 0; r < layer.tp(); ++r) {
    ref::LaunchInputs inputs;
    inputs.values = {{"partial", partials[r]},        {"slot_mapping", slots},
                     {"ffn_residual", seam.residual}, {"ffn_post_in", seam.post},
                     {"ffn_comb_in", seam.comb},      {"ffn_pre_in", seam.pre}};
    inputs.append(ref::ffnHalfInputs(weights, r));
    layer.upload(0, r, inputs);
    layer.uploadExperts(r, experts, selected);
  }
  layer.requireInputsWritten();
}

bool ranksAgree(const std::vector<RawOutputs> &outputs) {
  for (size_t r = 1; r < outputs.size(); ++r)
    if (outputs[r] != outputs[0])
      return false;
  return true;
}

const char *ranksLine(bool agree) {
  return agree ? "PASS: every rank bit-identical" : "FAIL: ranks differ";
}

} // namespace gpu
