//===- Session.cpp - kernels by request or build key, cached --------------===//
#include "monodc/runtime/Session.h"

#include "monodc/runtime/BuildId.h"
#include "monodc/runtime/CacheDirectory.h"

#include <algorithm>

using namespace monodc;
using namespace monodc::runtime;

namespace {

CacheOptions cacheOptions(const SessionOptions &options) {
  CacheOptions cache;
  if (!options.memoryOnly)
    cache.directory =
        options.cacheDirectory.empty() ? defaultCacheDirectory() : options.cacheDirectory;
  cache.warn = options.warn;
  return cache;
}

} // namespace

Session::Session(SessionOptions options)
    : builder_(std::move(options.builder)), cache_(cacheOptions(options)) {}

Result<BuildKey> Session::findInCache(const KernelRequest &request) {
  std::string where = cache_.directory().empty() ? "the memory-only cache"
                                                 : "cache " + cache_.directory();
  Result<std::vector<CacheFile>> files = listCacheFiles(cache_.directory(), /*verify=*/false);
  if (!files)
    return files.error();
  std::vector<BuildKey> matches;
  std::vector<std::string> otherBuilds;
  // This build's entries of the request's model and launch: when none
  // matches, they show which field was asked differently (a TP, a width, a
  // backend the request left at its default).
  std::vector<std::string> sameLaunch;
  for (const CacheFile &file : *files) {
    Result<BuildKey> key = BuildKey::parse(file.keyText);
    if (file.problem.empty() && key && key->compilerId == compilerBuildId() &&
        key->model == request.model && key->launch == request.launch) {
      std::string fields;
      for (std::string_view name : {"tp", "rows", "ratio", "grid", "arch", "backend", "options"})
        fields.append(fields.empty() ? "" : " ").append(name).append("=").append(
            BuildKey::encodeValue(key->field(name)));
      sameLaunch.push_back(std::move(fields));
    }
    if (!file.problem.empty() || !key || !request.matches(*key))
      continue;
    if (key->compilerId == compilerBuildId())
      matches.push_back(std::move(*key));
    else
      otherBuilds.push_back(key->compilerId);
  }
  if (matches.size() == 1)
    return matches.front();
  if (matches.size() > 1) {
    std::string keys;
    for (const BuildKey &key : matches)
      keys += "\n  " + key.text();
    return makeError(std::to_string(matches.size()) + " entries of " + where + " match " +
                     request.text() + "; name more fields:" + keys);
  }
  std::string message = "no code object for " + request.text() + " (compiler " +
                        std::string(compilerBuildId()) + ") in " + where +
                        "; this library has no compiler: prebuild it with `monodc matrix "
                        "--cache DIR`";
  if (!otherBuilds.empty())
    message += " (the cache holds it for compiler " + otherBuilds.front() +
               ", another revision of the sources)";
  if (!sameLaunch.empty()) {
    constexpr size_t kListed = 8;
    std::sort(sameLaunch.begin(), sameLaunch.end());
    message += "; for model=" + request.model + " launch=" + request.launch + " it holds:";
    for (size_t i = 0; i < std::min(kListed, sameLaunch.size()); ++i)
      message += (i ? "; " : " ") + sameLaunch[i];
    if (sameLaunch.size() > kListed)
      message += " and " + std::to_string(sameLaunch.size() - kListed) + " more";
  }
  return makeError(message);
}

Result<BuildKey> Session::resolve(const KernelRequest &request) {
  return builder_ ? builder_->resolve(request) : findInCache(request);
}

Result<std::shared_ptr<const Kernel>> Session::kernel(const KernelRequest &request) {
  std::string requestText = request.text();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = keyOfRequest_.find(requestText); it != keyOfRequest_.end())
      if (auto kernel = kernels_.find(it->second); kernel != kernels_.end())
        return kernel->second;
  }
  Result<BuildKey> key = resolve(request);
  if (!key)
    return key.error();
  Result<std::shared_ptr<const Kernel>> kernel = this->kernel(*key);
  if (kernel) {
    std::lock_guard<std::mutex> lock(mutex_);
    keyOfRequest_[requestText] = key->text();
  }
  return kernel;
}

Result<std::shared_ptr<const Kernel>> Session::kernel(const BuildKey &key) {
  std::string keyText = key.text();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = kernels_.find(keyText); it != kernels_.end())
      return it->second;
  }
  std::shared_ptr<const CacheEntry> entry;
  if (builder_) {
    auto built = cache_.getOrBuild(keyText, [&] { return builder_->build(key); });
    if (!built)
      return built.error();
    entry = *built;
  } else {
    CodeObjectCache::Lookup lookup = cache_.find(keyText);
    if (!lookup.entry)
      return makeError("no code object for key " + keyText + " in " +
                       (cache_.directory().empty() ? "the memory-only cache"
                                                   : "cache " + cache_.directory()) +
                       (lookup.refused.empty() ? "" : " (refused " + lookup.refused + ")") +
                       "; this library has no compiler: prebuild it with `monodc matrix "
                       "--cache DIR`");
    entry = lookup.entry;
  }
  Result<Kernel> kernel = Kernel::fromEntry(key, entry);
  if (!kernel)
    return kernel.error();
  auto shared = std::make_shared<const Kernel>(std::move(*kernel));
  std::lock_guard<std::mutex> lock(mutex_);
  return kernels_.emplace(keyText, shared).first->second;
}
