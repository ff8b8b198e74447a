//===- HiprtcCompiler.h - HIP source -> AMD code object through hiprtc -*- C++ -*-===//
//
// hiprtc from a ROCm install, loaded with dlopen (`$ROCM_PATH`, else the
// loader's search path; ROCm 5 keeps hiprtc inside libamdhip64). Before it
// compiles, the arch is checked against the processors the install's code
// object manager (comgr) knows; the compile itself runs in a child process by
// default, so a vendor crash or hang is an error, not the end of the caller.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_HIPRTCCOMPILER_H
#define MONODC_RUNTIME_HIPRTCCOMPILER_H

#include "monodc/runtime/RtcApi.h"

#include <memory>

namespace monodc::runtime {

class HiprtcCompiler {
public:
  static std::vector<std::string> defaultLibraries();
  static Result<std::shared_ptr<HiprtcCompiler>>
  load(const std::vector<std::string> &candidates = defaultLibraries());

  const std::string &libraryName() const { return api_.libraryName(); }
  /// e.g. "hiprtc 9.0, comgr 2.4".
  std::string version() const;
  /// gfx* processors comgr can build (empty when comgr cannot be asked).
  const std::vector<std::string> &processors() const { return processors_; }
  /// `arch` may carry features (gfx90a:xnack-); the processor is checked.
  Status checkArch(const std::string &arch) const;

  struct Options {
    std::string arch = "gfx90a";
    std::string sourceName = "launch.hip";
    std::vector<std::string> flags; ///< added after the defaults
    int timeoutSeconds = 300;
    bool isolate = true; ///< compile in a child process
  };
  /// A code object (ELF) for `options.arch`; errors carry the program log.
  Result<std::vector<char>> compile(const std::string &source, const Options &options) const;

private:
  explicit HiprtcCompiler(RtcApi api) : api_(std::move(api)) {}

  RtcApi api_;
  std::string comgrVersion_;
  std::vector<std::string> processors_;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_HIPRTCCOMPILER_H
