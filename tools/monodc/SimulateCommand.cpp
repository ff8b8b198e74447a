//===- SimulateCommand.cpp - monodc simulate ------------------------------===//
//
// Runs a launch on the CPU simulator with random inputs in their formats,
// under many seeded schedules (round-robin, reverse, starve-one and random in
// turn, on -j threads), and checks that every schedule gives bit-identical
// outputs: it prints the number of schedules and of distinct outcomes, and
// fails when there is more than one. --dump writes the inputs, the outputs (and with
// --dump-scratch the scratch regions), the sm_90 source and its manifest, so
// a GPU run of the same source can be compared
// with the simulator (bench/gpu/LaunchCheck.cpp). --trace writes every
// schedule's CTAs as a Chrome/Perfetto trace (monodc/Simulator/ChromeTrace.h).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "monodc/Support/DiagnosticText.h"
#include "monodc/Emit/EmitPipeline.h"
#include "monodc/Emit/HipEmitter.h"
#include "monodc/Simulator/ChromeTrace.h"
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/stages/Launches.h"

#include "mlir/IR/MLIRContext.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>

namespace {

using monodc::cli::fail;
namespace mono = monodc::mono;
namespace sim = monodc::sim;

struct SimulateCommand {
  std::string config = "tiny";
  std::string launch = "attention_front";
  int64_t rows = 6, tp = 2, grid = 16, schedules = 4;
  int64_t ratio = monodc::stages::kDefaultCliRatio;
  int jobs = 1; // an int, as build's and matrix's: a value past it is refused as unreadable
  unsigned seed = 1;
  std::string testDropWaits; ///< test only: a stage whose waits are erased
  int64_t lostRank = -1;     ///< a rank that never runs (-1: none)
  std::optional<int64_t> cachePages; ///< the KV caches' pages given at launch (else the config's)
  std::string dump;
  std::string trace;       ///< a Chrome/Perfetto trace of the schedules
  std::string memoryLimit; ///< empty: MemAvailable of /proc/meminfo
  bool dumpScratch = false;
  bool unfused = false; ///< the unfused baseline (mono-unfuse): a kernel a stage
};

/// Random values in a region's format with magnitudes a layer sees: bf16 and
/// f32 ~ N(0, 1); e4m3 codes of N(0, 8); E8M0 scales 2^-10 .. 2^-6.
std::vector<float> randomValues(mlir::Type type, int64_t n, std::mt19937 &rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> scale(117, 121);
  std::vector<float> v(n);
  for (float &x : v) {
    if (mlir::isa<mlir::Float8E8M0FNUType>(type))
      x = monodc::formats::e8m0Value(static_cast<uint8_t>(scale(rng)));
    else if (mlir::isa<mlir::Float8E4M3FNType>(type))
      x = monodc::formats::roundToE4m3(8.0f * normal(rng));
    else if (mlir::isa<mlir::Float4E2M1FNType>(type))
      x = monodc::formats::roundToE2m1(2.0f * normal(rng));
    else
      x = normal(rng);
  }
  return v;
}

/// n distinct whole numbers in [0, bound) (repeating once the bound is
/// smaller than n).
std::vector<float> distinctIndices(size_t n, int64_t bound, std::mt19937 &rng) {
  std::vector<float> out;
  std::uniform_int_distribution<int64_t> pick(0, bound - 1);
  while (out.size() < n) {
    float v = static_cast<float>(pick(rng));
    if (static_cast<int64_t>(out.size()) >= bound || std::find(out.begin(), out.end(), v) == out.end())
      out.push_back(v);
  }
  return out;
}

void writeBytes(const std::filesystem::path &path, const std::vector<uint8_t> &bytes) {
  if (auto problem = monodc::cli::writeFile(path.string(), std::string(bytes.begin(), bytes.end())))
    fail(*problem);
}

/// Bytes the host can still give us: MemAvailable of /proc/meminfo, or
/// nothing where the file does not say.
std::optional<uint64_t> availableMemory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> name >> kib >> unit)
    if (name == "MemAvailable:")
      return kib * 1024;
  return std::nullopt;
}

