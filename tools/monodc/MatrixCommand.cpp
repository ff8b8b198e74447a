//===- MatrixCommand.cpp - monodc matrix --cache DIR ----------------------===//
//
// Builds every key of a build matrix into a cache directory ahead of time, for
// runtime-only deployments (a serving process without the compiler) and for
// compile-only CI. Keys already in the cache are checked and kept.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "monodc/Compiler.h"
#include "monodc/stages/Launches.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

namespace {

using monodc::cli::fail;

struct MatrixCommand {
  std::string cache;
  std::string config = "dsv41";
  std::string archs = std::string(monodc::runtime::kDefaultTarget);
  std::string launches = "all";
  std::string rows = "1-48";
  std::string tps = "2,4";
  std::string backend = "clang";
  std::string options = "-O3";
  int64_t grid = 0; ///< 0: the arch's compute units
  int jobs = 1;
};

std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');)
    if (!item.empty())
      items.push_back(item);
  return items;
}

/// "1-48", "6,12,48" or a mix.
std::vector<int64_t> parseNumbers(const std::string &text, const std::string &what) {
  std::vector<int64_t> numbers;
  for (const std::string &item : splitList(text)) {
    size_t dash = item.find('-');
    try {
      size_t used = 0;
      int64_t first = std::stoll(item.substr(0, dash), &used);
      int64_t last = dash == std::string::npos ? first : std::stoll(item.substr(dash + 1));
      if (used != (dash == std::string::npos ? item.size() : dash) || last < first)
        throw std::invalid_argument(item);
      for (int64_t n = first; n <= last; ++n)
        numbers.push_back(n);
    } catch (const std::exception &) {
      fail("--" + what + ": cannot read '" + item + "' (a number, a range A-B, or a list)");
    }
  }
  if (numbers.empty())
    fail("--" + what + " names no values");
  return numbers;
}

