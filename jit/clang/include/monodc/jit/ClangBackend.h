//===- ClangBackend.h - HIP -> AMDGPU code object, in process ---*- C++ -*-===//
#ifndef MONODC_JIT_CLANGBACKEND_H
#define MONODC_JIT_CLANGBACKEND_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace monodc::backends {

struct ClangCompileOptions {
  std::string arch = "gfx950";   ///< an AMDGPU processor name
  std::string sourceName = "launch.hip"; ///< the name diagnostics show
  int optLevel = 3;
};

/// The AMD processors the in-process backend builds for.
bool isClangBackendArch(const std::string &arch);

/// Registers the AMDGPU target with LLVM, once per process.
void initializeAmdgpuTargets();

/// The clang -cc1 arguments the backend compiles `options.sourceName` with,
/// writing an object (or assembly) to `output`; for tools that time its phases.
std::vector<std::string> clangCc1Arguments(const ClangCompileOptions &options, bool assembly,
                                           const std::string &output);

/// Compiles a self-contained HIP translation unit for one AMD GPU with the
/// clang and lld libraries linked into this process (no ROCm install needed)
/// and returns the loadable code object: an ELF shared object for
/// amdgcn-amd-amdhsa--<arch>, no offload bundle. Compiler diagnostics come back
/// as the error, with their source locations.
llvm::Expected<std::vector<char>> compileHipToCodeObject(const std::string &source,
                                                         const ClangCompileOptions &options);

/// Same front end and back end, stopping at AMDGPU assembly text.
llvm::Expected<std::string> compileHipToAssembly(const std::string &source,
                                                 const ClangCompileOptions &options);

} // namespace monodc::backends

#endif // MONODC_JIT_CLANGBACKEND_H
