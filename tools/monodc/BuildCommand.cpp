//===- BuildCommand.cpp - monodc build ------------------------------------===//
//
// DSL launch -> mono IR -> HIP -> AMDGPU code object, with a resource report.
// Launches build side by side (-j); one that fails does not stop the others,
// and report.txt describes whatever was built.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "monodc/Support/DiagnosticText.h"
#include "monodc/Emit/EmitPipeline.h"
#include "monodc/Emit/HipEmitter.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/jit/ClangBackend.h"
#include "monodc/runtime/CodeObject.h"
#include "monodc/stages/Launches.h"
#include "monodc/stages/ModelConfig.h"

#include "mlir/IR/MLIRContext.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

namespace {

using monodc::cli::fail;

struct BuildCommand {
  std::string arch = std::string(monodc::runtime::kDefaultTarget);
  std::string config = "dsv41";
  std::string launch = "all";
  std::string out = "out";
  std::string emit = "obj";
  std::string options = "-O3";
  int64_t rows = 6;
  int64_t tp = 2;
  int64_t ratio = monodc::stages::kDefaultCliRatio;
  std::optional<int64_t> grid; ///< none: the arch's compute units
  int jobs = 1;
  bool unfused = false;
  /// --stage-timers: empty (none), spans or calls (emit::StageTimers).
  std::string stageTimers;
};

monodc::emit::StageTimers stageTimersOf(const BuildCommand &cmd) {
  using monodc::emit::StageTimers;
  return cmd.stageTimers.empty() ? StageTimers::Off
         : cmd.stageTimers == "calls" ? StageTimers::Calls
                                      : StageTimers::Spans;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The file name of a launch's outputs: launch, config, arch, rows and TP,
/// then every other key field that changes the code where it is not the
/// default: the compress ratio of a launch that reads compressed keys
/// (`.c<r>` when it is not 2), the grid (`.grid<N>` when it is not the
/// arch's compute units) and the optimization level (`.O<n>` when not -O3). Builds that differ in
/// any of them never write the same file.
std::string outputStem(const monodc::stages::ModelConfig &config,
                       const monodc::stages::BuildParams &resolved, const std::string &launch,
                       int optLevel) {
  std::string stem = fmt::format("{}.{}.{}.r{}.tp{}", launch, config.name, resolved.arch,
                                 resolved.rows, resolved.tp);
  stem += monodc::stages::ratioFileTag(launch, resolved.ratio);
  if (resolved.grid != monodc::stages::defaultGrid(resolved.arch))
    stem += fmt::format(".grid{}", resolved.grid);
  if (optLevel != 3)
    stem += fmt::format(".O{}", optLevel);
  return stem;
}

/// One row of the build report: the launch, its times (ms) and its code
/// object's resources; a column the requested output did not reach is "-".
struct ReportRow {
  std::string launch;
  double dslMs = 0;
  std::optional<double> emitMs, buildMs;
  const monodc::runtime::KernelInfo *kernel = nullptr;
  int64_t codeBytes = 0; ///< with kernel only
  std::string file;
};

std::string reportLine(const std::array<std::string, 11> &columns) {
  return fmt::format("{:<18} {:>8} {:>9} {:>10} {:>6} {:>6} {:>6} {:>8} {:>8} {:>8}  {}\n",
                     columns[0], columns[1], columns[2], columns[3], columns[4], columns[5],
                     columns[6], columns[7], columns[8], columns[9], columns[10]);
}

std::string reportHeader() {
  return reportLine({"launch", "dsl ms", "emit ms", "build ms", "VGPR", "AGPR", "SGPR", "LDS B",
                     "scratch", "code B", "file"});
}

std::string reportLine(const ReportRow &row) {
  using monodc::runtime::KernelInfo;
  auto ms = [](std::optional<double> v) { return v ? fmt::format("{:.1f}", *v) : "-"; };
  auto resource = [&](int64_t KernelInfo::*field) {
    return row.kernel ? std::to_string(row.kernel->*field) : "-";
  };
  return reportLine({row.launch, ms(row.dslMs), ms(row.emitMs), ms(row.buildMs),
                     resource(&KernelInfo::vgprs), resource(&KernelInfo::agprs),
                     resource(&KernelInfo::sgprs), resource(&KernelInfo::ldsBytes),
                     resource(&KernelInfo::scratchBytes),
                     row.kernel ? std::to_string(row.codeBytes) : "-", row.file});
}

/// The memory plan of a synchronized launch: scratch regions and flags with
/// their offsets, and the epoch buffer's words.
std::string describeLayout(monodc::mono::LaunchOp launch) {
  namespace mono = monodc::mono;
  auto scratch = launch->getAttrOfType<mlir::IntegerAttr>("mono.scratch_bytes");
  std::string text = fmt::format("layout of {}: scratch buffer {} bytes\n",
                                 launch.getSymName().str(), scratch ? scratch.getInt() : 0);
  text += fmt::format("  {:<24} {:<8} {:>10} {:>10}\n", "region", "kind", "offset", "bytes");
  for (auto region : launch.getBodyBlock().getOps<mono::RegionOp>()) {
    auto offset = region->getAttrOfType<mlir::IntegerAttr>("mono.offset");
    text += fmt::format("  {:<24} {:<8} {:>10} {:>10}\n", region.getSymName().str(),
                        mono::stringifyMemoryKind(region.getKind()).str(),
                        offset ? std::to_string(offset.getInt()) : std::string("argument"),
                        mono::regionBytes(region));
  }
  int64_t grid = launch.getGrid();
  text += fmt::format("  epoch buffer ({} words of 4 B): [{}] epoch e, [{}] arrivals, "
                      "[{}..{}) per-CTA marks, [{}..{}) task counters (slot e mod 256), "
                      "[{}..{}) wait-fault record\n",
                      mono::epochWords(grid), mono::epoch::kEpochWord, mono::epoch::kArrivals,
                      mono::epoch::kMarks, mono::epoch::kMarks + grid,
                      mono::epoch::countersWord(grid), mono::epoch::faultWord(grid),
                      mono::epoch::faultWord(grid), mono::epochWords(grid));
  return text;
}

/// What one launch came to: its report lines (or layout text) and, when it
/// failed, why.
struct LaunchResult {
  std::vector<ReportRow> rows;
  std::vector<monodc::runtime::KernelInfo> kernels; ///< rows point here
  std::string text;  ///< --emit layout
  std::string error; ///< empty: the launch was built
  double wallMs = 0;
};

/// Builds one launch to what --emit asks for. Errors end up in the result,
/// never in an exit, so that the other launches and the report survive.
void buildOne(const BuildCommand &cmd, const monodc::stages::ModelConfig &config,
              const monodc::stages::BuildParams &resolved, const std::string &name,
              int optLevel, LaunchResult &result) {
  auto launchStart = std::chrono::steady_clock::now();
  auto finish = [&](std::string error = {}) {
    result.error = std::move(error);
    result.wallMs = millisecondsSince(launchStart);
  };
  auto write = [&](const std::string &path, const std::string &bytes) {
    if (auto problem = monodc::cli::writeFile(path, bytes)) {
      finish(*problem);
      return false;
    }
    return true;
  };
  mlir::MLIRContext context;
  monodc::DiagnosticText diagnostics(context);
  auto start = std::chrono::steady_clock::now();
  auto module = monodc::stages::buildLaunch(context, name, config, resolved);
  if (!module)
    return finish(llvm::toString(module.takeError()));
  double dslMs = millisecondsSince(start);
  std::string base = (std::filesystem::path(cmd.out) / outputStem(config, resolved, name,
                                                                   optLevel))
                         .string();
  if (cmd.emit == "layout") {
    if (mlir::failed(monodc::mono::runFusionPipeline(**module)))
      return finish("planning " + name + " failed: " + diagnostics.str());
    result.text = describeLayout(*(*module)->getOps<monodc::mono::LaunchOp>().begin());
    if (write(base + ".layout.txt", result.text))
      finish();
    return;
  }
  if (cmd.emit == "mlir") {
    std::string text;
    llvm::raw_string_ostream os(text);
    (*module)->print(os);
    result.rows.push_back({name, dslMs, {}, {}, nullptr, 0, base + ".mlir"});
    if (write(base + ".mlir", text))
      finish();
    return;
  }
  // A timed build's sources and code objects are named apart (.prof), so
  // that none is taken for the product's.
  monodc::emit::HipPrintOptions printOptions;
  printOptions.stageTimers = stageTimersOf(cmd);
  const std::string timed = cmd.stageTimers.empty() ? "" : ".prof";
  start = std::chrono::steady_clock::now();
  auto hip = monodc::emit::emitHip(**module, {}, printOptions);
  if (mlir::failed(hip))
    return finish("emitting HIP for " + name + " failed: " + diagnostics.str());
  double emitMs = millisecondsSince(start);
  if (cmd.emit == "hip") {
    if (!write(base + timed + ".hip", *hip))
      return;
    auto launchOp = *(*module)->getOps<monodc::mono::LaunchOp>().begin();
    if (!write(base + ".manifest", monodc::emit::kernelManifest(launchOp)))
      return;
    // What each timed stage reads, for the bench's achieved bandwidth.
    if (!timed.empty() && !write(base + ".prof.reads", monodc::emit::stageReads(launchOp)))
      return;
    if (cmd.unfused) {
      std::string unfused;
      llvm::raw_string_ostream os(unfused);
      if (mlir::failed(monodc::emit::printUnfusedHip(launchOp, os, printOptions)))
        return finish("emitting the unfused baseline of " + name +
                      " failed: " + diagnostics.str());
      if (!write(base + ".unfused" + timed + ".hip", unfused))
        return;
    }
    result.rows.push_back({name, dslMs, emitMs, {}, nullptr, 0, base + timed + ".hip"});
    return finish();
  }
  monodc::backends::ClangCompileOptions options;
  options.arch = resolved.arch;
  options.sourceName = std::filesystem::path(base).filename().string() + timed + ".hip";
  options.optLevel = optLevel;
  start = std::chrono::steady_clock::now();
  if (cmd.emit == "asm") {
    auto assembly = monodc::backends::compileHipToAssembly(*hip, options);
    if (!assembly)
      return finish(llvm::toString(assembly.takeError()));
    result.rows.push_back(
        {name, dslMs, emitMs, millisecondsSince(start), nullptr, 0, base + timed + ".s"});
    if (write(base + timed + ".s", *assembly))
      finish();
    return;
  }
  auto object = monodc::backends::compileHipToCodeObject(*hip, options);
  if (!object)
    return finish(llvm::toString(object.takeError()));
  double buildMs = millisecondsSince(start);
  std::string bytes(object->begin(), object->end());
  auto info = monodc::runtime::readCodeObject(bytes);
  if (!info)
    return finish("reading the code object of " + name + ": " + info.message());
  result.kernels = info->kernels;
  for (const auto &k : result.kernels)
    result.rows.push_back({name, dslMs, emitMs, buildMs, &k, info->codeBytes, base + timed + ".co"});
  // The rule matrix and the JIT library apply: a refused kernel is reported
  // with its resources but not written, so no one loads it by mistake.
  for (const auto &k : result.kernels)
    if (auto problem = monodc::cli::persistentProblem("", k)) {
      for (ReportRow &row : result.rows)
        row.file = "(refused, not written)";
      return finish(*problem);
    }
  if (write(base + timed + ".co", bytes))
    finish();
}

int runBuild(const BuildCommand &cmd) {
  using monodc::cli::kUsageError;
  using monodc::cli::plural;
  auto config = monodc::stages::configByName(cmd.config);
  if (!config)
    fail(llvm::toString(config.takeError()), kUsageError);
  if (cmd.grid)
    if (auto problem = monodc::cli::gridProblem(cmd.arch, *cmd.grid))
      fail(*problem, kUsageError);
  monodc::stages::BuildParams params{cmd.arch, cmd.grid.value_or(0), 256, cmd.rows, cmd.tp,
                                     cmd.ratio};
  auto resolved = monodc::stages::resolveBuildParams(*config, params);
  if (!resolved)
    fail(llvm::toString(resolved.takeError()), kUsageError);
  if (cmd.emit == "obj" || cmd.emit == "asm")
    if (!monodc::backends::isClangBackendArch(cmd.arch))
      fail("--emit " + cmd.emit + " for arch '" + cmd.arch +
               "' needs the nvrtc backend, which this build lacks; use --emit hip",
           kUsageError);
  std::string optionsProblem;
  std::optional<int> optLevel = monodc::cli::clangOptLevel(cmd.options, optionsProblem);
  if (!optLevel)
    fail(optionsProblem, kUsageError);
  if (auto problem = monodc::cli::jobsProblem(cmd.jobs))
    fail(*problem, kUsageError);
  if (!cmd.stageTimers.empty() && (cmd.emit == "mlir" || cmd.emit == "layout"))
    fail("--stage-timers needs --emit hip, asm or obj", kUsageError);

  std::vector<std::string> launches = monodc::stages::launchNames();
  if (cmd.launch != "all") {
    if (std::find(launches.begin(), launches.end(), cmd.launch) == launches.end())
      fail(fmt::format("unknown launch '{}' (known: {}, or all)", cmd.launch,
                       fmt::join(launches, ", ")),
           kUsageError);
    launches = {cmd.launch};
  }
  if (auto problem = monodc::cli::checkWritableDirectory(cmd.out))
    fail(*problem, kUsageError);

  std::string header = fmt::format("monodc build: config {}, arch {}, grid {}, rows {}, TP {}\n",
                                   config->name, resolved->arch, resolved->grid,
                                   resolved->rows, resolved->tp);
  if (cmd.emit != "layout")
    header += reportHeader();
  std::cout << header;
  std::cout.flush();

  // Launches build side by side with -j; each prints its lines as it ends.
  std::vector<LaunchResult> results(launches.size());
  std::atomic<size_t> next{0};
  std::mutex outputMutex;
  auto wallStart = std::chrono::steady_clock::now();
  auto work = [&] {
    for (size_t i; (i = next++) < launches.size();) {
      LaunchResult &result = results[i];
      try {
        buildOne(cmd, *config, *resolved, launches[i], *optLevel, result);
      } catch (const std::exception &e) {
        result.error = launches[i] + ": unexpected exception: " + e.what();
      }
      std::lock_guard<std::mutex> lock(outputMutex);
      for (const ReportRow &row : result.rows)
        std::cout << reportLine(row);
      std::cout << result.text;
      if (!result.error.empty())
        std::cout << fmt::format("FAILED {}: {}\n", launches[i], result.error);
      std::cout.flush();
    }
  };
  std::vector<std::thread> workers;
  for (int j = 1; j < std::min<int>(cmd.jobs, launches.size()); ++j)
    workers.emplace_back(work);
  work();
  for (std::thread &worker : workers)
    worker.join();

  // The report lists the launches in their order, failures included, and
  // is written whatever failed: what was built stays described.
  std::string report = header;
  int failed = 0;
  for (size_t i = 0; i < launches.size(); ++i) {
    for (const ReportRow &row : results[i].rows)
      report += reportLine(row);
    report += results[i].text;
    if (!results[i].error.empty()) {
      report += fmt::format("FAILED {}: {}\n", launches[i], results[i].error);
      ++failed;
    }
  }
  std::string summary = fmt::format(
      "{}: {} built, {} failed; wall {:.1f} s with {}\n", plural(launches.size(), "launch", "launches"),
      launches.size() - failed, failed,
      millisecondsSince(wallStart) / 1000.0, plural(cmd.jobs, "job"));
  report += summary;
  std::cout << summary;
  std::string reportPath = (std::filesystem::path(cmd.out) / "report.txt").string();
  if (auto problem = monodc::cli::writeFile(reportPath, report))
    fail(*problem);
  if (failed)
    fail(fmt::format("{} of {} failed (see {})", plural(failed, "launch", "launches"), launches.size(),
                     reportPath));
  return 0;
}

} // namespace

void monodc::cli::addBuildCommand(CLI::App &app) {
  auto build = std::make_shared<BuildCommand>();
  CLI::App *sub = app.add_subcommand("build", "build the launches of a layer");
  sub->add_option("--arch", build->arch,
                  "target: " + monodc::runtime::targetNames() + " (NVIDIA: hip only)")
      ->capture_default_str();
  sub->add_option("--config", build->config, "model config: dsv41, tiny or moe16 (DSV41 with 16 experts, for validation)")->capture_default_str();
  sub->add_option("--launch", build->launch, "launch to build, or all")->capture_default_str();
  sub->add_option("--out", build->out, "output directory")->capture_default_str();
  sub->add_option("--emit", build->emit, "what to write")
      ->check(CLI::IsMember({"mlir", "layout", "hip", "asm", "obj"}))
      ->capture_default_str();
  sub->add_option("--rows", build->rows, "tokens in the step, 1..48")->capture_default_str();
  sub->add_option("--tp", build->tp, "tensor parallelism, 2 or 4")->capture_default_str();
  sub->add_option("--ratio", build->ratio,
                  "the layer's compress ratio, 0, 1 or 2 (k2 and attention_back)")
      ->capture_default_str();
  auto grid = std::make_shared<int64_t>(0);
  CLI::Option *gridOption =
      sub->add_option("--grid", *grid, "CTAs, 1..65536 (default: the arch's compute units)");
  sub->add_option("--options", build->options,
                  "clang backend options, -O0..-O3 (write --options=-O0)")
      ->capture_default_str();
  // The last -j wins, so that scripts/run-main.sh can pass its default
  // ahead of the user's flags.
  sub->add_option("-j,--jobs", build->jobs, "launches built at once")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->capture_default_str();
  sub->add_flag("--unfused", build->unfused,
                "with --emit hip: also write the unfused baseline (one kernel per stage)");
  sub->add_flag("--stage-timers{spans}", build->stageTimers,
                "a diagnostic build with per-CTA stage timers (files named .prof): spans, or "
                "--stage-timers=calls to also time polls, GEMVs, publishes and library calls")
      ->check(CLI::IsMember({"spans", "calls"}));
  sub->callback([build, grid, gridOption] {
    if (gridOption->count())
      build->grid = *grid;
    std::exit(runBuild(*build));
  });
}
