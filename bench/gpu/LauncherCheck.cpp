// Launches on the GPU the way a serving engine does, through the runtime
// library's C ABI: a runtime-only session over a code-object cache (cubins
// that `monodc matrix --backend nvrtc` built, `emit.sh launcher`), the
// kernel of a request, a launcher over the CUDA driver (libcuda, dlopen'd
// by the library), the regions bound to device memory, one launch on a
// stream, then the same launch captured in a CUDA graph and replayed twice.
// Each launch's inputs and expected outputs are the simulator's dump
// (`monodc simulate --dump`); outputs must meet the launch check's bounds
// (RegionCompare.h) and the graph replays must give the direct launch's
// bytes. A launch with peer memory (TP) takes a launcher per rank, bound
// to its rank and to the ranks' peer buffers in this GPU's memory, all
// launched at once on their own streams; its ranks must fit the SMs
// together (`monodc matrix --grid`: 66 each for two ranks), which the
// launchers check (monodc_launcher_create_shared; more ranks than the SMs
// could ever hold are refused); and, with one rank launched alone, its
// bounded waits give up and the library names the wait. A TP launch also
// runs as a process a rank on this GPU, peer buffers opened from IPC
// handles exchanged through a directory (monodc_peer_group_*), each
// rank's outputs bit for bit the simulator's; a rank that stalls after
// joining, and one killed (SIGKILL) after joining, make every other rank's
// waits give up within their budget, named. Last, requests
// the library must refuse, to show their messages.
//
// With `--layer-step K1 K2` (two STEM=REQUESTs), K1 then K2 as one layer
// step of the library (monodc_layer_step_*), against the two bound by hand.
//
//   launcher_check CACHE SIM_DIR [STEM=REQUEST | --layer-step K1 K2]...
#include "CApiSupport.h"
#include "RegionCompare.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using gpu::check;
using gpu::die;
using gpu::require;
using gpu::readText;

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

/// One rank of a launch: its launcher, bound buffers and stream.
struct Rank {
  monodc_launcher *launcher = nullptr;
  std::vector<Binding> bindings;
  CUdeviceptr epoch = 0;
  CUstream stream = nullptr;
};

/// Binds rank r's buffers to its launcher: its rank, the peer table, inputs
/// and weights from the simulator's dump at `base`, a zeroed epoch buffer,
/// outputs; and makes its stream.
void bindRank(const monodc_kernel *kernel, const std::string &base, const std::string &stem,
              int ranks, int r, CUdeviceptr peerTable, Rank &k) {
  if (ranks > 1)
    require(monodc_launcher_bind_rank(k.launcher, r), stem + ": bind rank");
  for (size_t i = 0; i < monodc_kernel_argument_count(kernel); ++i) {
    monodc_kernel_argument a;
    require(monodc_kernel_argument_get(kernel, i, &a), stem + ": argument");
    const std::string kind = a.kind;
    if (a.launcher_owned || gpu::isCount(a))
      continue;
    if (kind == "peers") {
      require(monodc_launcher_bind(k.launcher, a.name, reinterpret_cast<void *>(peerTable)),
              stem + ": bind peers");
      continue;
    }
    Binding b{a.name, kind, gpu::alloc(size_t(a.bytes)), a.bytes};
    if (b.kind == "input" || b.kind == "weight") {
      const std::string bytes = readText(gpu::dumpFile(base, "in", ranks, r, b.name));
      if (int64_t(bytes.size()) != b.bytes)
        die(stem + ": input " + b.name + " has " + std::to_string(bytes.size()) +
            " bytes, the kernel's argument " + std::to_string(b.bytes));
      check(cuMemcpyHtoD(b.pointer, bytes.data(), bytes.size()), "upload");
    } else if (b.kind == "epoch") {
      check(cuMemsetD8(b.pointer, 0, size_t(b.bytes)), "zero epoch");
      k.epoch = b.pointer;
    } else if (b.kind != "output") {
      die(stem + ": argument " + b.name + " of kind " + b.kind + " is not bound here");
    }
    require(monodc_launcher_bind(k.launcher, b.name.c_str(), reinterpret_cast<void *>(b.pointer)),
            stem + ": bind " + b.name);
    k.bindings.push_back(b);
  }
  for (const auto &[region, rows] : gpu::nominalRows(kernel))
    require(monodc_launcher_set_rows(k.launcher, region.c_str(), rows), stem + ": rows of " + region);
  check(cuStreamCreate(&k.stream, CU_STREAM_NON_BLOCKING), "stream");
}

