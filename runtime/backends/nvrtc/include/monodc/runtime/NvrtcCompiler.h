//===- NvrtcCompiler.h - HIP source -> cubin through nvrtc ------*- C++ -*-===//
//
// The NVIDIA validation target: the emitted source (its __CUDA_ARCH__ layer)
// built by nvrtc, loaded at run time from a CUDA install.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_NVRTCCOMPILER_H
#define MONODC_RUNTIME_NVRTCCOMPILER_H

#include "monodc/runtime/RtcApi.h"

#include <memory>

namespace monodc::runtime {

class NvrtcCompiler {
public:
  /// `$CUDA_PATH`, `$CUDA_HOME` lib64/lib, then libnvrtc.so, .so.13, .so.12.
  static std::vector<std::string> defaultLibraries();
  static Result<std::shared_ptr<NvrtcCompiler>>
  load(const std::vector<std::string> &candidates = defaultLibraries());

  const std::string &libraryName() const { return api_.libraryName(); }
  /// e.g. "nvrtc 13.0".
  std::string version() const { return "nvrtc " + api_.version(); }
  /// The sm_XX this nvrtc can build (empty when it cannot say).
  const std::vector<std::string> &architectures() const { return architectures_; }
  Status checkArch(const std::string &arch) const;

  struct Options {
    std::string arch = "sm_90";
    std::string sourceName = "launch.cu";
    std::vector<std::string> flags; ///< added after the defaults
  };
  /// A cubin for `options.arch`; errors carry the program log.
  Result<std::vector<char>> compile(const std::string &source, const Options &options) const;

private:
  explicit NvrtcCompiler(RtcApi api) : api_(std::move(api)) {}

  RtcApi api_;
  std::vector<std::string> architectures_;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_NVRTCCOMPILER_H
