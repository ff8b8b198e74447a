//===- BuildId.h - the compiler's build id ----------------------*- C++ -*-===//
#ifndef MONODC_RUNTIME_BUILDID_H
#define MONODC_RUNTIME_BUILDID_H

#include <string_view>

namespace monodc::runtime {

/// 16 hex digits: a digest of every source file that changes emitted code
/// (compiler/, dsl/, stages/, jit/, runtime/device/, runtime/target/ and
/// runtime/backends/), computed by CMake at build time (ComputeBuildId.cmake).
/// A runtime-only build of the same tree bakes in the same id, so it finds the
/// code objects a compile-only build of that tree placed in a cache, and never
/// those of another revision.
std::string_view compilerBuildId();

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_BUILDID_H