/// "16G", "512M", "1000000" (bytes).
std::optional<uint64_t> parseBytes(const std::string &text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception &) {
    return std::nullopt;
  }
  std::string suffix = text.substr(used);
  double scale = suffix.empty() || suffix == "B" ? 1
                 : suffix == "K" || suffix == "KiB" ? 1024.0
                 : suffix == "M" || suffix == "MiB" ? 1024.0 * 1024
                 : suffix == "G" || suffix == "GiB" ? 1024.0 * 1024 * 1024
                                                    : 0;
  if (scale == 0 || value <= 0)
    return std::nullopt;
  return static_cast<uint64_t>(value * scale);
}

/// What a simulation holds at its peak, from the planned regions, for every
/// rank: the random inputs and weights as floats and encoded once (every
/// schedule shares them), and the other regions of one launch per thread
/// and of the first schedule (kept to compare). Peer regions hold a copy
/// per parity and source rank. The simulator's own state per CTA comes on
/// top: it is small beside the weights.
uint64_t estimateMemory(mono::LaunchOp launch, int64_t jobs) {
  const uint64_t ranks = launch.getRanks();
  uint64_t inputFloats = 0, readOnlyBytes = 0, writableBytes = 0;
  for (auto region : launch.getBodyBlock().getOps<mono::RegionOp>()) {
    uint64_t bytes = mono::regionBytes(region);
    if (region.getKind() == mono::MemoryKind::Peer || region->hasAttr("mono.peer"))
      bytes *= 2 * ranks;
    (region.isWritable() ? writableBytes : readOnlyBytes) += bytes;
    if (!region.isWritable())
      inputFloats += 4 * uint64_t(region.getRows()) * uint64_t(region.getCols());
  }
  return ranks * (inputFloats + readOnlyBytes + (uint64_t(jobs) + 1) * writableBytes);
}

std::string gib(uint64_t bytes) {
  if (bytes < (1ull << 30))
    return fmt::format("{:.1f} MiB", bytes / double(1ull << 20));
  return fmt::format("{:.1f} GiB", bytes / double(1ull << 30));
}

/// "round-robin", "reverse from CTA 3, 2 turns each", "starve-one CTA 5,
/// seed N", "random, seed N".
std::string describeSchedule(const sim::Schedule &schedule, int64_t ctas) {
  const char *name = sim::policyName(schedule.policy);
  switch (schedule.policy) {
  case sim::SchedulePolicy::RoundRobin:
  case sim::SchedulePolicy::Reverse: {
    const uint64_t n = static_cast<uint64_t>(ctas);
    if (schedule.seed == 0)
      return name;
    return fmt::format("{} from CTA {}, {} each", name, schedule.seed % n,
                       monodc::cli::plural(1 + schedule.seed / n % 3, "turn"));
  }
  case sim::SchedulePolicy::StarveOne:
    return fmt::format("{} CTA {}, seed {}", name, schedule.starvedCta, schedule.seed);
  case sim::SchedulePolicy::Random:
    return fmt::format("{}, seed {}", name, schedule.seed);
  }
  return name;
}

/// Test only (--test-drop-waits): erases every poll of `stage`, so that it
/// reads what its producers hand over without waiting for it, a race that
/// the schedules must expose.
void dropWaits(mono::LaunchOp launch, const std::string &stage) {
  int64_t dropped = 0;
  for (auto s : launch.getBodyBlock().getOps<mono::StageOp>()) {
    if (s.getSymName() != stage)
      continue;
    for (mlir::Operation &op : llvm::make_early_inc_range(s.getBodyBlock()))
      if (mlir::isa<mono::WaitOp, mono::WaitPeerOp>(op)) {
        op.erase();
        ++dropped;
      }
  }
  if (dropped == 0)
    fail("--test-drop-waits: stage '" + stage + "' has no waits", monodc::cli::kUsageError);
}

