// What the GPU programs of bench/gpu share: errors, files, building the
// emitted source through nvrtc (sm_90, no FMA contraction, as the simulator),
// binding and launching a manifest's kernel, TP ranks on one GPU (peer
// buffers, residency, streams forked and joined) and comparing on the device.
#ifndef MONODC_BENCH_GPU_CUDASUPPORT_H
#define MONODC_BENCH_GPU_CUDASUPPORT_H

#include "LayerFiles.h"

#include <cuda.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace gpu {

/// The program's name, for error lines.
inline const char *programName = "gpu";

[[noreturn]] inline void die(const std::string &message) {
  std::fprintf(stderr, "%s: error: %s\n", programName, message.c_str());
  std::exit(1);
}

inline void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    const char *name = nullptr;
    cuGetErrorName(r, &name);
    die(std::string(what) + " failed: " + (name ? name : "?"));
  }
}

inline std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    die("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Compiles `source` for sm_90 and loads it; the program log on failure.
inline CUmodule compileModule(const std::string &source, const std::string &name) {
  nvrtcProgram program;
  if (nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr) !=
      NVRTC_SUCCESS)
    die("nvrtcCreateProgram failed for " + name);
  const char *options[] = {"--gpu-architecture=sm_90", "-std=c++17", "--fmad=false"};
  nvrtcResult result = nvrtcCompileProgram(program, 3, options);
  size_t logSize = 0;
  nvrtcGetProgramLogSize(program, &logSize);
  std::string log(logSize, '\0');
  nvrtcGetProgramLog(program, log.data());
  if (result != NVRTC_SUCCESS)
    die("nvrtc could not compile " + name + ":\n" + log);
  size_t size = 0;
  nvrtcGetCUBINSize(program, &size);
  std::vector<char> cubin(size);
  nvrtcGetCUBIN(program, cubin.data());
  nvrtcDestroyProgram(&program);
  CUmodule module;
  check(cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
  return module;
}

/// Device 0 with a context made current.
struct Device {
  CUdevice device = 0;
  CUcontext context = nullptr;
  int sms = 0;
};

inline Device openDevice() {
  Device d;
  check(cuInit(0), "cuInit");
  check(cuDeviceGet(&d.device, 0), "cuDeviceGet");
  CUctxCreateParams params = {};
  check(cuCtxCreate(&d.context, &params, 0, d.device), "cuCtxCreate");
  check(cuDeviceGetAttribute(&d.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d.device), "SMs");
  return d;
}

/// `bytes` of device memory at `p`, copied to the host.
inline std::string download(CUdeviceptr p, size_t bytes) {
  std::string out(bytes, '\0');
  check(cuMemcpyDtoH(out.data(), p, bytes), "download");
  return out;
}

/// Device memory (at least one byte, so a zero-size region still binds).
inline CUdeviceptr alloc(size_t bytes) {
  CUdeviceptr p;
  check(cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc");
  return p;
}

/// Poisons an output region before a run (0xFF), but byte records (a KV
/// cache), which a step writes only in part: the simulator's untouched
/// bytes are zero.
inline void poisonOutput(CUdeviceptr p, const Region &r) {
  check(cuMemsetD8(p, r.format == "byte" ? 0x00 : 0xFF, r.bytes), "poison");
}

/// A launch that does not end the step (K1) is followed by one that does
/// (K2); standing in for it between runs, the host moves the epoch e on.
inline void advanceEpoch(CUdeviceptr epoch) {
  uint32_t e = 0;
  check(cuMemcpyDtoH(&e, epoch, 4), "read epoch");
  ++e;
  check(cuMemcpyHtoD(epoch, &e, 4), "advance epoch");
}

/// Captures what `body` enqueues on `stream` (and on streams that join it)
/// into a graph, replays it `warmups` times, then times `reps` replays:
/// milliseconds a replay.
inline double timeGraph(CUstream stream, const std::function<void()> &body, int warmups,
                        int reps) {
  CUgraph graph;
  check(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "capture");
  body();
  check(cuStreamEndCapture(stream, &graph), "end capture");
  CUgraphExec exec;
  check(cuGraphInstantiate(&exec, graph, 0), "instantiate");
  for (int i = 0; i < warmups; ++i)
    check(cuGraphLaunch(exec, stream), "warm-up");
  CUevent start, stop;
  check(cuEventCreate(&start, 0), "event");
  check(cuEventCreate(&stop, 0), "event");
  check(cuEventRecord(start, stream), "record");
  for (int i = 0; i < reps; ++i)
    check(cuGraphLaunch(exec, stream), "replay");
  check(cuEventRecord(stop, stream), "record");
  check(cuEventSynchronize(stop), "timing");
  float ms = 0;
  cuEventElapsedTime(&ms, start, stop);
  cuEventDestroy(start);
  cuEventDestroy(stop);
  cuGraphExecDestroy(exec);
  cuGraphDestroy(graph);
  return double(ms) / reps;
}

/// A manifest file (LayerFiles.h); the program stops when it cannot be read
/// or parsed.
inline Manifest readManifest(const std::string &path) {
  try {
    return loadManifest(path);
  } catch (const std::exception &e) {
    die(e.what());
  }
}

/// The file of region `name` in a simulator dump (`monodc simulate --dump`)
/// whose files start with `base`: `kind` is in, out or scratch, and a
/// launch of several ranks names the rank's copy.
inline std::string dumpFile(const std::string &base, const char *kind, int ranks, int rank,
                            const std::string &name) {
  const std::string tag = ranks > 1 ? "r" + std::to_string(rank) + "." : std::string();
  return base + "." + kind + "." + tag + name + ".bin";
}

/// Kernel `name` of the source file at `path`, compiled and loaded.
inline CUfunction compileKernel(const std::string &path, const std::string &name) {
  CUfunction f;
  check(cuModuleGetFunction(&f, compileModule(readText(path), path), name.c_str()), "kernel");
  return f;
}

/// Lets `kernel` have the dynamic shared memory its manifest names (past
/// CUDA's default 48 KB a CTA, only after this opt-in).
inline void allowDynamicShared(CUfunction kernel, const Manifest &m) {
  static std::map<CUfunction, int64_t> allowed;
  if (m.dynamicSharedBytes > 0 && allowed[kernel] < m.dynamicSharedBytes) {
    check(cuFuncSetAttribute(kernel, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             int(m.dynamicSharedBytes)),
          "cuFuncSetAttribute (dynamic shared memory)");
    allowed[kernel] = m.dynamicSharedBytes;
  }
}

/// Launches `kernel` (the fused kernel or one of its unfused stages) on the
/// grid, block and dynamic shared memory its manifest names.
inline void launchOnGrid(CUfunction kernel, const Manifest &m, CUstream stream, void **params,
                         const char *what) {
  allowDynamicShared(kernel, m);
  check(cuLaunchKernel(kernel, m.grid, 1, 1, m.block, 1, 1, unsigned(m.dynamicSharedBytes), stream,
                       params, nullptr),
        what);
}

/// Kernel argument `name` of a manifest.
inline const Region &argument(const Manifest &m, const std::string &name) {
  const Region *r = m.argument(name);
  if (!r)
    die("manifest of " + m.kernelName + " has no argument " + name);
  return *r;
}

/// Refuses a persistent kernel whose grids, `ranks` of them at once, cannot
/// all be resident: a CTA polling for one that is not yet scheduled would
/// wait forever.
inline void requireResident(CUfunction kernel, const Manifest &m, int ranks, int sms,
                            const std::string &what) {
  int perSm = 0;
  allowDynamicShared(kernel, m);
  check(cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, m.block,
                                                    size_t(m.dynamicSharedBytes)),
        "occupancy");
  if (perSm < 1 || m.grid * ranks > sms * perSm)
    die(what + ": " + std::to_string(ranks) + " ranks of " + std::to_string(m.grid) +
        " CTAs cannot be resident together");
}

/// TP ranks on one GPU: each rank's peer buffer (2 epoch parities x ranks x
/// the launch's slot bytes, zeroed) in the same device memory, and the
/// device table of their addresses that every rank's launch takes.
struct PeerBuffers {
  std::vector<CUdeviceptr> buffers;
  CUdeviceptr table = 0;
};

inline PeerBuffers allocatePeers(const Manifest &m, int ranks) {
  PeerBuffers peers;
  const size_t bytes = 2 * ranks * m.peerSlotBytes;
  for (int r = 0; r < ranks; ++r) {
    peers.buffers.push_back(alloc(bytes));
    check(cuMemsetD8(peers.buffers.back(), 0, bytes), "zero peers");
  }
  peers.table = alloc(ranks * sizeof(CUdeviceptr));
  check(cuMemcpyHtoD(peers.table, peers.buffers.data(), ranks * sizeof(CUdeviceptr)),
        "peer table");
  return peers;
}

inline void freePeers(PeerBuffers &peers) {
  for (CUdeviceptr p : peers.buffers)
    cuMemFree(p);
  if (peers.table)
    cuMemFree(peers.table);
  peers = {};
}

/// A fused launch's kernel arguments: each region of the manifest in order
/// (`bufferOf` it), then the scratch and epoch buffers and, for a launch
/// with peer memory, the peer table.
inline std::vector<CUdeviceptr>
argumentValues(const Manifest &m, const std::function<CUdeviceptr(const Region &)> &bufferOf,
               CUdeviceptr scratch, CUdeviceptr epoch, CUdeviceptr peerTable) {
  std::vector<CUdeviceptr> values;
  for (const Region &reg : m.arguments) {
    values.push_back(bufferOf(reg));
    // A region sized at launch (the KV caches) takes its rows next: the
    // harnesses allocate the manifest's (nominal) rows.
    if (reg.rowsAtLaunch)
      values.push_back(CUdeviceptr(reg.rows));
    // One whose columns are given at launch (the block tables): its own.
    if (reg.colsAtLaunch)
      values.push_back(CUdeviceptr(reg.cols));
  }
  values.push_back(scratch);
  values.push_back(epoch);
  if (m.peerSlotBytes > 0)
    values.push_back(peerTable);
  return values;
}

/// cuLaunchKernel's parameters: pointers to `values`, then to the rank for
/// a launch with peer memory (both must outlive the launches).
inline std::vector<void *> kernelParams(std::vector<CUdeviceptr> &values, const Manifest &m,
                                        int &rank) {
  std::vector<void *> params;
  for (CUdeviceptr &p : values)
    params.push_back(&p);
  if (m.peerSlotBytes > 0)
    params.push_back(&rank);
  return params;
}

/// Enqueues `body` between a fork of streams[1..] from streams[0] and their
/// join into it, so that capturing streams[0] takes every rank's work, and
/// work after it on streams[0] waits for all of it.
inline void forkJoin(const std::vector<CUstream> &streams, CUevent fork, CUevent join,
                     const std::function<void()> &body) {
  check(cuEventRecord(fork, streams[0]), "fork");
  for (size_t r = 1; r < streams.size(); ++r)
    check(cuStreamWaitEvent(streams[r], fork, 0), "fork");
  body();
  for (size_t r = 1; r < streams.size(); ++r) {
    check(cuEventRecord(join, streams[r]), "join");
    check(cuStreamWaitEvent(streams[0], join, 0), "join");
  }
}

/// Counts on the device the bytes in which two buffers differ, adding them
/// to a u64 counter: each thread counts its bytes and adds once, so that
/// even a buffer differing everywhere is counted quickly.
class ByteCompare {
public:
  ByteCompare() {
    check(cuModuleGetFunction(&kernel_, compileModule(kSource, "compare.cu"), "mono_compare"),
          "compare kernel");
  }

  /// Enqueues on `stream`: *counter += the bytes of a and b (n each) that differ.
  void enqueue(CUdeviceptr a, CUdeviceptr b, size_t n, CUdeviceptr counter,
               CUstream stream) const {
    unsigned long long bytes = n;
    void *args[] = {&a, &b, &bytes, &counter};
    const unsigned blocks = unsigned(std::clamp<size_t>((n + 255) / 256, 1, 64));
    check(cuLaunchKernel(kernel_, blocks, 1, 1, 256, 1, 1, 0, stream, args, nullptr), "compare");
  }

private:
  static constexpr const char *kSource = R"(
extern "C" __global__ void mono_compare(const unsigned char *a, const unsigned char *b,
                                        unsigned long long n, unsigned long long *mismatches) {
  unsigned long long count = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    count += a[i] != b[i];
  if (count) atomicAdd(mismatches, count);
}
)";
  CUfunction kernel_ = nullptr;
};

/// Region `name` inside the scratch buffer.
inline const Region &scratchRegion(const Manifest &m, const std::string &name) {
  for (const Region &r : m.scratch)
    if (r.name == name)
      return r;
  die("manifest of " + m.kernelName + " has no scratch region " + name);
}

} // namespace gpu

#endif
