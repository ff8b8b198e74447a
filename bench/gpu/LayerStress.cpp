// Race stress of a whole decode layer's launches on one GPU: one CUDA graph
// holding a ROWS_A-token step and then a ROWS_B-token step, each K1 then K2
// on every TP rank (the ranks concurrently on their own streams, peer
// buffers in the same memory, as in LayerBench) followed by on-device
// comparisons of everything the step wrote with golden copies, replayed
// REPLAYS times. Epochs advance across the steps and nothing is cleared
// between them, so every replay runs the step protocol (tags, flags, peer
// parity halves, task claims) at new epochs, and a race that changes any
// byte shows as a mismatch.
//
//   layer_stress DIR CONFIG TP REPLAYS ROWS_A ROWS_B
//
// reads DIR/{k1,k2}.CONFIG.sm_90.r<W>.tp<TP>.grid<132/TP>.{hip,manifest} (fused kernels).
#include "SyntheticLayer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>
#include <utility>

using gpu::check;
using gpu::die;
using gpu::Manifest;
using gpu::Region;

namespace {

const char *const kLaunchNames[2] = {"k1", "k2"};

/// A step's launches at one width: K1 and K2, and per rank their argument
/// values (the same buffers whichever step runs them).
struct Width {
  Manifest manifests[2];
  CUfunction kernels[2] = {};
  // Peer buffers a launch and width: a parity half's offset depends on the
  // launch's slot size, so widths sharing one could overlap across halves.
  gpu::PeerBuffers peers[2];
  std::vector<std::vector<CUdeviceptr>> values[2];  // per rank
  std::vector<std::vector<void *>> params[2];
};

/// What a step wrote on one rank, its golden copy and its mismatch counter.
struct Checked {
  std::string what;
  CUdeviceptr output = 0, golden = 0;
  size_t bytes = 0;
  size_t counter = 0;
};

struct Step {
  Width *width = nullptr;
  std::vector<std::vector<Checked>> outputs;  // per rank
};

using BufferKey = std::pair<std::string, int64_t>;  // region name, bytes

} // namespace