int runMatrix(const MatrixCommand &cmd) {
  std::vector<monodc::KernelRequest> requests;
  std::vector<std::string> launches = cmd.launches == "all" ? monodc::stages::launchNames()
                                                            : splitList(cmd.launches);
  for (const std::string &arch : splitList(cmd.archs))
    for (const std::string &launch : launches)
      for (int64_t tp : parseNumbers(cmd.tps, "tp"))
        for (int64_t rows : parseNumbers(cmd.rows, "rows")) {
          monodc::KernelRequest request;
          request.model = cmd.config;
          request.launch = launch;
          request.arch = arch;
          request.tp = tp;
          request.rows = rows;
          request.grid = cmd.grid;
          request.backend = cmd.backend;
          request.options = cmd.options;
          requests.push_back(request);
        }

  monodc::SessionOptions options;
  options.cacheDirectory = cmd.cache;
  options.warn = [](const std::string &) {}; // a failed write is an error here
  auto session = monodc::openJitSession(options);
  std::cout << fmt::format("monodc matrix: {} keys into {}\n", requests.size(), cmd.cache);

  std::mutex outputMutex;
  std::atomic<size_t> next{0};
  std::atomic<int> built{0}, cached{0};
  std::atomic<uint64_t> bytes{0};
  std::string firstError;
  double slowestMs = 0;
  std::string slowest = "none";
  bool scratchUsed = false;
  auto wallStart = std::chrono::steady_clock::now();
  auto work = [&] {
    for (size_t i; (i = next++) < requests.size();) {
      const monodc::KernelRequest &request = requests[i];
      auto start = std::chrono::steady_clock::now();
      auto key = session->resolve(request);
      monodc::runtime::CodeObjectCache::Lookup lookup;
      if (key)
        lookup = session->cache().find(key->text());
      bool wasCached = lookup.entry != nullptr;
      auto kernel = key ? session->kernel(*key)
                        : monodc::runtime::Result<std::shared_ptr<const monodc::Kernel>>(
                              key.error());
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                            start)
                      .count();
      std::lock_guard<std::mutex> lock(outputMutex);
      if (!kernel) {
        if (firstError.empty())
          firstError = request.text() + ": " + kernel.message();
        next = requests.size();
        return;
      }
      if (!session->cache().writesToDisk()) {
        next = requests.size();
        return;
      }
      (wasCached ? cached : built)++;
      bytes += (*kernel)->codeObject().size();
      if (!lookup.refused.empty())
        std::cout << "replacing a damaged entry: " << lookup.refused << "\n";
      // Resources as the code object's metadata note states them (none for
      // cubins); a persistent launch never reaches here with scratch (the
      // compiler refuses it), so the column shows the check held.
      std::string resources = "-";
      if (const auto &r = (*kernel)->resources) {
        resources = fmt::format("VGPR {} AGPR {} SGPR {} LDS {} scratch {}", r->vgprs, r->agprs,
                                r->sgprs, r->ldsBytes, r->scratchBytes);
        scratchUsed |= r->scratchBytes != 0;
      }
      if (!wasCached && ms > slowestMs) {
        slowestMs = ms;
        slowest = fmt::format("{} r{} tp{} {}", (*kernel)->key.launch, (*kernel)->key.rows,
                              (*kernel)->key.tp, (*kernel)->key.arch);
      }
      std::cout << fmt::format("{:<7} {:>8.1f} ms  {} {} {} r{} tp{} grid {}  {}  {}\n",
                               wasCached ? "cached" : "built", ms, (*kernel)->key.model,
                               (*kernel)->key.launch, (*kernel)->key.arch, (*kernel)->key.rows,
                               (*kernel)->key.tp, (*kernel)->key.grid, resources,
                               (*kernel)->key.fileName());
      std::cout.flush();
    }
  };
  std::vector<std::thread> workers;
  for (int j = 1; j < std::max(cmd.jobs, 1); ++j)
    workers.emplace_back(work);
  work();
  for (std::thread &worker : workers)
    worker.join();
  if (!firstError.empty())
    fail(firstError);
  if (!session->cache().writesToDisk())
    fail("cannot fill cache directory " + cmd.cache + ": " + session->cache().writeError());
  std::cout << fmt::format("{} keys: {} built, {} already cached; {} bytes of code objects\n",
                           requests.size(), built.load(), cached.load(), bytes.load());
  double wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
  std::cout << fmt::format("wall {:.1f} s with {} jobs; slowest build {:.1f} ms ({})\n",
                           wallSeconds, std::max(cmd.jobs, 1), slowestMs, slowest);
  if (scratchUsed)
    fail("a launch of the matrix uses scratch memory");
  return 0;
}

} // namespace

void monodc::cli::addMatrixCommand(CLI::App &app) {
  auto cmd = std::make_shared<MatrixCommand>();
  CLI::App *sub = app.add_subcommand(
      "matrix", "build every key of a build matrix into a cache directory (for runtime-only "
                "serving)");
  sub->add_option("--cache", cmd->cache, "cache directory to fill")->required();
  sub->add_option("--config", cmd->config, "model config: dsv41, tiny or moe16 (DSV41 with 16 experts, for validation)")->capture_default_str();
  sub->add_option("--arch", cmd->archs, "targets, comma-separated: " + monodc::runtime::targetNames())->capture_default_str();
  sub->add_option("--launch", cmd->launches, "launches, comma-separated, or all")
      ->capture_default_str();
  sub->add_option("--rows", cmd->rows, "step widths: N, A-B or a list")->capture_default_str();
  sub->add_option("--tp", cmd->tps, "tensor parallelism: a list")->capture_default_str();
  sub->add_option("--grid", cmd->grid,
                  "CTAs of every key (default: the arch's compute units; TP ranks sharing one "
                  "GPU need a share each)")
      ->check(CLI::Range(int64_t(1), int64_t(65536)));
  sub->add_option("--backend", cmd->backend, "clang, hiprtc or nvrtc")->capture_default_str();
  sub->add_option("--options", cmd->options, "backend options (part of the key)")
      ->capture_default_str();
  sub->add_option("-j,--jobs", cmd->jobs, "builds at once")->capture_default_str();
  sub->callback([cmd] { std::exit(runMatrix(*cmd)); });
}
