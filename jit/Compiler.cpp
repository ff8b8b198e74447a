//===- Compiler.cpp - full JIT: build keys into code objects --------------===//
#include "monodc/jit/Compiler.h"

#include "monodc/Emit/EmitPipeline.h"
#include "monodc/Emit/HipEmitter.h"
#include "monodc/Support/DiagnosticText.h"
#include "monodc/runtime/BuildId.h"
#include "monodc/runtime/CodeObject.h"
#include "monodc/runtime/LayerMap.h"
#include "monodc/runtime/Sha256.h"
#include "monodc/stages/Launches.h"

#include "mlir/IR/MLIRContext.h"

#include <cstdio>

using namespace monodc;
using namespace monodc::runtime;

namespace {

Error fromLlvm(llvm::Error error) { return makeError(llvm::toString(std::move(error))); }

/// A digest of the config's values. The configs are defined in stages/, whose
/// sources the build id covers too; the digest tells configs of one build apart.
std::string configDigest(const stages::ModelConfig &c) {
  char eps[64];
  std::snprintf(eps, sizeof(eps), "%a", static_cast<double>(c.normEps));
  std::string text = c.name + " hidden=" + std::to_string(c.hidden) +
                     " heads=" + std::to_string(c.heads) + " head=" + std::to_string(c.headDim) +
                     " rope=" + std::to_string(c.ropeDim) + " qrank=" + std::to_string(c.qRank) +
                     " kv=" + std::to_string(c.kvDim) + " eps=" + eps;
  return Sha256::hex(Sha256::digest(text)).substr(0, 16);
}

Result<stages::ModelConfig> configOf(const BuildKey &key) {
  auto config = stages::configByName(key.model);
  if (!config)
    return fromLlvm(config.takeError());
  if (configDigest(*config) != key.configDigest)
    return makeError("key " + key.text() + " names config digest " + key.configDigest +
                     ", this compiler's " + key.model + " config has " + configDigest(*config));
  return *config;
}

stages::BuildParams paramsOf(const BuildKey &key) {
  return stages::BuildParams{key.arch, key.grid, key.block, key.rows, key.tp, key.ratio};
}

} // namespace

Result<std::shared_ptr<CompileBackend>> Compiler::backend(const std::string &name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = backends_.find(name); it != backends_.end())
    return it->second;
  Result<std::shared_ptr<CompileBackend>> loaded = makeError("");
  if (name == "clang")
    loaded = makeClangBackend();
  else if (name == "hiprtc")
    loaded = loadHiprtcBackend();
  else if (name == "nvrtc")
    loaded = loadNvrtcBackend();
  else
    return makeError("unknown backend '" + name + "' (known: clang, hiprtc, nvrtc)");
  if (!loaded)
    return loaded.error();
  backends_[name] = *loaded;
  return *loaded;
}

Result<BuildKey> Compiler::resolve(const KernelRequest &request) {
  auto config = stages::configByName(request.model);
  if (!config)
    return fromLlvm(config.takeError());
  auto params = stages::resolveBuildParams(
      *config, {request.arch, request.grid, request.block, request.rows, request.tp});
  if (!params)
    return fromLlvm(params.takeError());
  if (request.ratio < 0 || request.ratio > 2)
    return makeError("compress ratio must be 0, 1 or 2, got " + std::to_string(request.ratio));
  // A launch that reads no compressed key is the same code at every ratio:
  // one key.
  const int64_t ratio = runtime::readsCompressedKeys(request.launch) ? request.ratio : 0;
  Result<std::shared_ptr<CompileBackend>> backend = this->backend(request.backend);
  if (!backend)
    return makeError("backend " + request.backend + " for arch " + request.arch + ": " +
                     backend.message());
  if (Status supported = (*backend)->checkArch(request.arch); !supported)
    return supported.error();
  BuildKey key;
  key.model = config->name;
  key.configDigest = configDigest(*config);
  key.launch = request.launch;
  key.tp = params->tp;
  key.rows = params->rows;
  key.ratio = ratio;
  key.grid = params->grid;
  key.block = params->block;
  key.arch = params->arch;
  key.features = request.features;
  key.backend = request.backend;
  key.backendVersion = (*backend)->version();
  key.options = request.options;
  key.compilerId = std::string(compilerBuildId());
  return key;
}

Result<Compiler::Emitted> Compiler::emit(const BuildKey &key) {
  if (key.compilerId != compilerBuildId())
    return makeError("key " + key.text() + " belongs to compiler build " + key.compilerId +
                     "; this is build " + std::string(compilerBuildId()));
  Result<stages::ModelConfig> config = configOf(key);
  if (!config)
    return config.error();
  mlir::MLIRContext context;
  monodc::DiagnosticText diagnostics(context);
  auto module = stages::buildLaunch(context, key.launch, *config, paramsOf(key));
  if (!module)
    return fromLlvm(module.takeError());
  auto hip = emit::emitHip(**module);
  if (mlir::failed(hip))
    return makeError("emitting HIP for " + key.launch + " failed: " + diagnostics.str());
  // The manifest is what the cache keeps beside the code object.
  std::string manifest = emit::kernelManifest(*(*module)->getOps<mono::LaunchOp>().begin());
  Result<LaunchInterface> interface = LaunchInterface::parse(manifest);
  if (!interface)
    return interface.error();
  std::string sourceName = key.launch + "." + key.model + "." + key.arch + ".r" +
                           std::to_string(key.rows) + ".tp" + std::to_string(key.tp) +
                           (runtime::readsCompressedKeys(key.launch)
                                ? ".c" + std::to_string(key.ratio)
                                : std::string()) +
                           ".hip";
  return Emitted{std::move(*hip), sourceName, std::move(manifest), std::move(*interface)};
}

Result<CacheEntry> Compiler::compile(const BuildKey &key, const Emitted &emitted) {
  Result<std::shared_ptr<CompileBackend>> backend = this->backend(key.backend);
  if (!backend)
    return makeError("backend " + key.backend + " for arch " + key.arch + ": " +
                     backend.message());
  if ((*backend)->version() != key.backendVersion)
    return makeError("key " + key.text() + " names backend version " + key.backendVersion +
                     "; this process has " + (*backend)->version());
  Result<std::vector<char>> code = (*backend)->compile(
      emitted.source, {key.arch, key.features, key.options, emitted.sourceName});
  if (!code)
    return code.error();
  if (key.arch.rfind("gfx", 0) == 0) {
    Result<CodeObjectInfo> info = readCodeObject(std::string_view(code->data(), code->size()));
    if (!info)
      return makeError("reading the code object of " + emitted.sourceName + ": " +
                       info.message());
    const KernelInfo *kernel = info->kernel(emitted.interface.kernelName);
    if (!kernel)
      return makeError("the code object of " + emitted.sourceName + " has no kernel " +
                       emitted.interface.kernelName);
    if (Status persistent = checkPersistentKernel(*kernel); !persistent)
      return persistent.error();
    if (Result<ArgumentLayout> layout = layoutArguments(emitted.interface, kernel); !layout)
      return layout.error();
  }
  return CacheEntry{key.text(), emitted.manifest, std::move(*code)};
}

Result<CacheEntry> Compiler::build(const BuildKey &key) {
  Result<Emitted> emitted = emit(key);
  if (!emitted)
    return emitted.error();
  return compile(key, *emitted);
}

std::unique_ptr<Session> monodc::openJitSession(SessionOptions options) {
  options.builder = std::make_shared<Compiler>();
  return std::make_unique<Session>(std::move(options));
}