/// The directory a TP stem's rank processes exchange their peer handles
/// through; beside it (`-expected`) the one-process run's outputs, which
/// each rank's process must reproduce bit for bit.
std::string exchangeDir(const std::string &stem) {
  return "/tmp/monodc-peers-" + std::to_string(getpid()) + "-" + stem;
}
std::string expectedFile(const std::string &exchange, const std::string &name, int rank) {
  return exchange + "-expected/" + name + ".r" + std::to_string(rank);
}

/// One stem: a launcher per rank over its own buffers (a TP launch's ranks
/// share peer buffers in this GPU's memory and run at once on their own
/// streams), launched directly and from a graph.
bool checkLaunch(monodc_session *session, const std::string &dir, const std::string &stem,
                 const std::string &request, int sms) {
  const std::string base = dir + "/" + stem;
  const gpu::Manifest m = gpu::readManifest(base + ".manifest");
  const monodc_kernel *kernel = nullptr;
  require(monodc_session_kernel(session, request.c_str(), &kernel), request);
  const int ranks = int(monodc_kernel_ranks(kernel));
  const int64_t grid = monodc_kernel_grid(kernel);
  std::printf("%-40s key %s, %s, grid %lld, %d rank(s)\n", stem.c_str(), monodc_kernel_key(kernel),
              monodc_kernel_symbol(kernel), static_cast<long long>(grid), ranks);
  if (ranks != int(m.ranks))
    die(stem + ": the kernel has " + std::to_string(ranks) + " ranks, the simulator's dump " +
        std::to_string(m.ranks));
  // The ranks share this GPU: each launcher checks that all their grids are
  // resident together, or the pair would wait on each other forever.
  std::vector<Rank> rs(ranks);
  for (int r = 0; r < ranks; ++r)
    if (monodc_error *e = monodc_launcher_create_shared(kernel, 0, ranks, &rs[r].launcher)) {
      std::printf("%-40s FAIL: %s (%d SMs; build the cache with `monodc matrix --grid`)\n",
                  stem.c_str(), monodc_error_message(e), sms);
      monodc_error_free(e);
      for (Rank &k : rs)
        if (k.launcher)
          monodc_launcher_destroy(k.launcher);
      return false;
    }
  gpu::PeerBuffers peers;
  if (monodc_kernel_peer_buffer_bytes(kernel) > 0) {
    peers = gpu::allocatePeers(m, ranks);
    if (2 * ranks * m.peerSlotBytes != monodc_kernel_peer_buffer_bytes(kernel))
      die(stem + ": peer buffer bytes differ between the kernel and the manifest");
  }
  for (int r = 0; r < ranks; ++r)
    bindRank(kernel, base, stem, ranks, r, peers.table, rs[r]);
  auto poison = [&] {
    for (const Rank &k : rs)
      for (const Binding &b : k.bindings)
        if (b.kind == "output")
          gpu::poisonOutput(b.pointer, gpu::argument(m, b.name));
    check(cuCtxSynchronize(), "poison");
  };
  auto advanceEpochs = [&] {
    for (const Rank &k : rs)
      if (!m.endsStep && k.epoch)
        gpu::advanceEpoch(k.epoch);
  };
  auto outputs = [&](int r) {
    std::map<std::string, std::string> out;
    for (const Binding &b : rs[r].bindings)
      if (b.kind == "output")
        out[b.name] = gpu::download(b.pointer, size_t(b.bytes));
    return out;
  };
  std::vector<CUstream> streams;
  for (const Rank &k : rs)
    streams.push_back(k.stream);
  CUevent fork, join;
  check(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING), "event");
  check(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING), "event");
  // Every rank's launch, each on its stream, forked from and joined into
  // the first one's (so that capturing it takes them all); the first error.
  auto enqueueAll = [&] {
    monodc_error *failed = nullptr;
    gpu::forkJoin(streams, fork, join, [&] {
      for (int r = 0; r < ranks && !failed; ++r)
        failed = monodc_launcher_launch(rs[r].launcher, rs[r].stream);
    });
    return failed;
  };

  poison();
  require(enqueueAll(), stem + ": launch");
  check(cuCtxSynchronize(), "run");
  advanceEpochs();
  std::vector<std::map<std::string, std::string>> first(ranks);
  bool good = true;
  if (ranks > 1)
    std::filesystem::create_directories(exchangeDir(stem) + "-expected");
  for (int r = 0; r < ranks; ++r) {
    first[r] = outputs(r);
    for (const auto &[name, got] : first[r])
      if (ranks > 1)
        std::ofstream(expectedFile(exchangeDir(stem), name, r), std::ios::binary) << got;
    const std::string suffix = ranks > 1 ? " r" + std::to_string(r) : "";
    for (const auto &[name, got] : first[r]) {
      const gpu::Region &region = gpu::argument(m, name);
      const gpu::RegionVerdict v = gpu::compareRegion(
          region.format, region.rows, got, readText(gpu::dumpFile(base, "out", ranks, r, name)));
      good &= v.ok;
      std::printf("%-40s %-14s %5zu/%-6zu %10.2e %10.6f %s\n", stem.c_str(),
                  (name + suffix).c_str(), v.equalUnits, v.units, v.comparison.relativeError,
                  v.comparison.cosine, !v.ok ? "FAIL" : (v.layerBound ? "PASS (layer bound)" : "PASS"));
    }
  }

  // The same launches in a graph: captured (the launchers make only the
  // launch calls), instantiated, replayed twice.
  CUgraph graph;
  CUgraphExec exec;
  check(cuStreamBeginCapture(rs[0].stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "begin capture");
  monodc_error *captured = enqueueAll();
  check(cuStreamEndCapture(rs[0].stream, &graph), "end capture");
  require(captured, stem + ": launch under capture");
  check(cuGraphInstantiate(&exec, graph, 0), "instantiate");
  bool replaysEqual = true;
  for (int replay = 0; replay < 2; ++replay) {
    poison();
    check(cuGraphLaunch(exec, rs[0].stream), "replay");
    check(cuStreamSynchronize(rs[0].stream), "replay");
    advanceEpochs();
    for (int r = 0; r < ranks; ++r)
      replaysEqual &= outputs(r) == first[r];
  }
  std::printf("%-40s %-14s %s\n", stem.c_str(), "(graph)",
              replaysEqual ? "PASS: 2 replays bit-identical to the direct launch"
                           : "FAIL: a replay differs from the direct launch");
  good &= replaysEqual;

  // A lost rank: rank 0 launches alone under a 200 ms wait budget, so its
  // polls of the other ranks' peer flags give up, and with them every wait
  // held up behind them; the launch still ends, and checking its waits
  // names the wait that gave up first (of whichever CTA began waiting
  // first: a peer poll, or a local wait behind one). Zeroing the step sequence's
  // buffers (epochs, peers, scratch) then gives the first launch's outputs.
  if (ranks > 1) {
    constexpr uint32_t kBudgetUs = 200000;
    auto zeroStepBuffers = [&] {
      for (Rank &k : rs) {
        check(cuMemsetD8(k.epoch, 0, size_t(4 * m.epochWords)), "zero epoch");
        require(monodc_launcher_reset_scratch(k.launcher), stem + ": reset scratch");
      }
      for (CUdeviceptr p : peers.buffers)
        check(cuMemsetD8(p, 0, size_t(2 * ranks * m.peerSlotBytes)), "zero peers");
    };
    // Launched directly, then captured in a graph and replayed (a serving
    // engine replays its steps): either way the waits give up and are named.
    for (const bool captured : {false, true}) {
      require(monodc_launcher_set_wait_budget(rs[0].launcher, kBudgetUs), stem + ": wait budget");
      CUgraph loneGraph = nullptr;
      CUgraphExec loneExec = nullptr;
      if (captured) {
        check(cuStreamBeginCapture(rs[0].stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "capture");
        require(monodc_launcher_launch(rs[0].launcher, rs[0].stream), stem + ": lone capture");
        check(cuStreamEndCapture(rs[0].stream, &loneGraph), "end capture");
        check(cuGraphInstantiate(&loneExec, loneGraph, 0), "instantiate");
      }
      const auto start = std::chrono::steady_clock::now();
      if (captured)
        check(cuGraphLaunch(loneExec, rs[0].stream), "lone replay");
      else
        require(monodc_launcher_launch(rs[0].launcher, rs[0].stream), stem + ": lone launch");
      monodc_error *fault = monodc_launcher_check_waits(rs[0].launcher, rs[0].stream);
      const double ms = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count();
      const std::string message = fault ? monodc_error_message(fault) : "";
      monodc_error_free(fault);
      const bool named = message.find("rank 0 CTA ") != std::string::npos &&
                         message.find("gave up waiting after its budget of 200 ms") !=
                             std::string::npos &&
                         message.find("(wait site ") != std::string::npos &&
                         message.find("not in the manifest") == std::string::npos;
      const bool prompt = ms < 4 * kBudgetUs / 1000.0;
      std::printf("%-40s %-14s %s: the lone rank's %s ended after %.1f ms (budget %u ms): %s\n",
                  stem.c_str(), captured ? "(lost, graph)" : "(lost rank)",
                  named && prompt ? "PASS" : "FAIL", captured ? "graph replay" : "launch", ms,
                  kBudgetUs / 1000, message.empty() ? "no fault reported" : message.c_str());
      good &= named && prompt;
      if (captured) {
        cuGraphExecDestroy(loneExec);
        cuGraphDestroy(loneGraph);
      }
      zeroStepBuffers();
    }
    poison();
    require(enqueueAll(), stem + ": launch after the fault");
    bool recovered = true;
    for (int r = 0; r < ranks; ++r) {
      monodc_error *after = monodc_launcher_check_waits(rs[r].launcher, rs[r].stream);
      recovered &= after == nullptr;
      monodc_error_free(after);
    }
    advanceEpochs();
    for (int r = 0; r < ranks; ++r)
      recovered &= outputs(r) == first[r];
    std::printf("%-40s %-14s %s\n", stem.c_str(), "(recovered)",
                recovered ? "PASS: buffers zeroed, every rank's outputs as the first launch's"
                          : "FAIL: after zeroing, a fault or outputs unlike the first launch's");
    good &= recovered;
  }

  // A wrong binding is refused by name; so is a rank the launch does not have.
  good &= refuses(monodc_launcher_bind(rs[0].launcher, "no_such_region",
                                       reinterpret_cast<void *>(rs[0].epoch)),
                  stem + " bind no_such_region");
  if (ranks > 1)
    good &= refuses(monodc_launcher_bind_rank(rs[0].launcher, ranks), stem + " bind rank " +
                                                                          std::to_string(ranks));
  // More ranks on this GPU than its SMs can hold together are refused (an
  // SM holds at most 32 CTAs, so this many never fit, whatever the kernel's
  // occupancy).
  {
    const int crowd = int(int64_t(sms) * 32 / grid) + 1;
    monodc_launcher *crowded = nullptr;
    good &= refuses(monodc_launcher_create_shared(kernel, 0, crowd, &crowded),
                    stem + " " + std::to_string(crowd) + " ranks on one GPU");
    if (crowded)
      monodc_launcher_destroy(crowded);
  }
  cuGraphExecDestroy(exec);
  cuGraphDestroy(graph);
  cuEventDestroy(fork);
  cuEventDestroy(join);
  for (Rank &k : rs) {
    cuStreamDestroy(k.stream);
    monodc_launcher_destroy(k.launcher);
    for (const Binding &b : k.bindings)
      cuMemFree(b.pointer);
  }
  gpu::freePeers(peers);
  return good;
}

/// One rank of a TP launch in a process of its own (`--rank`): its peer
/// group's handle goes through `exchange`, a directory all the ranks'
/// processes share, and the other ranks' buffers are opened from theirs;
/// then one launch, its waits checked, and its outputs bit for bit against
/// the one-process run's (checkLaunch) and within the bounds against the
/// simulator's dump. The exit status says whether it passed.
int runRank(monodc_session *session, const std::string &dir, const std::string &stem,
            const std::string &request, int rank, const std::string &exchange, int timeoutMs) {
  const std::string base = dir + "/" + stem;
  const gpu::Manifest m = gpu::readManifest(base + ".manifest");
  const monodc_kernel *kernel = nullptr;
  require(monodc_session_kernel(session, request.c_str(), &kernel), request);
  const int ranks = int(monodc_kernel_ranks(kernel));
  const std::string who = stem + " r" + std::to_string(rank);
  Rank k;
  require(monodc_launcher_create_shared(kernel, 0, ranks, &k.launcher), who + ": launcher");
  monodc_peer_group *group = nullptr;
  require(monodc_peer_group_create(kernel, 0, rank, &group), who + ": peer group");
  if (monodc_error *e = monodc_peer_group_exchange(group, exchange.c_str(), timeoutMs)) {
    std::printf("%-40s %-14s exchange: %s\n", (stem + " (process)").c_str(),
                ("r" + std::to_string(rank)).c_str(), monodc_error_message(e));
    monodc_error_free(e);
    return 3;
  }
  bindRank(kernel, base, stem, ranks, rank,
           reinterpret_cast<CUdeviceptr>(monodc_peer_group_table(group)), k);
  // A lost rank: a stalled one (MONODC_CHECK_STALLED_RANK) joins the group,
  // holds its buffer a while and never launches; a killed one
  // (MONODC_CHECK_KILLED_RANK) joins and dies by SIGKILL, its process gone
  // with its context. Every other rank's waits must give up within their
  // 200 ms budget and be named.
  const char *stalled = std::getenv("MONODC_CHECK_STALLED_RANK");
  const char *killed = std::getenv("MONODC_CHECK_KILLED_RANK");
  if (stalled || killed) {
    if (killed && std::atoi(killed) == rank)
      kill(getpid(), SIGKILL);
    if (stalled && std::atoi(stalled) == rank) {
      usleep(2000000);
      monodc_peer_group_destroy(group);
      return 0;
    }
    require(monodc_launcher_set_wait_budget(k.launcher, 200000), who + ": wait budget");
    const auto start = std::chrono::steady_clock::now();
    require(monodc_launcher_launch(k.launcher, k.stream), who + ": launch");
    monodc_error *fault = monodc_launcher_check_waits(k.launcher, k.stream);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const std::string message = fault ? monodc_error_message(fault) : "";
    monodc_error_free(fault);
    const bool named = message.find("gave up waiting after its budget of 200 ms") !=
                           std::string::npos &&
                       message.find("not in the manifest") == std::string::npos;
    std::printf("%-40s %-14s %s after %.1f ms: %s\n",
                (stem + (killed ? " (killed)" : " (stalled)")).c_str(),
                ("r" + std::to_string(rank)).c_str(), named && ms < 800 ? "PASS" : "FAIL", ms,
                message.empty() ? "no fault reported" : message.substr(0, 160).c_str());
    monodc_launcher_destroy(k.launcher);
    monodc_peer_group_destroy(group);
    return named && ms < 800 ? 0 : 1;
  }
  require(monodc_launcher_set_wait_budget(k.launcher, 2000000), who + ": wait budget");
  require(monodc_launcher_launch(k.launcher, k.stream), who + ": launch");
  require(monodc_launcher_check_waits(k.launcher, k.stream), who + ": waits");
  bool exact = true;
  for (const Binding &b : k.bindings) {
    if (b.kind != "output")
      continue;
    const std::string got = gpu::download(b.pointer, size_t(b.bytes));
    const bool same = got == readText(expectedFile(exchange, b.name, rank));
    const gpu::Region &region = gpu::argument(m, b.name);
    const gpu::RegionVerdict v = gpu::compareRegion(
        region.format, region.rows, got, readText(gpu::dumpFile(base, "out", ranks, rank, b.name)));
    std::printf("%-40s %-14s %s\n", (stem + " (process)").c_str(),
                (b.name + " r" + std::to_string(rank)).c_str(),
                !same  ? "FAIL: differs from the one-process run"
                : v.ok ? "PASS: bit-identical to the one-process run, within the simulator's bounds"
                       : "FAIL: outside the simulator's bounds");
    exact &= same && v.ok;
  }
  monodc_launcher_destroy(k.launcher);
  monodc_peer_group_destroy(group);
  return exact ? 0 : 1;
}

/// Runs each rank of a TP stem as a process of this program (`--rank`),
/// peers exchanged by IPC handles through a fresh directory; then one rank
/// alone, whose exchange must name the ranks that never came.
bool checkAcrossProcesses(const char *self, const std::string &cache, const std::string &dir,
                          const std::string &item, int ranks) {
  auto spawn = [&](int rank, const std::string &exchange, int timeoutMs) {
    const std::string rankText = std::to_string(rank), timeoutText = std::to_string(timeoutMs);
    std::vector<std::string> args = {self, "--rank", rankText, "--exchange", exchange,
                                     "--timeout-ms", timeoutText, cache, dir, item};
    std::vector<char *> argv;
    for (std::string &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, self, nullptr, nullptr, argv.data(), environ) != 0)
      die("cannot start a rank process of " + std::string(self));
    return pid;
  };
  auto wait = [](pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  };
  const std::string stem = item.substr(0, item.find('='));
  const std::string exchange = exchangeDir(stem);
  std::filesystem::remove_all(exchange);
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r)
    pids.push_back(spawn(r, exchange, 60000));
  bool good = true;
  for (pid_t pid : pids)
    good &= wait(pid) == 0;
  std::printf("%-40s %-14s %s\n", stem.c_str(), "(processes)",
              good ? "PASS: every rank's process, peers by IPC handles"
                   : "FAIL: a rank's process failed (its lines above)");
  // The last rank is lost after joining, stalled (it never launches) or
  // killed (SIGKILL): the others' waits give up, named, and the killed
  // rank's process ends by the signal.
  auto lostRank = [&](const char *how, const char *variable, bool killed) {
    const std::string lostDir = exchange + "-" + how;
    std::filesystem::remove_all(lostDir);
    setenv(variable, std::to_string(ranks - 1).c_str(), 1);
    std::vector<pid_t> lostPids;
    for (int r = 0; r < ranks; ++r)
      lostPids.push_back(spawn(r, lostDir, 60000));
    unsetenv(variable);
    bool named = true;
    for (int r = 0; r < ranks; ++r) {
      int status = 0;
      waitpid(lostPids[r], &status, 0);
      named &= killed && r == ranks - 1 ? WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL
                                        : WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    std::printf("%-40s %-14s %s\n", stem.c_str(), (std::string("(") + how + " rank)").c_str(),
                named ? "PASS: every other rank's process got the named error in time"
                      : "FAIL: a rank's waits did not give up as they must (lines above)");
    std::filesystem::remove_all(lostDir);
    return named;
  };
  good &= lostRank("stalled", "MONODC_CHECK_STALLED_RANK", false);
  good &= lostRank("killed", "MONODC_CHECK_KILLED_RANK", true);
  // A lone rank: its exchange gives up naming the others.
  const std::string lone = exchange + "-lone";
  std::filesystem::remove_all(lone);
  const bool refused = wait(spawn(0, lone, 500)) == 3;
  std::printf("%-40s %-14s %s\n", stem.c_str(), "(lone rank)",
              refused ? "PASS: its exchange named the ranks that never came"
                      : "FAIL: a lone rank's exchange did not fail as it must");
  std::filesystem::remove_all(exchange);
  std::filesystem::remove_all(exchange + "-expected");
  std::filesystem::remove_all(lone);
  return good && refused;
}

