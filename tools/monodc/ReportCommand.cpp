//===- ReportCommand.cpp - monodc report: what each stage costs on MI355X -===//
//
// Per stage of K1, K2 and the FFN launch: the building blocks
// mono-lower-tiles chose, the matrix-core and vector instructions of the
// stage's own kernel (the unfused form, compiled for the AMD target), the
// weight and KV bytes a step streams, and the estimate of StageCost.h:
// HBM time at MI355X's bandwidth against issue time at the ISA's rates.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "monodc/Analysis/StageCost.h"
#include "monodc/Emit/EmitPipeline.h"
#include "monodc/Emit/HipEmitter.h"
#include "monodc/Support/DiagnosticText.h"
#include "monodc/jit/ClangBackend.h"
#include "monodc/stages/Launches.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <iostream>
#include <map>
#include <sstream>

namespace {

using monodc::cli::fail;

struct ReportCommand {
  std::string arch = std::string(monodc::runtime::kDefaultTarget);
  std::string config = "dsv41";
  std::string launches = "k1,k2,ffn";
  int64_t rows = 6;
  int64_t tp = 2;
  int64_t ratio = monodc::stages::kDefaultCliRatio;
};

/// Instructions of one kernel in an assembly listing.
struct KernelCounts {
  int64_t mfma = 0, valu = 0, total = 0;
};

/// Counts per kernel symbol: matrix-core (v_mfma*), other vector ALU (v_*
/// but the moves between VGPRs and AGPRs) and all instructions.
std::map<std::string, KernelCounts> countInstructions(const std::string &assembly) {
  std::map<std::string, KernelCounts> counts;
  KernelCounts *current = nullptr;
  std::istringstream in(assembly);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '\t' && line[0] != ' ' && line[0] != '.' &&
        line.find(':') != std::string::npos && line.rfind("mono_", 0) == 0) {
      current = &counts[line.substr(0, line.find(':'))];
      continue;
    }
    if (!current || line.size() < 2 || line[0] != '\t' || line[1] == '.' || line[1] == ';')
      continue;
    const std::string op = line.substr(1, line.find_first_of(" \t", 1) - 1);
    if (op.empty() || op.back() == ':')
      continue;
    ++current->total;
    if (op.rfind("v_mfma", 0) == 0)
      ++current->mfma;
    else if (op.rfind("v_", 0) == 0 && op.rfind("v_accvgpr", 0) != 0)
      ++current->valu;
    if (op == "s_endpgm")
      current = nullptr;
  }
  return counts;
}