int main(int argc, char **argv) {
  gpu::programName = "layer_stress";
  if (argc != 7)
    die("usage: layer_stress DIR CONFIG TP REPLAYS ROWS_A ROWS_B");
  const std::string dir = argv[1], config = argv[2];
  const int tp = std::atoi(argv[3]);
  const long replays = std::atol(argv[4]);
  const int stepRows[2] = {std::atoi(argv[5]), std::atoi(argv[6])};
  if (tp < 1 || replays < 1 || stepRows[0] < 1 || stepRows[1] < 1)
    die("TP, REPLAYS and the rows must be positive");
  const gpu::Device device = gpu::openDevice();
  char deviceName[256];
  check(cuDeviceGetName(deviceName, sizeof deviceName, device.device), "device name");
  gpu::SyntheticFill fill;
  const gpu::ByteCompare compare;

  // Both steps at one width (ROWS_A == ROWS_B) share its launches' scratch
  // and peer buffers, as consecutive steps of a server would.
  std::map<int, Width> widths;
  int64_t epochWords = 0, stepsEnded = 0;  // stepsEnded: steps ended a replay
  for (int rows : stepRows) {
    Width &w = widths[rows];
    for (int phase = 0; phase < 2; ++phase) {
      const std::string stem = gpu::layerStem(dir, kLaunchNames[phase], config, rows, tp);
      Manifest &m = w.manifests[phase];
      if (!w.kernels[phase]) {
        m = gpu::readManifest(stem + ".manifest");
        if (m.rows != rows || (m.peerSlotBytes > 0 && m.ranks != tp))
          die(stem + ".manifest: rows " + std::to_string(m.rows) + ", ranks " +
              std::to_string(m.ranks) + " do not match the file name");
        w.kernels[phase] = gpu::compileKernel(stem + ".hip", m.kernelName);
        gpu::requireResident(w.kernels[phase], m, tp, device.sms, stem);
      }
      epochWords = std::max(epochWords, m.epochWords);
      stepsEnded += m.endsStep ? 1 : 0;
    }
  }

  // Each rank: one epoch buffer for all launches; one buffer per region
  // name and size for all launches, so that K2 reads the q and KV cache its
  // K1 wrote, and both widths share the weights and the caches (a step's K2
  // may read cache slots the other width's K1 inserted).
  std::vector<CUstream> streams(tp);
  for (CUstream &s : streams)
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "stream");
  std::vector<CUdeviceptr> epochs(tp);
  for (CUdeviceptr &epoch : epochs) {
    epoch = gpu::alloc(epochWords * 4);
    check(cuMemsetD8(epoch, 0, epochWords * 4), "zero epoch");
  }
  std::vector<std::map<BufferKey, CUdeviceptr>> buffers(tp);
  auto bufferOf = [&](int rank, const Manifest &m, const Region &reg) {
    auto [it, fresh] = buffers[rank].try_emplace(BufferKey{reg.name, reg.bytes}, 0);
    if (fresh) {
      it->second = gpu::alloc(reg.bytes);
      fill.region(m, reg, it->second);
    }
    return it->second;
  };
  std::vector<int> rankValues(tp);
  for (auto &[rows, w] : widths)
    for (int phase = 0; phase < 2; ++phase) {
      const Manifest &m = w.manifests[phase];
      if (m.peerSlotBytes > 0)
        w.peers[phase] = gpu::allocatePeers(m, tp);
      w.values[phase].resize(tp);
      for (int r = 0; r < tp; ++r) {
        rankValues[r] = r;
        const CUdeviceptr scratch = gpu::alloc(m.scratchBytes);
        check(cuMemsetD8(scratch, 0, m.scratchBytes ? m.scratchBytes : 1), "zero scratch");
        w.values[phase][r] = gpu::argumentValues(
            m, [&](const Region &reg) { return bufferOf(r, m, reg); }, scratch, epochs[r],
            w.peers[phase].table);
      }
    }
  for (auto &[rows, w] : widths)
    for (int phase = 0; phase < 2; ++phase)
      for (int r = 0; r < tp; ++r)
        w.params[phase].push_back(
            gpu::kernelParams(w.values[phase][r], w.manifests[phase], rankValues[r]));

  // What each step writes: every output region of K1 and K2 (K1's include
  // the KV cache and q that K2 reads), a golden copy and a counter each.
  Step steps[2];
  size_t counters = 0, bytesCompared = 0;
  for (int s = 0; s < 2; ++s) {
    steps[s].width = &widths[stepRows[s]];
    steps[s].outputs.resize(tp);
    for (int r = 0; r < tp; ++r)
      for (int phase = 0; phase < 2; ++phase)
        for (const Region &reg : steps[s].width->manifests[phase].arguments) {
          if (reg.kind != "output")
            continue;
          const CUdeviceptr output = buffers[r].at({reg.name, reg.bytes});
          std::vector<Checked> &outputs = steps[s].outputs[r];
          bool seen = false;
          for (const Checked &c : outputs)
            seen |= c.output == output;
          if (seen)
            continue;
          outputs.push_back({"step " + std::to_string(s) + " (rows " + std::to_string(stepRows[s]) +
                                 ") rank " + std::to_string(r) + " " + kLaunchNames[phase] + " " +
                                 reg.name,
                             output, gpu::alloc(reg.bytes), size_t(reg.bytes), counters++});
          bytesCompared += reg.bytes;
        }
  }
  const CUdeviceptr mismatches = gpu::alloc(counters * 8);
  check(cuMemsetD8(mismatches, 0, counters * 8), "zero mismatches");
  check(cuCtxSynchronize(), "fill");  // the fills ran on the null stream

  // A replay: each step on every rank's stream, K1, K2, then what it wrote
  // either copied to the goldens or compared with them.
  CUevent fork, join;
  check(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING), "event");
  check(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING), "event");
  auto enqueueReplay = [&](bool takeGoldens) {
    gpu::forkJoin(streams, fork, join, [&] {
      for (const Step &step : steps)
        for (int r = 0; r < tp; ++r) {
          Width &w = *step.width;
          for (int phase = 0; phase < 2; ++phase)
            gpu::launchOnGrid(w.kernels[phase], w.manifests[phase], streams[r],
                              w.params[phase][r].data(), "fused launch");
          for (const Checked &c : step.outputs[r]) {
            if (takeGoldens)
              check(cuMemcpyDtoDAsync(c.golden, c.output, c.bytes, streams[r]), "golden copy");
            else
              compare.enqueue(c.output, c.golden, c.bytes, mismatches + 8 * c.counter, streams[r]);
          }
        }
    });
  };
  // The goldens come from the second of two replays run before the stress:
  // in the first, step A's K2 still reads the initial synthetic values in
  // cache slots that only step B's K1 inserts; from the second on, every
  // step starts from the same cache (and nothing else carries over).
  enqueueReplay(true);
  enqueueReplay(true);
  check(cuCtxSynchronize(), "golden replays");

  CUgraph graph;
  check(cuStreamBeginCapture(streams[0], CU_STREAM_CAPTURE_MODE_GLOBAL), "capture");
  enqueueReplay(false);
  check(cuStreamEndCapture(streams[0], &graph), "end capture");
  CUgraphExec exec;
  check(cuGraphInstantiate(&exec, graph, 0), "instantiate");
  check(cuGraphUpload(exec, streams[0]), "upload");

  auto readEpoch = [&](int rank, int word) {
    uint32_t value = 0;
    check(cuMemcpyDtoH(&value, epochs[rank] + 4 * word, 4), "read epoch");
    return value;
  };
  // Waits for `event`, or reports a hang with every rank's epoch and
  // arrivals: a step that never ends would otherwise block the host forever.
  auto awaitOrDie = [&](CUevent event, long enqueued) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    CUresult status;
    while ((status = cuEventQuery(event)) == CUDA_ERROR_NOT_READY) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::printf("FAIL: no progress for 60 s with %ld replays enqueued\n", enqueued);
        std::fflush(stdout);
        for (int r = 0; r < tp; ++r)
          std::printf("  rank %d: epoch %u, arrivals %u\n", r, readEpoch(r, 0), readEpoch(r, 1));
        die("hang");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    check(status, "replays");
  };

  std::printf("device: %s, %d SMs; %s TP %d, steps of %d and %d rows; %zu regions, %zu bytes "
              "compared a replay\n",
              deviceName, device.sms, config.c_str(), tp, stepRows[0], stepRows[1], counters,
              bytesCompared);
  std::fflush(stdout);
  // Replays in batches, at most two in flight, so that a hang is seen here
  // rather than inside a launch call blocked on a full queue.
  const long batch = 32;
  CUevent start, stop, batchEnd[2];
  check(cuEventCreate(&start, 0), "event");
  check(cuEventCreate(&stop, 0), "event");
  for (CUevent &e : batchEnd)
    check(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "event");
  check(cuEventRecord(start, streams[0]), "record");
  for (long done = 0, b = 0; done < replays; ++b) {
    if (b >= 2)
      awaitOrDie(batchEnd[b % 2], done);
    const long n = std::min(batch, replays - done);
    for (long i = 0; i < n; ++i)
      check(cuGraphLaunch(exec, streams[0]), "replay");
    done += n;
    check(cuEventRecord(batchEnd[b % 2], streams[0]), "record");
  }
  check(cuEventRecord(stop, streams[0]), "record");
  awaitOrDie(stop, replays);
  float ms = 0;
  check(cuEventElapsedTime(&ms, start, stop), "elapsed");

  std::vector<unsigned long long> counts(counters);
  check(cuMemcpyDtoH(counts.data(), mismatches, counters * 8), "mismatch counts");
  unsigned long long bad = 0;
  for (unsigned long long n : counts)
    bad += n;
  // Every replay, and each of the two before it, ends stepsEnded steps.
  const uint32_t expectedEpoch = uint32_t(stepsEnded * (replays + 2));
  bool epochsRight = true;
  for (int r = 0; r < tp; ++r)
    epochsRight &= readEpoch(r, 0) == expectedEpoch;
  const bool pass = bad == 0 && epochsRight;
  std::printf("%s: %llu mismatching bytes in %ld replays (%ld steps, %d ranks concurrent; epoch "
              "now %u); %.1f us a replay\n",
              pass ? "PASS" : "FAIL", bad, replays, 2 * replays, tp, readEpoch(0, 0),
              1000.0 * ms / replays);
  for (const Step &step : steps)
    for (const std::vector<Checked> &outputs : step.outputs)
      for (const Checked &c : outputs)
        if (counts[c.counter])
          std::printf("  %s: %llu of %zu bytes differ, summed over the replays\n", c.what.c_str(),
                      counts[c.counter], c.bytes);
  if (!epochsRight)
    for (int r = 0; r < tp; ++r)
      std::printf("  rank %d: epoch %u, expected %u\n", r, readEpoch(r, 0), expectedEpoch);
  return pass ? 0 : 1;
}