/// A layer's step through the library's layer step (`--layer-step K1 K2`):
/// K1 then K2 of every rank (tiny, TP 2, both at one grid), the step binding
/// K1's hand-over to K2 and the step-internal outputs itself, against the
/// same two kernels run by plain launchers with K2's hand-over inputs bound
/// by hand to K1's outputs. Both take the same inputs (each name's bytes
/// from the first simulator dump that has it: K1's for the names both
/// launches read, K2's cache as the cache's first content), so their step
/// results (and the cache K1 wrote) must agree bit for bit and be written.
bool checkLayerStep(monodc_session *session, const std::string &dir, const std::string &k1Item,
                    const std::string &k2Item) {
  struct Item {
    std::string stem, base;
    const monodc_kernel *kernel = nullptr;
    int ranks = 1;
  };
  Item items[2];
  for (int i = 0; i < 2; ++i) {
    const std::string &text = i == 0 ? k1Item : k2Item;
    const size_t eq = text.find('=');
    items[i].stem = text.substr(0, eq);
    items[i].base = dir + "/" + items[i].stem;
    require(monodc_session_kernel(session, text.substr(eq + 1).c_str(), &items[i].kernel), text);
    items[i].ranks = int(gpu::readManifest(items[i].base + ".manifest").ranks);
  }
  const int ranks = int(monodc_kernel_ranks(items[1].kernel));
  const std::string label = items[0].stem + " + " + items[1].stem;
  const gpu::Manifest k2Manifest = gpu::readManifest(items[1].base + ".manifest");
  gpu::PeerBuffers peers[2] = {gpu::allocatePeers(k2Manifest, ranks),
                               gpu::allocatePeers(k2Manifest, ranks)};
  // Per path (0: plain launchers, 1: the layer step) and rank: every
  // region's buffer by name, and the step results to compare.
  std::vector<std::map<std::string, CUdeviceptr>> buffers[2];
  std::vector<CUstream> streams[2];
  std::vector<monodc_launcher *> plain[2];
  std::vector<monodc_layer_step *> steps;
  std::vector<std::string> results;
  for (int path = 0; path < 2; ++path)
    for (int r = 0; r < ranks; ++r) {
      std::map<std::string, CUdeviceptr> &mine = buffers[path].emplace_back();
      CUstream &stream = streams[path].emplace_back();
      check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "stream");
      for (const Item &item : items)
        for (const monodc_kernel_argument &a : gpu::kernelArguments(item.kernel)) {
          const std::string name = a.name, kind = a.kind;
          if (a.launcher_owned || gpu::isCount(a) || kind == "peers" ||
              kind == "epoch" || *a.handed_from_kernel || mine.count(name))
            continue;
          if (path == 1 && kind == "output" && !a.step_result)
            continue; // the step's own
          if (a.step_result && path == 0 && r == 0)
            if (std::find(results.begin(), results.end(), name) == results.end())
              results.push_back(name);
          mine[name] = gpu::alloc(size_t(a.bytes));
          // The cache's first content is K2's dump of it (K1 writes the
          // step's slots into it); outputs start poisoned.
          const Item &source = name == "kv_cache" ? items[1] : item;
          if (kind == "input" || kind == "weight" || name == "kv_cache") {
            const std::string bytes =
                readText(gpu::dumpFile(source.base, "in", source.ranks, r, name));
            if (int64_t(bytes.size()) != a.bytes)
              die(label + ": " + name + " has " + std::to_string(bytes.size()) +
                  " bytes in the dump, the kernel's argument " + std::to_string(a.bytes));
            check(cuMemcpyHtoD(mine[name], bytes.data(), bytes.size()), "upload");
          } else {
            check(cuMemsetD8(mine[name], 0xFF, size_t(a.bytes)), "poison");
          }
        }
      if (path == 0) {
        // Plain launchers: one epoch buffer for the rank's K1 and K2, K2's
        // hand-over inputs bound by hand to K1's outputs.
        const CUdeviceptr epoch = gpu::alloc(size_t(4 * k2Manifest.epochWords));
        check(cuMemsetD8(epoch, 0, size_t(4 * k2Manifest.epochWords)), "zero epoch");
        mine["mono_epoch"] = epoch;
        for (const Item &item : items) {
          monodc_launcher *&l = plain[0].emplace_back();
          require(monodc_launcher_create_shared(item.kernel, 0, ranks, &l), label + ": launcher");
          for (const monodc_kernel_argument &a : gpu::kernelArguments(item.kernel)) {
            const std::string kind = a.kind;
            if (a.launcher_owned || gpu::isCount(a))
              continue;
            const std::string source = *a.handed_from_kernel ? a.handed_from_region : a.name;
            const CUdeviceptr pointer = kind == "peers" ? peers[0].table : mine.at(source);
            require(monodc_launcher_bind(l, a.name, reinterpret_cast<void *>(pointer)),
                    label + ": bind " + a.name);
          }
          if (monodc_kernel_ranks(item.kernel) > 1)
            require(monodc_launcher_bind_rank(l, r), label + ": rank");
          for (const auto &[region, rows] : gpu::nominalRows(item.kernel))
            require(monodc_launcher_set_rows(l, region.c_str(), rows), label + ": rows");
        }
      } else {
        const monodc_kernel *both[] = {items[0].kernel, items[1].kernel};
        const size_t count[] = {2};
        monodc_layer_step *&step = steps.emplace_back();
        require(monodc_layer_step_create(both, count, 1, 0, ranks, nullptr, &step),
                label + ": layer step");
        for (const auto &[name, pointer] : mine)
          require(monodc_layer_step_bind(step, name.c_str(), reinterpret_cast<void *>(pointer)),
                  label + ": step bind " + name);
        require(monodc_layer_step_bind(step, "mono_peers", reinterpret_cast<void *>(peers[1].table)),
                label + ": step peers");
        require(monodc_layer_step_bind_rank(step, r), label + ": step rank");
        for (const Item &item : items)
          for (const auto &[region, rows] : gpu::nominalRows(item.kernel))
            require(monodc_layer_step_set_rows(step, region.c_str(), rows), label + ": step rows");
      }
    }
  // Every rank at once, each on its stream: K1 then K2.
  for (int r = 0; r < ranks; ++r) {
    require(monodc_launcher_launch(plain[0][2 * r], streams[0][r]), label + ": K1");
    require(monodc_launcher_launch(plain[0][2 * r + 1], streams[0][r]), label + ": K2");
  }
  check(cuCtxSynchronize(), "plain step");
  for (int r = 0; r < ranks; ++r)
    require(monodc_layer_step_run(steps[r], int64_t(k2Manifest.rows), streams[1][r]),
            label + ": step run");
  check(cuCtxSynchronize(), "layer step");
  for (int r = 0; r < ranks; ++r)
    require(monodc_layer_step_check_waits(steps[r], streams[1][r]), label + ": waits");
  bool good = true;
  for (int r = 0; r < ranks; ++r)
    for (const std::string &name : results) {
      const int64_t bytes = gpu::argument(name == "kv_cache" ? gpu::readManifest(items[0].base + ".manifest")
                                                             : k2Manifest,
                                          name)
                                .bytes;
      const std::string byHand = gpu::download(buffers[0][r].at(name), size_t(bytes));
      const std::string byStep = gpu::download(buffers[1][r].at(name), size_t(bytes));
      const bool written = byStep != std::string(size_t(bytes), '\xFF');
      const bool same = byHand == byStep;
      std::printf("%-40s %-14s %s\n", (label + " (layer step)").c_str(),
                  (name + " r" + std::to_string(r)).c_str(),
                  same && written ? "PASS: written, bit-identical to K1 and K2 bound by hand"
                  : same          ? "FAIL: never written"
                                  : "FAIL: differs from K1 and K2 bound by hand");
      good &= same && written;
    }
  for (monodc_launcher *l : plain[0])
    monodc_launcher_destroy(l);
  for (monodc_layer_step *step : steps)
    monodc_layer_step_destroy(step);
  for (int path = 0; path < 2; ++path) {
    for (auto &mine : buffers[path])
      for (auto &[name, pointer] : mine)
        cuMemFree(pointer);
    for (CUstream stream : streams[path])
      cuStreamDestroy(stream);
    gpu::freePeers(peers[path]);
  }
  return good;
}

} // namespace

