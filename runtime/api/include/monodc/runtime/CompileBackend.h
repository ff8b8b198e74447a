//===- CompileBackend.h - HIP source -> code object, one interface -*- C++ -*-===//
//
// clang (in process, needs the compiler library: see Compiler.h), hiprtc and
// nvrtc (loaded at run time) behind one interface. Errors name the backend,
// its library and the arch.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_COMPILEBACKEND_H
#define MONODC_RUNTIME_COMPILEBACKEND_H

#include "monodc/runtime/Result.h"

#include <memory>
#include <string>
#include <vector>

namespace monodc {

struct BackendCompileOptions {
  std::string arch;       ///< processor, e.g. gfx950 or sm_90
  std::string features;   ///< target features; empty: the default
  std::string options;    ///< the build key's options, e.g. -O3
  std::string sourceName; ///< the name diagnostics show
};

class CompileBackend {
public:
  virtual ~CompileBackend() = default;
  virtual std::string name() const = 0;
  /// Goes into the build key: a new version is a new key.
  virtual std::string version() const = 0;
  virtual runtime::Status checkArch(const std::string &arch) const = 0;
  virtual runtime::Result<std::vector<char>> compile(const std::string &source,
                                                     const BackendCompileOptions &options) const = 0;
};

/// hiprtc or nvrtc, loaded now; the error says what was looked for.
runtime::Result<std::shared_ptr<CompileBackend>> loadHiprtcBackend();
runtime::Result<std::shared_ptr<CompileBackend>> loadNvrtcBackend();

} // namespace monodc

#endif // MONODC_RUNTIME_COMPILEBACKEND_H
