//===- Session.h - kernels by request or build key, cached ------*- C++ -*-===//
//
// A Session serves kernels from the code-object cache. With a KernelBuilder
// (the compiler: see Compiler.h) it builds what the cache lacks: full JIT.
// Without one it serves what a compile-only build placed in the cache ahead of
// time, and a missing key is an error naming it: runtime-only.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_SESSION_H
#define MONODC_RUNTIME_SESSION_H

#include "monodc/runtime/CodeObjectCache.h"
#include "monodc/runtime/Kernel.h"
#include "monodc/runtime/KernelRequest.h"

#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace monodc {

/// The compiler, seen from a session.
class KernelBuilder {
public:
  virtual ~KernelBuilder() = default;
  /// The whole key of a request: config digest, grid, backend version, build id.
  virtual runtime::Result<runtime::BuildKey> resolve(const KernelRequest &request) = 0;
  /// Builds the cache entry of `key`.
  virtual runtime::Result<runtime::CacheEntry> build(const runtime::BuildKey &key) = 0;
};

struct SessionOptions {
  /// Empty: defaultCacheDirectory().
  std::string cacheDirectory;
  /// Keep code objects in memory only (no directory is read or written).
  bool memoryOnly = false;
  /// Receives warnings (one line each); default: stderr.
  std::function<void(const std::string &)> warn;
  /// The compiler; null for a runtime-only session.
  std::shared_ptr<KernelBuilder> builder;
};

class Session {
public:
  explicit Session(SessionOptions options);

  bool canCompile() const { return builder_ != nullptr; }
  runtime::CodeObjectCache &cache() { return cache_; }

  /// The kernel for a request. Runtime-only: the one cache entry of this
  /// library's build id whose key has every field of the request.
  runtime::Result<std::shared_ptr<const Kernel>> kernel(const KernelRequest &request);
  /// The kernel for a whole key.
  runtime::Result<std::shared_ptr<const Kernel>> kernel(const runtime::BuildKey &key);

  /// The whole key a request stands for (see kernel(request)).
  runtime::Result<runtime::BuildKey> resolve(const KernelRequest &request);

private:
  runtime::Result<runtime::BuildKey> findInCache(const KernelRequest &request);

  std::shared_ptr<KernelBuilder> builder_;
  runtime::CodeObjectCache cache_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::string> keyOfRequest_; ///< request text -> key text
  std::unordered_map<std::string, std::shared_ptr<const Kernel>> kernels_; ///< by key text
};

} // namespace monodc

#endif // MONODC_RUNTIME_SESSION_H
