// A decode loop as a serving engine would run it through the runtime
// library's C ABI: LAYERS decoder layers (K1 then K2, tiny config, TP 2,
// both ranks on this GPU at grid 66), each a layer step of every rank
// (monodc_layer_step_*, a rank's layers sharing its epoch buffer through
// `same_rank`), each layer's step results bound as the next layer's
// inputs (x_out -> x, ffn_residual_out -> residual, ffn_post/comb/pre ->
// post_in/comb_in/pre_in), one CUDA graph holding a 6-row step then a
// 48-row step of every layer and rank. Layer 0's streams, the weights and
// the other inputs are the simulator's dumps (`emit.sh launcher`); every
// layer has its own caches.
//
// The first replay moves the caches from the dump's content to what the
// steps write; from the second on every replay must give the same bytes.
// The second replay's step results of every layer (the 6-row step's copied
// aside inside the graph before the 48-row step overwrites them) and its
// caches are kept as golden copies; each later replay is compared with
// them on the device, inside the graph. Passes with 0 differing bytes,
// both ranks' x_out equal, and no wait that gave up.
//
//   decode_loop CACHE SIM_DIR LAYERS STEPS
#include "CApiSupport.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using gpu::check;
using gpu::die;
using gpu::require;

constexpr int kRanks = 2;
constexpr int64_t kWidths[2] = {6, 48};

const monodc_kernel *kernel(monodc_session *session, const std::string &launch, int64_t rows) {
  const std::string request = "model=tiny launch=" + launch + " arch=sm_90 tp=2 rows=" +
                              std::to_string(rows) + " ratio=2 grid=66 backend=nvrtc";
  const monodc_kernel *k = nullptr;
  require(monodc_session_kernel(session, request.c_str(), &k), request);
  return k;
}

/// The next layer's input each step result feeds.
const std::map<std::string, std::string> kFeeds = {{"x_out", "x"},
                                                   {"ffn_residual_out", "residual"},
                                                   {"ffn_post", "post_in"},
                                                   {"ffn_comb", "comb_in"},
                                                   {"ffn_pre", "pre_in"}};

/// One layer of one rank: its step and the buffers the caller binds, by
/// name (its result buffers are the next layer's inputs).
struct Layer {
  monodc_layer_step *step = nullptr;
  std::map<std::string, CUdeviceptr> buffers;
  std::map<std::string, int64_t> bytes;
  std::vector<std::string> compared; ///< step results and caches, compared per replay
};

} // namespace

