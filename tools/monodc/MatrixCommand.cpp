//===- MatrixCommand.cpp - monodc matrix --cache DIR ----------------------===//
//
// Builds every key of a build matrix into a cache directory ahead of time, for
// runtime-only deployments (a serving process without the compiler) and for
// compile-only CI. Keys already in the cache are checked and kept. Every
// input is checked before the first build; a key that fails does not stop
// the others, and the run ends with a table of every failure.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "monodc/jit/Compiler.h"
#include "monodc/runtime/LayerMap.h"
#include "monodc/runtime/StepWidths.h"
#include "monodc/stages/Launches.h"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace {

using monodc::cli::fail;
using monodc::cli::kUsageError;
using monodc::cli::plural;

struct MatrixCommand {
  std::string cache;
  std::string config = "dsv41";
  std::string archs = std::string(monodc::runtime::kDefaultTarget);
  std::string launches = "all";
  std::string rows = "widths"; ///< runtime::kStepWidths
  std::string tps = "2,4";
  std::string ratios = "1,2"; ///< the backbone layers' (`monodc layers`)
  std::string backend = "clang";
  std::string options = "-O3";
  std::optional<int64_t> grid; ///< none: the arch's compute units
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

/// "1-48", "6,12,48" or a mix; "widths" stands for the step widths.
std::vector<int64_t> parseNumbers(const std::string &text, const std::string &what) {
  std::vector<int64_t> numbers;
  for (const std::string &item : splitList(text)) {
    if (item == "widths" && what == "rows") {
      numbers.insert(numbers.end(), monodc::runtime::kStepWidths.begin(),
                     monodc::runtime::kStepWidths.end());
      continue;
    }
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
      fail("--" + what + ": cannot read '" + item + "' (a number, a range A-B" +
               (what == "rows" ? ", widths" : "") + " or a list)",
           kUsageError);
    }
  }
  if (numbers.empty())
    fail("--" + what + " names no values", kUsageError);
  return numbers;
}

/// A short name of a request for progress lines and the failure table.
std::string shortName(const monodc::KernelRequest &r) {
  std::string name = fmt::format("{} {} {} r{} tp{}", r.model, r.launch, r.arch, r.rows, r.tp);
  if (monodc::runtime::readsCompressedKeys(r.launch))
    name += fmt::format(" ratio {}", r.ratio);
  if (r.grid != 0)
    name += fmt::format(" grid {}", r.grid);
  return name;
}

/// The whole matrix, every input checked before anything is built: a wrong
/// value is one line and exit 2, not a refusal minutes into the run.
std::vector<monodc::KernelRequest> validatedRequests(const MatrixCommand &cmd,
                                                     monodc::Session &session) {
  using monodc::cli::kUsageError;
  if (auto problem = monodc::cli::jobsProblem(cmd.jobs))
    fail(*problem, kUsageError);
  if (auto config = monodc::stages::configByName(cmd.config); !config)
    fail(llvm::toString(config.takeError()), kUsageError);
  std::vector<std::string> known = monodc::stages::launchNames();
  std::vector<std::string> launches = cmd.launches == "all" ? known : splitList(cmd.launches);
  if (launches.empty())
    fail("--launch names no launches", kUsageError);
  for (const std::string &launch : launches)
    if (std::find(known.begin(), known.end(), launch) == known.end())
      fail(fmt::format("unknown launch '{}' (known: {})", launch, fmt::join(known, ", ")),
           kUsageError);
  std::vector<std::string> archs = splitList(cmd.archs);
  if (archs.empty())
    fail("--arch names no targets", kUsageError);
  for (const std::string &arch : archs) {
    if (monodc::stages::defaultGrid(arch) == 0)
      fail(fmt::format("unsupported arch '{}' (supported: {})", arch,
                       monodc::runtime::targetNames()),
           kUsageError);
    if (cmd.grid)
      if (auto problem = monodc::cli::gridProblem(arch, *cmd.grid))
        fail(*problem, kUsageError);
  }
  if (cmd.backend == "clang") {
    std::string problem;
    if (!monodc::cli::clangOptLevel(cmd.options, problem))
      fail(problem, kUsageError);
  }
  std::vector<int64_t> tps = parseNumbers(cmd.tps, "tp");
  std::vector<int64_t> rows = parseNumbers(cmd.rows, "rows");
  std::vector<int64_t> ratios = parseNumbers(cmd.ratios, "ratio");

  std::vector<monodc::KernelRequest> requests;
  for (const std::string &arch : archs)
    for (const std::string &launch : launches)
      for (int64_t tp : tps)
        for (int64_t r : rows)
          // A launch that reads no compressed key is one key at every ratio.
          for (int64_t ratio : monodc::runtime::readsCompressedKeys(launch)
                                   ? ratios
                                   : std::vector<int64_t>{0}) {
            monodc::KernelRequest request;
            request.model = cmd.config;
            request.launch = launch;
            request.arch = arch;
            request.tp = tp;
            request.rows = r;
            request.ratio = ratio;
            request.grid = cmd.grid.value_or(0);
            request.backend = cmd.backend;
            request.options = cmd.options;
            requests.push_back(request);
          }
  // Resolving a key checks rows, TP, grid, backend and arch against the
  // config without building anything.
  for (const monodc::KernelRequest &request : requests)
    if (auto key = session.resolve(request); !key)
      fail(key.message(), kUsageError);
  if (auto problem = monodc::cli::checkWritableDirectory(cmd.cache))
    fail("cannot fill cache directory " + cmd.cache + ": " + *problem, kUsageError);
  return requests;
}

