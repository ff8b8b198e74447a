// Launches on the GPU the way a serving engine does, through the runtime
// library's C ABI: a runtime-only session over a code-object cache (cubins
// that `monodc matrix --backend nvrtc` built, `emit.sh launcher`), the
// kernel of a request, a launcher over the CUDA driver (libcuda, dlopen'd
// by the library), the regions bound to device memory, one launch on a
// stream, then the same launch captured in a CUDA graph and replayed twice.
// Each launch's inputs and expected outputs are the simulator's dump
// (`monodc simulate --dump`); outputs must meet the launch check's bounds
// (RegionCompare.h) and the graph replays must give the direct launch's
// bytes. Launches with peer memory (the all-reduce) are not taken yet: two
// ranks on one GPU must each run on half the SMs, and `monodc matrix` builds
// for the arch's whole grid. Last, requests the
// library must refuse, to show their messages.
//
//   launcher_check CACHE SIM_DIR STEM=REQUEST...
#include "monodc/monodc.h"

#include "CudaSupport.h"
#include "RegionCompare.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

using gpu::check;
using gpu::die;
using gpu::readText;

/// Stops the program on a library error, printing its message.
void require(monodc_error *error, const std::string &what) {
  if (!error)
    return;
  const std::string message = monodc_error_message(error);
  monodc_error_free(error);
  die(what + ": " + message);
}

/// The message of an error the library must return, or a failure line.
bool refuses(monodc_error *error, const std::string &what) {
  if (!error) {
    std::printf("%-40s FAIL: accepted\n", what.c_str());
    return false;
  }
  std::printf("%-40s PASS: refused: %s\n", what.c_str(), monodc_error_message(error));
  monodc_error_free(error);
  return true;
}

struct Binding {
  std::string name, kind;
  CUdeviceptr pointer = 0;
  int64_t bytes = 0;
};

