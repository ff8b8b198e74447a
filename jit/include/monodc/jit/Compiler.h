//===- Compiler.h - full JIT: build keys into code objects ------*- C++ -*-===//
//
// The compiler as a KernelBuilder: a request becomes a whole build key, a key
// becomes DSL -> mono IR -> passes -> HIP -> code object through the key's
// backend. A launch that needs scratch memory is refused here, at build time.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_JIT_COMPILER_H
#define MONODC_JIT_COMPILER_H

#include "monodc/runtime/CompileBackend.h"
#include "monodc/runtime/LaunchInterface.h"
#include "monodc/runtime/Session.h"

#include <map>
#include <mutex>

namespace monodc {

/// The in-process clang + lld backend (AMD targets, needs no ROCm).
std::shared_ptr<CompileBackend> makeClangBackend();

class Compiler : public KernelBuilder {
public:
  runtime::Result<runtime::BuildKey> resolve(const KernelRequest &request) override;
  runtime::Result<runtime::CacheEntry> build(const runtime::BuildKey &key) override;

  /// The first half of build(): the launch's HIP source and interface.
  struct Emitted {
    std::string source;
    std::string sourceName;
    std::string manifest; ///< emit::kernelManifest, kept in the cache entry
    runtime::LaunchInterface interface;
  };
  runtime::Result<Emitted> emit(const runtime::BuildKey &key);
  /// The second half: the code object of an emitted launch, checked.
  runtime::Result<runtime::CacheEntry> compile(const runtime::BuildKey &key,
                                               const Emitted &emitted);

  /// A backend by name (clang, hiprtc, nvrtc), loaded once.
  runtime::Result<std::shared_ptr<CompileBackend>> backend(const std::string &name);

private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<CompileBackend>> backends_;
};

/// A session with the compiler: builds what its cache lacks.
std::unique_ptr<Session> openJitSession(SessionOptions options = {});

} // namespace monodc

#endif // MONODC_JIT_COMPILER_H