/// What one key came to.
struct Outcome {
  enum class Kind { Built, Cached, Failed } kind = Kind::Failed;
  double ms = 0;
  uint64_t bytes = 0;
  std::string reason; ///< Failed only
};

int runMatrix(const MatrixCommand &cmd) {
  monodc::SessionOptions options;
  options.cacheDirectory = cmd.cache;
  options.warn = [](const std::string &) {}; // a failed write is an error here
  auto session = monodc::openJitSession(options);
  std::vector<monodc::KernelRequest> requests = validatedRequests(cmd, *session);
  std::cout << fmt::format("monodc matrix: {} into {}\n", plural(requests.size(), "key"),
                           cmd.cache);
  std::cout.flush();

  std::mutex outputMutex;
  std::atomic<size_t> next{0};
  std::vector<Outcome> outcomes(requests.size());
  std::string cacheError; ///< the cache stopped taking entries: stop
  auto wallStart = std::chrono::steady_clock::now();
  auto buildOne = [&](size_t i) {
    const monodc::KernelRequest &request = requests[i];
    Outcome &outcome = outcomes[i];
    auto start = std::chrono::steady_clock::now();
    auto key = session->resolve(request);
    if (!key) {
      outcome.reason = key.message();
      return;
    }
    monodc::runtime::CodeObjectCache::Lookup lookup = session->cache().find(key->text());
    bool wasCached = lookup.entry != nullptr;
    auto kernel = session->kernel(*key);
    outcome.ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    if (!kernel) {
      outcome.reason = kernel.message();
      return;
    }
    // The compiler applied the persistent-launch rule to what it built;
    // a cached entry is held to the same rule (it may predate it).
    std::string resources = "-";
    if (const auto &r = (*kernel)->resources) {
      resources = fmt::format("VGPR {} AGPR {} SGPR {} LDS {} scratch {}", r->vgprs, r->agprs,
                              r->sgprs, r->ldsBytes, r->scratchBytes);
      if (auto problem = monodc::cli::persistentProblem("cached entry", *r)) {
        outcome.reason = *problem;
        return;
      }
    }
    outcome.kind = wasCached ? Outcome::Kind::Cached : Outcome::Kind::Built;
    outcome.bytes = (*kernel)->codeObject().size();
    std::lock_guard<std::mutex> lock(outputMutex);
    if (!lookup.refused.empty())
      std::cout << "replacing a damaged entry: " << lookup.refused << "\n";
    const monodc::runtime::BuildKey &built = (*kernel)->key;
    const std::string ratio = monodc::runtime::readsCompressedKeys(built.launch)
                                  ? fmt::format(" ratio {}", built.ratio)
                                  : std::string();
    std::cout << fmt::format("{:<7} {:>8.1f} ms  {} {} {} r{} tp{}{} grid {}  {}  {}\n",
                             wasCached ? "cached" : "built", outcome.ms, built.model,
                             built.launch, built.arch, built.rows, built.tp, ratio, built.grid,
                             resources, built.fileName());
    std::cout.flush();
  };
  auto work = [&] {
    for (size_t i; (i = next++) < requests.size();) {
      try {
        buildOne(i);
      } catch (const std::exception &e) {
        outcomes[i].reason = std::string("unexpected exception: ") + e.what();
      }
      std::lock_guard<std::mutex> lock(outputMutex);
      if (outcomes[i].kind == Outcome::Kind::Failed) {
        // One line now, so a long run shows its failures as they happen;
        // the table at the end repeats them.
        std::cout << fmt::format("FAILED  {:>8.1f} ms  {}: {}\n", outcomes[i].ms,
                                 shortName(requests[i]), outcomes[i].reason);
        std::cout.flush();
      }
      // A cache that stops taking entries fails every later key the same
      // way: stop there instead of building what cannot be kept.
      if (!session->cache().writesToDisk() && cacheError.empty()) {
        cacheError = session->cache().writeError();
        next = requests.size();
      }
    }
  };
  std::vector<std::thread> workers;
  // No more threads than keys, as build starts no more than launches.
  for (size_t j = 1; j < std::min<size_t>(cmd.jobs, requests.size()); ++j)
    workers.emplace_back(work);
  work();
  for (std::thread &worker : workers)
    worker.join();
  double wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();

  int built = 0, cached = 0, failed = 0, untried = 0;
  uint64_t bytes = 0;
  double slowestMs = 0;
  std::string slowest = "none";
  for (size_t i = 0; i < requests.size(); ++i) {
    const Outcome &o = outcomes[i];
    bool tried = o.kind != Outcome::Kind::Failed || !o.reason.empty();
    untried += !tried;
    built += o.kind == Outcome::Kind::Built;
    cached += o.kind == Outcome::Kind::Cached;
    failed += o.kind == Outcome::Kind::Failed && tried;
    bytes += o.bytes;
    if (tried && o.kind != Outcome::Kind::Cached && o.ms > slowestMs) {
      slowestMs = o.ms;
      slowest = shortName(requests[i]);
    }
  }
  if (failed) {
    std::cout << fmt::format("{} failed:\n", plural(failed, "key"));
    std::cout << fmt::format("  {:<40} {}\n", "key", "reason");
    for (size_t i = 0; i < requests.size(); ++i)
      if (outcomes[i].kind == Outcome::Kind::Failed && !outcomes[i].reason.empty())
        std::cout << fmt::format("  {:<40} {}\n", shortName(requests[i]), outcomes[i].reason);
  }
  std::cout << fmt::format("{}: {} built, {} already cached{}{}; {} bytes of code objects\n",
                           plural(requests.size(), "key"), built, cached,
                           failed ? fmt::format(", {} failed", failed) : "",
                           untried ? fmt::format(", {} not tried", untried) : "", bytes);
  std::cout << fmt::format("wall {:.1f} s with {}; slowest build {:.1f} ms ({})\n", wallSeconds,
                           plural(cmd.jobs, "job"), slowestMs, slowest);
  if (!cacheError.empty())
    fail("cannot fill cache directory " + cmd.cache + ": " + cacheError);
  if (failed)
    fail(fmt::format("{} of {} failed (see the table above)", plural(failed, "key"),
                     requests.size()));
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
  sub->add_option("--rows", cmd->rows,
                  "step widths: N, A-B, widths (1,2,4,8,16,24,32,40,48) or a list")
      ->capture_default_str();
  sub->add_option("--tp", cmd->tps, "tensor parallelism: a list")->capture_default_str();
  sub->add_option("--ratio", cmd->ratios,
                  "compress ratios of k2 and attention_back: a list (0, 1, 2)")
      ->capture_default_str();
  auto grid = std::make_shared<int64_t>(0);
  CLI::Option *gridOption = sub->add_option(
      "--grid", *grid,
      "CTAs of every key, 1..4 x the arch's compute units (default: its compute units; TP "
      "ranks sharing one GPU need a share each)");
  sub->add_option("--backend", cmd->backend, "clang, hiprtc or nvrtc")->capture_default_str();
  sub->add_option("--options", cmd->options, "backend options (part of the key)")
      ->capture_default_str();
  sub->add_option("-j,--jobs", cmd->jobs, "builds at once")->capture_default_str();
  sub->callback([cmd, grid, gridOption] {
    if (gridOption->count())
      cmd->grid = *grid;
    std::exit(runMatrix(*cmd));
  });
}
