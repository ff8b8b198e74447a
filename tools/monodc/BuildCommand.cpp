//===- BuildCommand.cpp - monodc build ------------------------------------===//
//
// DSL launch -> mono IR -> HIP -> AMDGPU code object, with a resource report.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "monodc/Support/DiagnosticText.h"
#include "monodc/Emit/HipEmitter.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/backends/ClangBackend.h"
#include "monodc/runtime/CodeObject.h"
#include "monodc/stages/Launches.h"

#include "mlir/IR/MLIRContext.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

namespace {

using monodc::cli::fail;

struct BuildCommand {
  std::string arch = std::string(monodc::runtime::kDefaultTarget);
  std::string config = "dsv41";
  std::string launch = "all";
  std::string out = "out";
  std::string emit = "obj";
  int64_t rows = 6;
  int64_t tp = 2;
  int64_t grid = 0;
  bool unfused = false;
};

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

void writeFile(const std::filesystem::path &path, const std::string &bytes) {
  std::ofstream file(path, std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file)
    fail("cannot write " + path.string());
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
                      "[{}..{}) per-CTA marks, [{}..{}) task counters (slot e mod 256)\n",
                      mono::epochWords(grid), mono::epoch::kEpochWord, mono::epoch::kArrivals,
                      mono::epoch::kMarks, mono::epoch::kMarks + grid,
                      mono::epoch::countersWord(grid), mono::epochWords(grid));
  return text;
}

int runBuild(const BuildCommand &cmd) {
  auto config = monodc::stages::configByName(cmd.config);
  if (!config)
    fail(llvm::toString(config.takeError()));
  monodc::stages::BuildParams params{cmd.arch, cmd.grid, 256, cmd.rows, cmd.tp};
  auto resolved = monodc::stages::resolveBuildParams(*config, params);
  if (!resolved)
    fail(llvm::toString(resolved.takeError()));
  if (cmd.emit == "obj" || cmd.emit == "asm")
    if (!monodc::backends::isClangBackendArch(cmd.arch))
      fail("--emit " + cmd.emit + " for arch '" + cmd.arch +
           "' needs the nvrtc backend, which this build lacks; use --emit hip");

  std::vector<std::string> launches = monodc::stages::launchNames();
  if (cmd.launch != "all") {
    if (std::find(launches.begin(), launches.end(), cmd.launch) == launches.end())
      fail("unknown launch '" + cmd.launch + "'");
    launches = {cmd.launch};
  }
  std::error_code ec;
  std::filesystem::create_directories(cmd.out, ec);
  if (ec)
    fail("cannot create output directory " + cmd.out + ": " + ec.message());

  std::string report = fmt::format("monodc build: config {}, arch {}, grid {}, rows {}, TP {}\n",
                                   config->name, resolved->arch, resolved->grid,
                                   resolved->rows, resolved->tp);
  report += reportHeader();
  bool scratchUsed = false;
  for (const std::string &name : launches) {
    mlir::MLIRContext context;
    monodc::DiagnosticText diagnostics(context);
    auto start = std::chrono::steady_clock::now();
    auto module = monodc::stages::buildLaunch(context, name, *config, *resolved);
    if (!module)
      fail(llvm::toString(module.takeError()));
    double dslMs = millisecondsSince(start);
    std::string stem = fmt::format("{}.{}.{}.r{}.tp{}", name, config->name, cmd.arch,
                                   resolved->rows, resolved->tp);
    std::filesystem::path base = std::filesystem::path(cmd.out) / stem;
    if (cmd.emit == "layout") {
      if (mlir::failed(monodc::mono::runFusionPipeline(**module)))
        fail("planning " + name + " failed: " + diagnostics.str());
      std::string text = describeLayout(*(*module)->getOps<monodc::mono::LaunchOp>().begin());
      writeFile(base.string() + ".layout.txt", text);
      report += text;
      continue;
    }
    if (cmd.emit == "mlir") {
      std::string text;
      llvm::raw_string_ostream os(text);
      (*module)->print(os);
      writeFile(base.string() + ".mlir", text);
      report += reportLine({name, dslMs, {}, {}, nullptr, 0, base.string() + ".mlir"});
      continue;
    }
    start = std::chrono::steady_clock::now();
    auto hip = monodc::emit::emitHip(**module);
    if (mlir::failed(hip))
      fail("emitting HIP for " + name + " failed: " + diagnostics.str());
    double emitMs = millisecondsSince(start);
    if (cmd.emit == "hip") {
      writeFile(base.string() + ".hip", *hip);
      auto launchOp = *(*module)->getOps<monodc::mono::LaunchOp>().begin();
      writeFile(base.string() + ".manifest", monodc::emit::kernelManifest(launchOp));
      if (cmd.unfused) {
        std::string unfused;
        llvm::raw_string_ostream os(unfused);
        if (mlir::failed(monodc::emit::printHip(launchOp, os, {/*unfused=*/true})))
          fail("emitting the unfused baseline of " + name + " failed: " + diagnostics.str());
        writeFile(base.string() + ".unfused.hip", unfused);
      }
      report += reportLine({name, dslMs, emitMs, {}, nullptr, 0, base.string() + ".hip"});
      continue;
    }
    monodc::backends::ClangCompileOptions options;
    options.arch = cmd.arch;
    options.sourceName = stem + ".hip";
    start = std::chrono::steady_clock::now();
    if (cmd.emit == "asm") {
      auto assembly = monodc::backends::compileHipToAssembly(*hip, options);
      if (!assembly)
        fail(llvm::toString(assembly.takeError()));
      writeFile(base.string() + ".s", *assembly);
      report += reportLine(
          {name, dslMs, emitMs, millisecondsSince(start), nullptr, 0, base.string() + ".s"});
      continue;
    }
    auto object = monodc::backends::compileHipToCodeObject(*hip, options);
    if (!object)
      fail(llvm::toString(object.takeError()));
    double buildMs = millisecondsSince(start);
    std::string bytes(object->begin(), object->end());
    auto info = monodc::runtime::readCodeObject(bytes);
    if (!info)
      fail("reading the code object of " + name + ": " + info.message());
    writeFile(base.string() + ".co", bytes);
    for (const auto &k : info->kernels) {
      scratchUsed |= k.scratchBytes != 0;
      report += reportLine(
          {name, dslMs, emitMs, buildMs, &k, info->codeBytes, base.string() + ".co"});
    }
  }
  std::cout << report;
  writeFile(std::filesystem::path(cmd.out) / "report.txt", report);
  if (scratchUsed)
    fail("a persistent launch uses scratch memory (spills); it is refused");
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
  sub->add_option("--grid", build->grid, "CTAs (default: the arch's compute units)");
  sub->add_flag("--unfused", build->unfused,
                "with --emit hip: also write the unfused baseline (one kernel per stage)");
  sub->callback([build] { std::exit(runBuild(*build)); });
}