/// One stem: its launcher, bound buffers, launched directly and from a graph.
bool checkLaunch(monodc_session *session, const std::string &dir, const std::string &stem,
                 const std::string &request) {
  const std::string base = dir + "/" + stem;
  const gpu::Manifest m = gpu::readManifest(base + ".manifest");
  if (m.ranks > 1) {
    std::printf("%-40s skipped: peer memory (ranks on one GPU need their own grid)\n",
                stem.c_str());
    return true;
  }
  const monodc_kernel *kernel = nullptr;
  require(monodc_session_kernel(session, request.c_str(), &kernel), request);
  std::printf("%-40s key %s, %s, grid %lld\n", stem.c_str(), monodc_kernel_key(kernel),
              monodc_kernel_symbol(kernel), static_cast<long long>(monodc_kernel_grid(kernel)));
  monodc_launcher *launcher = nullptr;
  require(monodc_launcher_create(kernel, 0, &launcher), stem + ": launcher");

  std::vector<Binding> bindings;
  CUdeviceptr epoch = 0;
  for (size_t i = 0; i < monodc_kernel_argument_count(kernel); ++i) {
    monodc_kernel_argument a;
    require(monodc_kernel_argument_get(kernel, i, &a), stem + ": argument");
    if (a.launcher_owned)
      continue;
    Binding b{a.name, a.kind, gpu::alloc(size_t(a.bytes)), a.bytes};
    if (b.kind == "input" || b.kind == "weight") {
      const std::string bytes = readText(base + ".in." + b.name + ".bin");
      if (int64_t(bytes.size()) != b.bytes)
        die(stem + ": input " + b.name + " has " + std::to_string(bytes.size()) +
            " bytes, the kernel's argument " + std::to_string(b.bytes));
      check(cuMemcpyHtoD(b.pointer, bytes.data(), bytes.size()), "upload");
    } else if (b.kind == "epoch") {
      check(cuMemsetD8(b.pointer, 0, size_t(b.bytes)), "zero epoch");
      epoch = b.pointer;
    } else if (b.kind != "output") {
      die(stem + ": argument " + b.name + " of kind " + b.kind + " is not bound here");
    }
    require(monodc_launcher_bind(launcher, b.name.c_str(), reinterpret_cast<void *>(b.pointer)),
            stem + ": bind " + b.name);
    bindings.push_back(b);
  }
  auto poison = [&] {
    for (const Binding &b : bindings)
      if (b.kind == "output")
        gpu::poisonOutput(b.pointer, gpu::argument(m, b.name));
    check(cuCtxSynchronize(), "poison");
  };
  auto advanceEpoch = [&] {
    if (!m.endsStep && epoch)
      gpu::advanceEpoch(epoch);
  };
  auto outputs = [&] {
    std::map<std::string, std::string> out;
    for (const Binding &b : bindings)
      if (b.kind == "output")
        out[b.name] = gpu::download(b.pointer, size_t(b.bytes));
    return out;
  };

  CUstream stream;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "stream");
  poison();
  require(monodc_launcher_launch(launcher, stream), stem + ": launch");
  check(cuStreamSynchronize(stream), "run");
  advanceEpoch();
  const std::map<std::string, std::string> first = outputs();
  bool good = true;
  for (const auto &[name, got] : first) {
    const gpu::Region &r = gpu::argument(m, name);
    const gpu::RegionVerdict v =
        gpu::compareRegion(r.format, r.rows, got, readText(base + ".out." + name + ".bin"));
    good &= v.ok;
    std::printf("%-40s %-14s %5zu/%-6zu %10.2e %10.6f %s\n", stem.c_str(), name.c_str(),
                v.equalUnits, v.units, v.comparison.relativeError, v.comparison.cosine,
                !v.ok ? "FAIL" : (v.layerBound ? "PASS (layer bound)" : "PASS"));
  }

  // The same launch in a graph: captured (the launcher makes only the
  // launch call), instantiated, replayed twice.
  CUgraph graph;
  CUgraphExec exec;
  check(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "begin capture");
  monodc_error *captured = monodc_launcher_launch(launcher, stream);
  check(cuStreamEndCapture(stream, &graph), "end capture");
  require(captured, stem + ": launch under capture");
  check(cuGraphInstantiate(&exec, graph, 0), "instantiate");
  bool replaysEqual = true;
  for (int replay = 0; replay < 2; ++replay) {
    poison();
    check(cuGraphLaunch(exec, stream), "replay");
    check(cuStreamSynchronize(stream), "replay");
    advanceEpoch();
    replaysEqual &= outputs() == first;
  }
  std::printf("%-40s %-14s %s\n", stem.c_str(), "(graph)",
              replaysEqual ? "PASS: 2 replays bit-identical to the direct launch"
                           : "FAIL: a replay differs from the direct launch");
  good &= replaysEqual;

  // A wrong binding is refused by name.
  good &= refuses(monodc_launcher_bind(launcher, "no_such_region", reinterpret_cast<void *>(epoch)),
                  stem + " bind no_such_region");
  cuGraphExecDestroy(exec);
  cuGraphDestroy(graph);
  cuStreamDestroy(stream);
  monodc_launcher_destroy(launcher);
  for (const Binding &b : bindings)
    cuMemFree(b.pointer);
  return good;
}

} // namespace

int main(int argc, char **argv) {
  gpu::programName = "launcher_check";
  if (argc < 4)
    die("usage: launcher_check CACHE SIM_DIR STEM=REQUEST...");
  // The driver's primary context: the library retains and uses the same
  // one, so the buffers allocated here are the launcher's to use.
  check(cuInit(0), "cuInit");
  CUdevice device;
  CUcontext context;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&context, device), "primary context");
  check(cuCtxSetCurrent(context), "current context");

  monodc_session *session = nullptr;
  require(monodc_session_open(argv[1], &session), std::string("session over ") + argv[1]);
  std::printf("%-40s %-14s %12s %10s %10s %s\n", "launch", "output", "equal", "rel err", "cosine",
              "result");
  bool good = true;
  for (int a = 3; a < argc; ++a) {
    const std::string item = argv[a];
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      die("expected STEM=REQUEST, got '" + item + "'");
    good &= checkLaunch(session, argv[2], item.substr(0, eq), item.substr(eq + 1));
  }
  // Requests the library must refuse, with a message that names them.
  const monodc_kernel *none = nullptr;
  good &= refuses(monodc_session_kernel(session, "model=tiny launch=k1 arch=sm_90 tp=2 rows=7 backend=nvrtc", &none),
                  "request of a width not in the cache");
  good &= refuses(monodc_session_kernel(session, "model=tiny launch=k1 arch=sm_90 tp=3 rows=6 backend=nvrtc", &none),
                  "request of TP 3");
  monodc_session_close(session);
  cuDevicePrimaryCtxRelease(device);
  std::printf("%s\n", good ? "ALL LAUNCHER CHECKS PASSED" : "SOME LAUNCHER CHECKS FAILED");
  return good ? 0 : 1;
}
