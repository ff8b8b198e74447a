//===- LayersCommand.cpp - monodc layers: the model's layers and launches -===//
//
// Which launches each decoder layer runs (monodc/runtime/LayerMap.h) and the
// distinct ones a deployment builds for every width and TP.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "monodc/runtime/LayerMap.h"
#include "monodc/stages/ModelConfig.h"

#include <fmt/format.h>

#include <iostream>
#include <map>

namespace {

using monodc::cli::fail;

int runLayers(const std::string &configName) {
  auto config = monodc::stages::configByName(configName);
  if (!config)
    fail(llvm::toString(config.takeError()), monodc::cli::kUsageError);
  auto layers = monodc::runtime::layerMap(config->name);
  if (!layers)
    fail(layers.message(), monodc::cli::kUsageError);
  const std::vector<monodc::runtime::LayerPlan> &map = *layers;
  std::cout << fmt::format("monodc layers: config {}, {} layers\n", config->name, map.size());
  std::cout << fmt::format("{:>5}  {:<8}  {}\n", "layer", "launches", "compress ratio");
  // (launches, ratio) -> layers; the FFN launch has no attention, so no ratio.
  std::map<std::pair<std::string, int64_t>, std::vector<int64_t>> distinct;
  for (const monodc::runtime::LayerPlan &plan : map) {
    std::string launches;
    for (const std::string &l : plan.launches())
      launches += (launches.empty() ? "" : "+") + l;
    std::cout << fmt::format("{:>5}  {:<8}  {}\n", plan.layer, launches, plan.ratio);
    distinct[{launches, plan.fusedWhole ? plan.ratio : -1}].push_back(plan.layer);
  }
  std::cout << "distinct (what `monodc matrix` builds for each width and TP):\n";
  for (auto it = distinct.rbegin(); it != distinct.rend(); ++it) {
    const auto &[kind, layers] = *it;
    const std::string ratio =
        kind.second < 0 ? "" : fmt::format(", compress ratio {}", kind.second);
    std::cout << fmt::format("  {}{}: {} layers ({})\n", kind.first, ratio, layers.size(),
                             monodc::runtime::layerRanges(layers));
  }
  std::cout << "K2 is built for each compress ratio (it finds the compressed keys of its "
               "ratio); K1 and the FFN launch are the same at every ratio.\n";
  return 0;
}

} // namespace

void monodc::cli::addLayersCommand(CLI::App &app) {
  auto config = std::make_shared<std::string>("dsv41");
  CLI::App *sub =
      app.add_subcommand("layers", "which launches each of the model's layers runs");
  sub->add_option("--config", *config, "model config: dsv41, tiny or moe16")
      ->capture_default_str();
  sub->callback([config] { std::exit(runLayers(*config)); });
}