int main(int argc, char **argv) {
  gpu::programName = "decode_loop";
  if (argc != 5)
    die("usage: decode_loop CACHE SIM_DIR LAYERS STEPS");
  const std::string simDir = argv[2];
  const int layers = std::atoi(argv[3]);
  const long steps = std::atol(argv[4]);
  const long replays = steps / 2; // two steps (6 rows, 48 rows) a replay
  if (layers < 1 || replays < 3)
    die("LAYERS must be at least 1 and STEPS at least 6");
  const CUdevice device = gpu::usePrimaryContext();
  monodc_session *session = nullptr;
  require(monodc_session_open(argv[1], &session), std::string("session over ") + argv[1]);

  // Width after width, each width's launches in step order.
  const monodc_kernel *kernels[4] = {kernel(session, "k1", 6), kernel(session, "k2", 6),
                                     kernel(session, "k1", 48), kernel(session, "k2", 48)};
  const size_t counts[2] = {2, 2};
  // The row inputs come from the rows-48 dumps (bound once, sized for the
  // widest step); names both launches read, from K1's.
  const std::string dumps[2] = {simDir + "/k1.tiny.r48.tp2", simDir + "/k2.tiny.r48.tp2"};
  const gpu::Manifest k2Manifest = gpu::readManifest(dumps[1] + ".manifest");
  gpu::PeerBuffers peers = gpu::allocatePeers(k2Manifest, kRanks);

  std::vector<std::vector<Layer>> ranks(kRanks, std::vector<Layer>(layers));
  for (int r = 0; r < kRanks; ++r)
    for (int l = 0; l < layers; ++l) {
      Layer &layer = ranks[r][l];
      require(monodc_layer_step_create(kernels, counts, 2, 0, kRanks,
                                       l == 0 ? nullptr : ranks[r][0].step, &layer.step),
              "layer step");
      for (int i = 2; i < 4; ++i) // the rows-48 kernels: the widest buffers
        for (const monodc_kernel_argument &a : gpu::kernelArguments(kernels[i])) {
          const std::string name = a.name, kind = a.kind;
          const bool callerBinds = !a.launcher_owned && !gpu::isCount(a) && kind != "epoch" &&
                                   kind != "peers" && !*a.handed_from_kernel &&
                                   (kind != "output" || a.step_result);
          if (!callerBinds || layer.buffers.count(name))
            continue;
          layer.bytes[name] = a.bytes;
          if (a.step_result)
            layer.compared.push_back(name);
          // Layer l > 0 reads layer l - 1's results.
          bool fed = false;
          for (const auto &[result, input] : kFeeds)
            if (l > 0 && input == name) {
              layer.buffers[name] = ranks[r][l - 1].buffers.at(result);
              fed = true;
            }
          if (fed)
            continue;
          layer.buffers[name] = gpu::alloc(size_t(a.bytes));
          if (kind == "input" || kind == "weight" || name == "kv_cache") {
            // The cache's first content is K2's dump of it.
            const std::string &base = name == "kv_cache" || i == 3 ? dumps[1] : dumps[0];
            const int dumpRanks = base == dumps[1] ? kRanks : 1;
            const std::string data = gpu::readText(gpu::dumpFile(base, "in", dumpRanks, r, name));
            if (int64_t(data.size()) != a.bytes)
              die(name + ": the dump has " + std::to_string(data.size()) + " bytes, the kernel " +
                  std::to_string(a.bytes));
            check(cuMemcpyHtoD(layer.buffers[name], data.data(), data.size()), "upload");
          } else {
            check(cuMemsetD8(layer.buffers[name], 0xFF, size_t(a.bytes)), "poison");
          }
        }
      for (const auto &[name, pointer] : layer.buffers)
        require(monodc_layer_step_bind(layer.step, name.c_str(), reinterpret_cast<void *>(pointer)),
                "bind " + name);
      require(monodc_layer_step_bind(layer.step, "mono_peers", reinterpret_cast<void *>(peers.table)),
              "bind peers");
      require(monodc_layer_step_bind_rank(layer.step, r), "bind rank");
      for (int i = 2; i < 4; ++i)
        for (const auto &[region, rows] : gpu::nominalRows(kernels[i]))
          require(monodc_layer_step_set_rows(layer.step, region.c_str(), rows), "rows of " + region);
    }

  // Golden copies, the 6-row step's results set aside, a mismatch counter.
  struct Copy {
    CUdeviceptr from, aside, golden;
    size_t bytes;
  };
  std::vector<Copy> sixRow, fortyEightRow;
  for (auto &rank : ranks)
    for (Layer &layer : rank)
      for (const std::string &name : layer.compared) {
        const size_t bytes = size_t(layer.bytes.at(name));
        sixRow.push_back({layer.buffers.at(name), gpu::alloc(bytes), gpu::alloc(bytes), bytes});
        fortyEightRow.push_back({layer.buffers.at(name), 0, gpu::alloc(bytes), bytes});
      }
  const CUdeviceptr mismatches = gpu::alloc(sizeof(unsigned long long));
  check(cuMemsetD8(mismatches, 0, sizeof(unsigned long long)), "zero counter");
  gpu::ByteCompare compare;

  std::vector<CUstream> streams(kRanks);
  for (CUstream &s : streams)
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "stream");
  CUevent fork, join;
  check(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING), "event");
  check(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING), "event");
  auto step = [&](int64_t rows) {
    gpu::forkJoin(streams, fork, join, [&] {
      for (int r = 0; r < kRanks; ++r)
        for (Layer &layer : ranks[r])
          require(monodc_layer_step_run(layer.step, rows, streams[r]), "run");
    });
  };
  CUgraph graph;
  CUgraphExec exec;
  check(cuStreamBeginCapture(streams[0], CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "begin capture");
  step(kWidths[0]);
  for (const Copy &c : sixRow)
    check(cuMemcpyDtoDAsync(c.aside, c.from, c.bytes, streams[0]), "aside");
  step(kWidths[1]);
  for (const Copy &c : sixRow)
    compare.enqueue(c.aside, c.golden, c.bytes, mismatches, streams[0]);
  for (const Copy &c : fortyEightRow)
    compare.enqueue(c.from, c.golden, c.bytes, mismatches, streams[0]);
  check(cuStreamEndCapture(streams[0], &graph), "end capture");
  check(cuGraphInstantiate(&exec, graph, 0), "instantiate");

  // Replay 1 fills the caches; replay 2 gives the golden copies.
  for (int warm = 0; warm < 2; ++warm) {
    check(cuGraphLaunch(exec, streams[0]), "replay");
    check(cuStreamSynchronize(streams[0]), "replay");
  }
  for (const Copy &c : sixRow)
    check(cuMemcpyDtoD(c.golden, c.aside, c.bytes), "golden");
  for (const Copy &c : fortyEightRow)
    check(cuMemcpyDtoD(c.golden, c.from, c.bytes), "golden");
  check(cuMemsetD8(mismatches, 0, sizeof(unsigned long long)), "zero counter");
  const auto start = std::chrono::steady_clock::now();
  for (long replay = 2; replay < replays; ++replay)
    check(cuGraphLaunch(exec, streams[0]), "replay");
  check(cuStreamSynchronize(streams[0]), "replays");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  unsigned long long differing = 0;
  check(cuMemcpyDtoH(&differing, mismatches, sizeof differing), "counter");
  bool waitsGood = true;
  for (auto &rank : ranks)
    for (Layer &layer : rank)
      if (monodc_error *e = monodc_layer_step_check_waits(layer.step, streams[0])) {
        std::printf("FAIL: %s\n", monodc_error_message(e));
        monodc_error_free(e);
        waitsGood = false;
      }
  const Layer &last0 = ranks[0].back(), &last1 = ranks[1].back();
  const size_t xBytes = size_t(last0.bytes.at("x_out"));
  const bool ranksAgree = gpu::download(last0.buffers.at("x_out"), xBytes) ==
                          gpu::download(last1.buffers.at("x_out"), xBytes);
  const bool written = gpu::download(last0.buffers.at("x_out"), xBytes) !=
                       std::string(xBytes, '\xFF');
  std::printf("decode loop: %d layers, %d ranks, %ld steps (rows 6 then 48, %ld graph replays; "
              "%ld compared), %.1f us a replay\n",
              layers, kRanks, 2 * replays, replays, replays - 2,
              1e6 * seconds / double(replays - 2));
  std::printf("  %s: %llu bytes differ from the second replay (%zu regions a replay)\n",
              differing == 0 ? "PASS" : "FAIL", differing, sixRow.size() + fortyEightRow.size());
  std::printf("  %s: both ranks' last x_out equal%s\n", ranksAgree && written ? "PASS" : "FAIL",
              written ? "" : " (never written)");
  std::printf("  %s: no wait gave up\n", waitsGood ? "PASS" : "FAIL");
  const bool good = differing == 0 && ranksAgree && written && waitsGood;
  std::printf("%s\n", good ? "DECODE LOOP PASSED" : "DECODE LOOP FAILED");
  for (auto &rank : ranks)
    for (Layer &layer : rank)
      monodc_layer_step_destroy(layer.step);
  monodc_session_close(session);
  cuDevicePrimaryCtxRelease(device);
  return good ? 0 : 1;
}