int runReport(const ReportCommand &cmd) {
  using monodc::cli::kUsageError;
  auto config = monodc::stages::configByName(cmd.config);
  if (!config)
    fail(llvm::toString(config.takeError()), kUsageError);
  monodc::stages::BuildParams params{cmd.arch, 0, 256, cmd.rows, cmd.tp, cmd.ratio};
  auto resolved = monodc::stages::resolveBuildParams(*config, params);
  if (!resolved)
    fail(llvm::toString(resolved.takeError()), kUsageError);
  const bool compiled = monodc::backends::isClangBackendArch(cmd.arch);
  const std::vector<std::string> known = monodc::stages::launchNames();
  llvm::SmallVector<llvm::StringRef> wanted;
  llvm::StringRef(cmd.launches).split(wanted, ',', -1, false);
  if (wanted.empty())
    fail("--launch names no launches", kUsageError);
  for (llvm::StringRef name : wanted)
    if (!llvm::is_contained(known, name.str()))
      fail("unknown launch '" + name.str() + "' (known: " + llvm::join(known, ", ") + ")",
           kUsageError);

  const monodc::mono::IssueModel model;
  std::cout << fmt::format(
      "monodc report: config {}, arch {}, rows {}, TP {}; MI355X model: {} CUs at {:.1f} GHz, "
      "HBM {:.0f} TB/s, scaled MFMA {} cycles, vector ALU {} MACs a CU-cycle\n",
      config->name, cmd.arch, resolved->rows, resolved->tp, model.computeUnits,
      model.clockHz / 1e9, model.hbmBytesPerSecond / 1e12, model.scaledMfmaCycles,
      model.valuMacsPerCuCycle);
  for (llvm::StringRef name : wanted) {
    mlir::MLIRContext context;
    monodc::DiagnosticText diagnostics(context);
    auto module = monodc::stages::buildLaunch(context, name.str(), *config, *resolved);
    if (!module)
      fail(llvm::toString(module.takeError()));
    if (mlir::failed(monodc::emit::emitHip(**module)))
      fail("emitting " + name.str() + " failed: " + diagnostics.str());
    auto launch = *(*module)->getOps<monodc::mono::LaunchOp>().begin();
    std::map<std::string, KernelCounts> counts;
    if (compiled) {
      std::string unfused;
      llvm::raw_string_ostream os(unfused);
      if (mlir::failed(monodc::emit::printUnfusedHip(launch, os)))
        fail("emitting the unfused form of " + name.str() + " failed: " + diagnostics.str());
      monodc::backends::ClangCompileOptions options;
      options.arch = cmd.arch;
      options.sourceName = name.str() + ".unfused.hip";
      auto assembly = monodc::backends::compileHipToAssembly(unfused, options);
      if (!assembly)
        fail(llvm::toString(assembly.takeError()));
      counts = countInstructions(*assembly);
    }
    std::cout << fmt::format("\n{} ({}):\n", name.str(), monodc::emit::kernelName(launch));
    std::cout << fmt::format("  {:<22} {:>6} {:<24} {:>9} {:>8} {:>9} {:>8} {:>7} {:>7} "
                             "{:>8} {:>8}  {}\n",
                             "stage", "tasks", "lowering", "weight MB", "KV MB", "GMACs",
                             "MFMAs", "mfma", "valu", "HBM us", "issue us", "bound");
    const std::string kernel = monodc::emit::kernelName(launch);
    double hbm = 0, issue = 0;
    int index = 0;
    for (const monodc::mono::StageCost &c : monodc::mono::estimateStageCosts(launch, model)) {
      auto found = counts.find(kernel + "_s" + std::to_string(index++));
      const std::string mfma = found == counts.end() ? "-" : std::to_string(found->second.mfma);
      const std::string valu = found == counts.end() ? "-" : std::to_string(found->second.valu);
      const bool dots = c.macs > 0;
      std::cout << fmt::format(
          "  {:<22} {:>6} {:<24} {:>9.2f} {:>8.2f} {:>9.3f} {:>8.0f} {:>7} {:>7} {:>8.2f} "
          "{:>8.2f}  {}\n",
          c.stage, c.tasks, c.lowering, c.weightBytes / 1e6, c.kvBytes / 1e6, c.macs / 1e9,
          c.mfmaInstructions, mfma, valu, c.hbmMicros, c.issueMicros,
          !dots ? "-" : (c.memoryBound() ? "memory" : "issue"));
      hbm += c.hbmMicros;
      issue += c.issueMicros;
    }
    std::cout << fmt::format("  {:<22} {:>6} {:<24} {:>9} {:>8} {:>9} {:>8} {:>7} {:>7} "
                             "{:>8.2f} {:>8.2f}\n",
                             "(stages in sequence)", "", "", "", "", "", "", "", "", hbm, issue);
  }
  return 0;
}

} // namespace

void monodc::cli::addReportCommand(CLI::App &app) {
  auto cmd = std::make_shared<ReportCommand>();
  CLI::App *sub = app.add_subcommand(
      "report", "per stage on the AMD target: building blocks, instruction counts, bytes, and "
                "HBM against issue time on MI355X");
  sub->add_option("--arch", cmd->arch, "target: " + monodc::runtime::targetNames())
      ->capture_default_str();
  sub->add_option("--config", cmd->config, "model config: dsv41, tiny or moe16")
      ->capture_default_str();
  sub->add_option("--launch", cmd->launches, "launches, comma-separated")->capture_default_str();
  sub->add_option("--rows", cmd->rows, "tokens in the step")->capture_default_str();
  sub->add_option("--tp", cmd->tp, "tensor-parallel ranks")->capture_default_str();
  sub->add_option("--ratio", cmd->ratio, "the layer's compress ratio, 0, 1 or 2")
      ->capture_default_str();
  sub->callback([cmd] { std::exit(runReport(*cmd)); });
}
