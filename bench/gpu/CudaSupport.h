// What the GPU programs of bench/gpu share: errors, files, and building the
// emitted source through nvrtc (sm_90, no FMA contraction, as the simulator).
#ifndef MONODC_BENCH_GPU_CUDASUPPORT_H
#define MONODC_BENCH_GPU_CUDASUPPORT_H

#include "monodc/runtime/LaunchInterface.h"

#include <cuda.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
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

/// Device memory (at least one byte, so a zero-size region still binds).
inline CUdeviceptr alloc(size_t bytes) {
  CUdeviceptr p;
  check(cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc");
  return p;
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

/// The kernel manifest monodc wrote beside a source, read by the runtime
/// library's own parser.
using Manifest = monodc::runtime::LaunchInterface;
using Region = monodc::runtime::RegionSpec;

inline Manifest readManifest(const std::string &path) {
  auto manifest = Manifest::parse(readText(path));
  if (!manifest)
    die(path + ": " + manifest.message());
  return *manifest;
}

/// Launches `kernel` (the fused kernel or one of its unfused stages) on the
/// grid and block its manifest names.
inline void launchOnGrid(CUfunction kernel, const Manifest &m, CUstream stream, void **params,
                         const char *what) {
  check(cuLaunchKernel(kernel, m.grid, 1, 1, m.block, 1, 1, 0, stream, params, nullptr), what);
}

/// Kernel argument `name` of a manifest.
inline const Region &argument(const Manifest &m, const std::string &name) {
  const Region *r = m.argument(name);
  if (!r)
    die("manifest of " + m.kernelName + " has no argument " + name);
  return *r;
}

/// Region `name` inside the scratch buffer.
inline const Region &scratchRegion(const Manifest &m, const std::string &name) {
  for (const Region &r : m.scratch)
    if (r.name == name)
      return r;
  die("manifest of " + m.kernelName + " has no scratch region " + name);
}

} // namespace gpu

#endif
