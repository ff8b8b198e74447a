// Runs launches that `monodc simulate --dump` wrote (sm_90 source, manifest,
// inputs and the simulator's outputs) on the GPU and compares every output
// region with the simulator: bytes equal, and the DSV41.md stage bounds on
// the decoded values (the transcendental functions differ between the CUDA
// and C libraries, so a few values may differ in their last bits). Each
// launch also runs three times to check it is deterministic on the GPU.
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Reference.h"

#include <cuda.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fmts = monodc::formats;
namespace ref = monodc::reference;

namespace {

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "launch_check: error: %s\n", message.c_str());
  std::exit(1);
}

void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    const char *name = nullptr;
    cuGetErrorName(r, &name);
    die(std::string(what) + " failed: " + (name ? name : "?"));
  }
}

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    die("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Region {
  std::string name, kind, format;
  long rows = 0, cols = 0, bytes = 0;
};

struct Manifest {
  std::string kernel;
  int grid = 0, block = 0;
  long scratchBytes = 0, epochWords = 0;
  std::vector<Region> args;
};

Manifest readManifest(const std::string &path) {
  Manifest m;
  std::istringstream in(readText(path));
  std::string key, line;
  while (in >> key) {
    if (key == "kernel") in >> m.kernel;
    else if (key == "grid") in >> m.grid;
    else if (key == "block") in >> m.block;
    else if (key == "scratch_bytes") in >> m.scratchBytes;
    else if (key == "epoch_words") in >> m.epochWords;
    else if (key == "arg") {
      Region r;
      in >> r.name >> r.kind >> r.format >> r.rows >> r.cols >> r.bytes;
      m.args.push_back(r);
    } else {
      std::getline(in, line);  // rows, stages, scratch regions: not needed here
    }
  }
  return m;
}

CUfunction compile(const std::string &source, const std::string &name, const std::string &kernel) {
  nvrtcProgram program;
  nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr);
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
  CUfunction f;
  check(cuModuleGetFunction(&f, module, kernel.c_str()), "cuModuleGetFunction");
  return f;
}

std::vector<float> decode(const std::string &format, const std::string &bytes) {
  std::vector<float> v;
  if (format == "f32") {
    v.resize(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
  } else if (format == "bf16") {
    for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
      uint16_t b;
      std::memcpy(&b, bytes.data() + i, 2);
      v.push_back(fmts::bf16Value(b));
    }
  } else if (format == "e4m3") {
    for (unsigned char c : bytes)
      v.push_back(fmts::e4m3Value(c));
  } else {
    for (unsigned char c : bytes)
      v.push_back(fmts::e8m0Value(c));
  }
  return v;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    die("usage: launch_check DIR STEM...");
  const std::string dir = argv[1];
  check(cuInit(0), "cuInit");
  CUdevice device;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context;
  CUctxCreateParams ctxParams = {};
  check(cuCtxCreate(&context, &ctxParams, 0, device), "cuCtxCreate");
  int sms = 0;
  cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
  bool allGood = true;
  std::printf("%-40s %-14s %12s %10s %10s %s\n", "launch", "output", "equal bytes", "rel err",
              "cosine", "result");
  for (int a = 2; a < argc; ++a) {
    const std::string stem = argv[a], base = dir + "/" + stem;
    Manifest m = readManifest(base + ".manifest");
    CUfunction f = compile(readText(base + ".hip"), stem + ".hip", m.kernel);
    int perSm = 0;
    check(cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, f, m.block, 0), "occupancy");
    if (perSm < 1 || m.grid > sms * perSm)
      die(stem + ": grid " + std::to_string(m.grid) + " cannot be resident");
    std::map<std::string, CUdeviceptr> buffers;
    std::vector<CUdeviceptr> values;
    for (const Region &r : m.args) {
      CUdeviceptr p;
      check(cuMemAlloc(&p, r.bytes), "cuMemAlloc");
      buffers[r.name] = p;
      if (r.kind == "output") {
        check(cuMemsetD8(p, 0xFF, r.bytes), "poison");
      } else {
        std::string bytes = readText(base + ".in." + r.name + ".bin");
        if (long(bytes.size()) != r.bytes)
          die(stem + ": input " + r.name + " has " + std::to_string(bytes.size()) + " bytes");
        check(cuMemcpyHtoD(p, bytes.data(), bytes.size()), "upload");
      }
      values.push_back(p);
    }
    CUdeviceptr scratch, epoch;
    check(cuMemAlloc(&scratch, m.scratchBytes ? m.scratchBytes : 1), "scratch");
    check(cuMemsetD8(scratch, 0, m.scratchBytes ? m.scratchBytes : 1), "zero scratch");
    check(cuMemAlloc(&epoch, m.epochWords * 4), "epoch");
    check(cuMemsetD8(epoch, 0, m.epochWords * 4), "zero epoch");
    values.push_back(scratch);
    values.push_back(epoch);
    std::vector<void *> params;
    for (CUdeviceptr &p : values)
      params.push_back(&p);
    std::map<std::string, std::string> firstRun;
    bool deterministic = true;
    for (int run = 0; run < 3; ++run) {
      for (const Region &r : m.args)
        if (r.kind == "output")
          check(cuMemsetD8(buffers[r.name], 0xFF, r.bytes), "poison");
      check(cuLaunchKernel(f, m.grid, 1, 1, m.block, 1, 1, 0, nullptr, params.data(), nullptr),
            "launch");
      check(cuCtxSynchronize(), "run");
      for (const Region &r : m.args) {
        if (r.kind != "output")
          continue;
        std::string got(r.bytes, '\0');
        check(cuMemcpyDtoH(got.data(), buffers[r.name], r.bytes), "download");
        if (run == 0)
          firstRun[r.name] = got;
        else
          deterministic &= got == firstRun[r.name];
      }
    }
    for (const Region &r : m.args) {
      if (r.kind != "output")
        continue;
      std::string want = readText(base + ".out." + r.name + ".bin");
      const std::string &got = firstRun[r.name];
      size_t equal = 0, units = r.format == "f32" ? 4 : (r.format == "bf16" ? 2 : 1);
      for (size_t i = 0; i + units <= got.size() && i + units <= want.size(); i += units)
        equal += std::memcmp(got.data() + i, want.data() + i, units) == 0;
      ref::Comparison c = ref::compare(decode(r.format, got), decode(r.format, want));
      bool ok = ref::withinStageBounds(c);
      allGood &= ok;
      std::printf("%-40s %-14s %5zu/%-6zu %10.2e %10.6f %s\n", stem.c_str(), r.name.c_str(), equal,
                  got.size() / units, c.relativeError, c.cosine, ok ? "PASS" : "FAIL");
    }
    std::printf("%-40s %-14s %s\n", stem.c_str(), "(3 runs)",
                deterministic ? "PASS: bit-identical on the GPU" : "FAIL: runs differ");
    allGood &= deterministic;
  }
  std::printf("%s\n", allGood ? "ALL LAUNCH CHECKS PASSED" : "SOME LAUNCH CHECKS FAILED");
  return allGood ? 0 : 1;
}