int runSimulate(const SimulateCommand &cmd) {
  using monodc::cli::kUsageError;
  auto config = monodc::stages::configByName(cmd.config);
  if (!config)
    fail(llvm::toString(config.takeError()), kUsageError);
  // The caches' pages are given at launch: the kernels are the same for any
  // count, and the simulation allocates and indexes this many.
  if (cmd.cachePages) {
    if (*cmd.cachePages < 1 || *cmd.cachePages > monodc::runtime::kMaxKvCachePages)
      fail(fmt::format("--cache-pages must be in 1..{} (2^24 slots of {} tokens a page), got {}",
                       monodc::runtime::kMaxKvCachePages, monodc::runtime::kKvPageTokens,
                       *cmd.cachePages),
           kUsageError);
    config->kvCachePages = *cmd.cachePages;
  }
  const std::vector<std::string> launches = monodc::stages::launchNames();
  if (std::find(launches.begin(), launches.end(), cmd.launch) == launches.end())
    fail(fmt::format("unknown launch '{}' (known: {})", cmd.launch, fmt::join(launches, ", ")),
         kUsageError);
  if (cmd.schedules < 1)
    fail(fmt::format("--schedules must be at least 1, got {}", cmd.schedules),
         monodc::cli::kUsageError);
  if (cmd.lostRank != -1 && (cmd.lostRank < 0 || cmd.lostRank >= cmd.tp))
    fail(fmt::format("--lost-rank must be one of the ranks 0..{}, got {}", cmd.tp - 1,
                     cmd.lostRank),
         kUsageError);
  // Each thread holds a launch's writable memory: a bound keeps a typo from
  // starting thousands.
  if (auto problem = monodc::cli::jobsProblem(cmd.jobs))
    fail(*problem, monodc::cli::kUsageError);
  const std::string arch(monodc::runtime::kDefaultTarget);
  if (auto problem = monodc::cli::gridProblem(arch, cmd.grid))
    fail(*problem, monodc::cli::kUsageError);
  // Rows and TP against the config, before anything is built.
  monodc::stages::BuildParams params{arch, cmd.grid, 256, cmd.rows, cmd.tp, cmd.ratio};
  if (auto resolved = monodc::stages::resolveBuildParams(*config, params); !resolved)
    fail(llvm::toString(resolved.takeError()), kUsageError);
  // The dump directory and the trace file are checked before the run, not
  // after it.
  if (!cmd.dump.empty())
    if (auto problem = monodc::cli::checkWritableDirectory(cmd.dump))
      fail("--dump: " + *problem, monodc::cli::kUsageError);
  std::unique_ptr<llvm::raw_fd_ostream> traceFile;
  if (!cmd.trace.empty()) {
    std::error_code error;
    traceFile = std::make_unique<llvm::raw_fd_ostream>(cmd.trace, error);
    if (error)
      fail("--trace: cannot write " + cmd.trace + ": " + error.message(), monodc::cli::kUsageError);
  }
  std::vector<sim::TraceRun> traces;
  std::optional<uint64_t> limit;
  if (!cmd.memoryLimit.empty()) {
    limit = parseBytes(cmd.memoryLimit);
    if (!limit)
      fail("--memory-limit: cannot read '" + cmd.memoryLimit + "' (bytes, or a number with K, "
           "M or G)",
           monodc::cli::kUsageError);
  }
  mlir::MLIRContext context;
  monodc::DiagnosticText diagnostics(context);
  auto module = monodc::stages::buildLaunch(context, cmd.launch, *config, params);
  if (!module)
    fail(llvm::toString(module.takeError()));
  mono::FusionOptions fusion;
  fusion.unfused = cmd.unfused;
  if (mlir::failed(mono::runFusionPipeline(**module, fusion)))
    fail("the fusion passes refused " + cmd.launch + ": " + diagnostics.str());
  auto launch = *(*module)->getOps<mono::LaunchOp>().begin();
  if (!cmd.testDropWaits.empty())
    dropWaits(launch, cmd.testDropWaits);
  auto prepared = sim::PreparedLaunch::prepare(launch);
  if (mlir::failed(prepared))
    fail("the simulator refused " + cmd.launch + ": " + diagnostics.str());

  // Refuse before allocating (exit 2: nothing has run): a launch of the
  // full config can need more than the host has, and running out halfway
  // helps no one.
  uint64_t needed = estimateMemory(launch, cmd.jobs);
  std::optional<uint64_t> available = limit ? limit : availableMemory();
  if (available && needed > *available)
    fail(fmt::format("simulating {} ({}, rows {}, TP {}) needs about {} of memory; {} {} (try "
                     "--config tiny, fewer rows, or a larger --memory-limit)",
                     cmd.launch, config->name, cmd.rows, cmd.tp, gib(needed),
                     limit ? "--memory-limit allows" : "the host has", gib(*available)),
         kUsageError);

  // Inputs and weights, the same for every schedule; each rank its own.
  const int64_t ranks = launch.getRanks();
  std::mt19937 rng(cmd.seed);
  std::vector<std::vector<std::pair<std::string, std::vector<float>>>> inputs(ranks);
  std::vector<std::string> outputs, scratch;
  for (auto region : launch.getBodyBlock().getOps<mono::RegionOp>()) {
    std::string name = region.getSymName().str();
    if (region.getKind() == mono::MemoryKind::Input || region.getKind() == mono::MemoryKind::Weight) {
      for (int64_t r = 0; r < ranks; ++r) {
        std::vector<float> values =
            randomValues(region.getElementType(), region.getRows() * region.getCols(), rng);
        // Index inputs (positions, cache slots) get distinct whole numbers
        // in their bound: distinct slots keep every step's writes apart.
        if (auto bound = region.getIndexBound())
          values = distinctIndices(values.size(), *bound, rng);
        inputs[r].push_back({name, std::move(values)});
      }
    } else if (region.getKind() == mono::MemoryKind::Output) {
      outputs.push_back(name);
    } else if (region.getKind() == mono::MemoryKind::Scratch) {
      scratch.push_back(name);
    }
  }

  std::cout << fmt::format("monodc simulate: {}{} ({}, rows {}, TP {}, grid {}), seed {}\n",
                           cmd.launch, cmd.unfused ? " unfused" : "", config->name, cmd.rows,
                           cmd.tp, cmd.grid, cmd.seed);
  // Inputs and weights encoded once, in one memory a rank: every schedule
  // shares these read-only regions.
  std::vector<std::unique_ptr<sim::LaunchMemory>> inputMemories;
  std::vector<const sim::LaunchMemory *> inputPointers;
  for (int64_t r = 0; r < ranks; ++r) {
    inputMemories.push_back(std::make_unique<sim::LaunchMemory>(launch));
    for (auto &[name, values] : inputs[r])
      if (llvm::Error e = inputMemories.back()->setValues(name, values))
        fail(llvm::toString(std::move(e)));
    inputPointers.push_back(inputMemories.back().get());
  }
  const auto start = std::chrono::steady_clock::now();
  sim::SweepResult sweep = sim::sweepSchedules(
      **prepared, inputPointers,
      {cmd.schedules, cmd.seed, static_cast<unsigned>(cmd.jobs), traceFile != nullptr,
       cmd.lostRank});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t ctas = ranks * cmd.grid;
  if (sweep.failedSchedule >= 0) {
    std::string diagnostics_ = diagnostics.str();
    fail(sweep.failure + (diagnostics_.empty() ? "" : ": " + diagnostics_));
  }
  std::cout << fmt::format(
      "{} (round-robin, reverse, starve-one, random in turn; {}): {} in {:.1f} s "
      "({:.1f} schedules/s)\n",
      monodc::cli::plural(sweep.schedules, "schedule"), monodc::cli::plural(cmd.jobs, "thread"),
      monodc::cli::plural(sweep.outcomes, "distinct outcome"), seconds,
      sweep.schedules / std::max(seconds, 1e-9));
  if (sweep.outcomes > 1)
    fail(fmt::format("schedule {} ({}) gave other outputs than schedule 0 (round-robin), "
                     "first in '{}' of rank {}: a race ({} distinct outcomes in {})",
                     sweep.firstDiffering,
                     describeSchedule(sim::sweepSchedule(sweep.firstDiffering, cmd.seed, ctas), ctas),
                     sweep.differingRegion, sweep.differingRank, sweep.outcomes,
                     monodc::cli::plural(sweep.schedules, "schedule")));
  std::cout << "outputs bit-identical under every schedule\n";
  std::vector<std::unique_ptr<sim::LaunchMemory>> &kept = sweep.first;
  if (traceFile)
    for (int64_t s = 0; s < sweep.schedules; ++s)
      traces.push_back({fmt::format("schedule {} ({})", s,
                                    describeSchedule(sim::sweepSchedule(s, cmd.seed, ctas), ctas)),
                        ranks, std::move(sweep.traces[s])});
  if (traceFile) {
    sim::writeChromeTrace(*traceFile, traces);
    traceFile->close();
    if (traceFile->has_error())
      fail("--trace: cannot write " + cmd.trace + ": " + traceFile->error().message());
    std::cout << fmt::format("trace of {} written to {} (Chrome/Perfetto JSON; one turn of the "
                             "scheduler shows as 1 us)\n",
                             monodc::cli::plural(cmd.schedules, "schedule"), cmd.trace);
  }
  for (const std::string &name : outputs) {
    std::vector<float> v = kept[0]->values(name);
    double maxAbs = 0, sumAbs = 0;
    int64_t nonFinite = 0;
    for (float x : v) {
      if (!std::isfinite(x)) {
        ++nonFinite;
        continue;
      }
      maxAbs = std::max(maxAbs, double(std::fabs(x)));
      sumAbs += std::fabs(x);
    }
    std::cout << fmt::format("  {:<16} {:>8} values  max |x| {:<10.4g} mean |x| {:<10.4g} "
                             "non-finite {}\n",
                             name, v.size(), maxAbs, v.empty() ? 0.0 : sumAbs / v.size(), nonFinite);
  }
  if (ranks > 1) {
    // Each rank gets its own random inputs and weights: reduced outputs must
    // agree bit for bit, rank-local ones need not.
    std::vector<std::string> same, local;
    for (const std::string &name : outputs) {
      bool equal = true;
      for (int64_t r = 1; r < ranks; ++r)
        equal &= kept[r]->bytes(name) == kept[0]->bytes(name);
      (equal ? same : local).push_back(name);
    }
    std::cout << fmt::format("{} ranks: bit-identical across ranks: {}; rank-local: {}\n", ranks,
                             same.empty() ? "none" : fmt::format("{}", fmt::join(same, ", ")),
                             local.empty() ? "none" : fmt::format("{}", fmt::join(local, ", ")));
  }

  if (!cmd.dump.empty()) {
    std::filesystem::path dir(cmd.dump);

    std::string stem = fmt::format(
        "{}.{}.r{}.tp{}{}{}", cmd.launch, config->name, cmd.rows, cmd.tp,
        monodc::stages::ratioFileTag(cmd.launch, cmd.ratio),
        cmd.unfused ? ".unfused" : "");
    // One rank: <stem>.in.<region>.bin; several: <stem>.in.r<k>.<region>.bin.
    auto rankTag = [&](int64_t r) { return ranks > 1 ? fmt::format("r{}.", r) : std::string(); };
    for (int64_t r = 0; r < ranks; ++r) {
      for (auto &[name, values] : inputs[r])
        writeBytes(dir / (stem + ".in." + rankTag(r) + name + ".bin"), kept[r]->bytes(name));
      for (const std::string &name : outputs)
        writeBytes(dir / (stem + ".out." + rankTag(r) + name + ".bin"), kept[r]->bytes(name));
      // What the stages handed each other too (every scratch word is written
      // once a step), so that a GPU run is compared stage by stage.
      if (cmd.dumpScratch)
        for (const std::string &name : scratch)
          writeBytes(dir / (stem + ".scratch." + rankTag(r) + name + ".bin"), kept[r]->bytes(name));
    }
    // The same launch for the validation target: a fresh build, since the
    // grid differs; the ranks of a TP launch share one GPU, each with its
    // share of the SMs.
    mlir::MLIRContext gpuContext;
    const std::string gpuArch(monodc::runtime::kValidationTarget);
    monodc::stages::BuildParams gpuParams{gpuArch, monodc::stages::defaultGrid(gpuArch) / ranks,
                                          256, cmd.rows, cmd.tp, cmd.ratio};
    auto gpuModule = monodc::stages::buildLaunch(gpuContext, cmd.launch, *config, gpuParams);
    if (!gpuModule)
      fail(llvm::toString(gpuModule.takeError()));
    mono::FusionOptions gpuFusion;
    gpuFusion.unfused = cmd.unfused;
    auto hip = monodc::emit::emitHip(**gpuModule, gpuFusion);
    if (mlir::failed(hip))
      fail("emitting the " + gpuArch + " source failed");
    if (auto problem = monodc::cli::writeFile((dir / (stem + ".hip")).string(), *hip))
      fail(*problem);
    if (auto problem = monodc::cli::writeFile(
            (dir / (stem + ".manifest")).string(),
            monodc::emit::kernelManifest(*(*gpuModule)->getOps<mono::LaunchOp>().begin())))
      fail(*problem);
    std::cout << "dumped " << stem << " to " << cmd.dump << "\n";
  }
  return 0;
}

} // namespace

