//===- ModelConfig.cpp - model dimensions and build parameters ------------===//
#include "monodc/stages/ModelConfig.h"
#include "monodc/runtime/LayerMap.h"

using namespace monodc::stages;

ModelConfig monodc::stages::dsv41Config() {
  return ModelConfig{"dsv41", /*hidden=*/5120, /*heads=*/64, /*headDim=*/512,
                     /*ropeDim=*/64, /*qRank=*/1280, /*kvDim=*/512, /*normEps=*/1e-20f,
                     /*seamSlice=*/1024, /*ropePositions=*/4096, /*experts=*/384, /*topK=*/6,
                     /*sharedIntermediate=*/2304, /*routedScaling=*/1.5f,
                     /*swigluLimit=*/10.0f};
}

ModelConfig monodc::stages::tinyConfig() {
  ModelConfig c{"tiny", /*hidden=*/512, /*heads=*/8, /*headDim=*/128,
                /*ropeDim=*/64, /*qRank=*/256, /*kvDim=*/128, /*normEps=*/1e-20f,
                /*seamSlice=*/256, /*ropePositions=*/256, /*experts=*/32, /*topK=*/6,
                /*sharedIntermediate=*/256, /*routedScaling=*/1.5f,
                /*swigluLimit=*/10.0f};
  c.headsPerGroup = 2;
  c.groupRank = 128;
  c.compressedKeys = 128;
  c.routedIntermediate = 256;
  return c;
}

ModelConfig monodc::stages::moe16Config() {
  ModelConfig c = dsv41Config();
  c.name = "moe16";
  c.experts = 16;
  c.routedIntermediate = 1024;
  return c;
}

llvm::Expected<ModelConfig> monodc::stages::configByName(const std::string &name) {
  if (name == "dsv41")
    return dsv41Config();
  if (name == "tiny")
    return tinyConfig();
  if (name == "moe16")
    return moe16Config();
  return llvm::createStringError("unknown model config '%s' (known: dsv41, tiny, moe16)",
                                 name.c_str());
}

int64_t monodc::stages::defaultGrid(const std::string &arch) {
  const runtime::Target *target = runtime::findTarget(arch);
  return target ? target->defaultGrid : 0;
}

llvm::Expected<BuildParams> monodc::stages::resolveBuildParams(const ModelConfig &config,
                                                               BuildParams params) {
  if (defaultGrid(params.arch) == 0)
    return llvm::createStringError(
        "unsupported arch '%s' (supported: %s)", params.arch.c_str(),
        runtime::targetNames().c_str());
  if (params.grid == 0)
    params.grid = defaultGrid(params.arch);
  if (params.grid < 0)
    return llvm::createStringError("grid must be positive, got %lld",
                                   static_cast<long long>(params.grid));
  if (params.rows < 1 || params.rows > 48)
    return llvm::createStringError("rows must be in 1..48, got %lld",
                                   static_cast<long long>(params.rows));
  if (params.tp != 2 && params.tp != 4)
    return llvm::createStringError("unsupported TP %lld (supported: 2, 4)",
                                   static_cast<long long>(params.tp));
  if (config.heads % params.tp != 0)
    return llvm::createStringError("%s has %lld heads, not divisible by TP %lld",
                                   config.name.c_str(),
                                   static_cast<long long>(config.heads),
                                   static_cast<long long>(params.tp));
  if ((config.heads / params.tp) % config.headsPerGroup != 0)
    return llvm::createStringError(
        "%s has %lld heads a rank at TP %lld, not whole output groups of %lld heads",
        config.name.c_str(), static_cast<long long>(config.heads / params.tp),
        static_cast<long long>(params.tp), static_cast<long long>(config.headsPerGroup));
  if (params.ratio < 0 || params.ratio > 2)
    return llvm::createStringError("compress ratio must be 0, 1 or 2, got %lld",
                                   static_cast<long long>(params.ratio));
  if (params.block < 32 || params.block > 1024 || (params.block & (params.block - 1)) != 0)
    return llvm::createStringError("block must be a power of two in 32..1024, got %lld",
                                   static_cast<long long>(params.block));
  return params;
}

std::string monodc::stages::ratioFileTag(const std::string &launch, int64_t ratio) {
  return runtime::readsCompressedKeys(launch) && ratio != kDefaultCliRatio ? ".c" + std::to_string(ratio)
                                                                   : std::string();
}