int main(int argc, char **argv) {
  gpu::programName = "launcher_check";
  // A rank's process (checkAcrossProcesses):
  //   --rank R --exchange DIR --timeout-ms T CACHE SIM_DIR STEM=REQUEST
  const bool rankProcess = argc == 10 && std::string(argv[1]) == "--rank";
  if (argc < 4)
    die("usage: launcher_check CACHE SIM_DIR STEM=REQUEST...");
  const CUdevice device = gpu::usePrimaryContext();

  int sms = 0;
  check(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device), "SMs");
  if (rankProcess) {
    monodc_session *session = nullptr;
    require(monodc_session_open(argv[7], &session), std::string("session over ") + argv[7]);
    const std::string item = argv[9];
    const size_t eq = item.find('=');
    const int status = runRank(session, argv[8], item.substr(0, eq), item.substr(eq + 1),
                               std::atoi(argv[2]), argv[4], std::atoi(argv[6]));
    monodc_session_close(session);
    cuDevicePrimaryCtxRelease(device);
    return status;
  }
  monodc_session *session = nullptr;
  require(monodc_session_open(argv[1], &session), std::string("session over ") + argv[1]);
  std::printf("%-40s %-14s %12s %10s %10s %s\n", "launch", "output", "equal", "rel err", "cosine",
              "result");
  bool good = true;
  for (int a = 3; a < argc; ++a) {
    if (std::string(argv[a]) == "--layer-step") {
      if (a + 2 >= argc)
        die("--layer-step needs a K1 and a K2 STEM=REQUEST");
      good &= checkLayerStep(session, argv[2], argv[a + 1], argv[a + 2]);
      a += 2;
      continue;
    }
    const std::string item = argv[a];
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      die("expected STEM=REQUEST, got '" + item + "'");
    good &= checkLaunch(session, argv[2], item.substr(0, eq), item.substr(eq + 1), sms);
    const monodc_kernel *kernel = nullptr;
    require(monodc_session_kernel(session, item.substr(eq + 1).c_str(), &kernel), item);
    if (monodc_kernel_ranks(kernel) > 1)
      good &= checkAcrossProcesses(argv[0], argv[1], argv[2], item,
                                   int(monodc_kernel_ranks(kernel)));
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