void monodc::cli::addSimulateCommand(CLI::App &app) {
  auto cmd = std::make_shared<SimulateCommand>();
  CLI::App *sub = app.add_subcommand(
      "simulate", "run a launch on the CPU simulator with random inputs under several schedules");
  sub->add_option("--config", cmd->config, "model config: dsv41, tiny or moe16 (DSV41 with 16 experts, for validation)")->capture_default_str();
  sub->add_option("--launch", cmd->launch, "launch to run")->capture_default_str();
  sub->add_option("--rows", cmd->rows, "tokens in the step, 1..48")->capture_default_str();
  sub->add_option("--tp", cmd->tp, "tensor parallelism, 2 or 4")->capture_default_str();
  sub->add_option("--ratio", cmd->ratio,
                  "the layer's compress ratio, 0, 1 or 2 (k2 and attention_back)")
      ->capture_default_str();
  sub->add_option("--grid", cmd->grid, "simulated CTAs, 1..65536")->capture_default_str();
  sub->add_option("--seed", cmd->seed, "random inputs and schedules")->capture_default_str();
  sub->add_option("--schedules", cmd->schedules,
                  "schedules to compare: round-robin, reverse, starve-one, random in turn")
      ->capture_default_str();
  sub->add_option("-j,--jobs", cmd->jobs, "schedules run at once (threads)")->capture_default_str();
  // Hidden: shows that a race is caught (tests/lit/CLI/simulate-race.test).
  sub->add_option("--lost-rank", cmd->lostRank,
                  "a rank that never runs (a lost process): the others' bounded waits give up "
                  "past their budget, and the run reports their wait-fault records (exit 1)");
  sub->add_option("--test-drop-waits", cmd->testDropWaits,
                  "test only: erase the waits of this stage")
      ->group("");
  sub->add_option("--cache-pages", cmd->cachePages,
                  "the KV caches' pages, as a serving engine gives them at each launch "
                  "(default: the config's)");
  sub->add_option("--dump", cmd->dump,
                  "write inputs, outputs, the sm_90 source and its manifest to this directory");
  sub->add_option("--memory-limit", cmd->memoryLimit,
                  "refuse a run estimated to need more (e.g. 16G; default: the host's available "
                  "memory)");
  sub->add_option("--trace", cmd->trace,
                  "write every schedule's CTAs as a Chrome/Perfetto trace (JSON) to this file");
  sub->add_flag("--unfused", cmd->unfused,
                "run the unfused baseline: a kernel a stage in stream order, no mailboxes "
                "inside a rank (mono-unfuse)");
  sub->add_flag("--dump-scratch", cmd->dumpScratch,
                "with --dump: also the scratch regions, what the stages hand each other");
  sub->callback([cmd] { std::exit(runSimulate(*cmd)); });
}
