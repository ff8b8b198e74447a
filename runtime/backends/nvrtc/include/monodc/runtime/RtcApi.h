//===- RtcApi.h - the nvrtc-shaped API of nvrtc and hiprtc ------*- C++ -*-===//
//
// hiprtc copies nvrtc's API function for function (hiprtcCreateProgram,
// nvrtcCreateProgram, ...), so one loader and one compile loop serve both;
// only the prefix and the name of the "get code" pair differ.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_RTCAPI_H
#define MONODC_RUNTIME_RTCAPI_H

#include "monodc/runtime/Result.h"
#include "monodc/runtime/SharedLibrary.h"

#include <cstddef>
#include <string>
#include <vector>

namespace monodc::runtime {

/// Whether `compiler` (e.g. "nvrtc (libnvrtc.so, nvrtc 13.0)") builds
/// `processor`, given the family prefix it builds ("sm_", "gfx") and the
/// processors it says it knows (empty: it cannot say, so any of the family).
/// `arch` is what the error quotes.
Status checkProcessor(const std::string &compiler, const std::string &arch,
                      const std::string &processor, const std::string &family,
                      const std::vector<std::string> &known);

class RtcApi {
public:
  /// Resolves `<prefix>CreateProgram` ... and `<prefix>Get<code>` /
  /// `<prefix>Get<code>Size` from `library`.
  static Result<RtcApi> load(SharedLibrary library, const std::string &prefix,
                             const std::string &code);

  const std::string &libraryName() const { return library_.name(); }
  /// "<major>.<minor>" as the library reports it.
  std::string version() const;
  const SharedLibrary &library() const { return library_; }

  /// Compiles one translation unit; a failure carries the program log.
  Result<std::vector<char>> compile(const std::string &source, const std::string &sourceName,
                                    const std::vector<std::string> &options) const;

private:
  explicit RtcApi(SharedLibrary library, std::string prefix)
      : library_(std::move(library)), prefix_(std::move(prefix)) {}
  std::string describe(int code) const;

  using CreateProgram = int (*)(void **, const char *, const char *, int, const char *const *,
                                const char *const *);
  using CompileProgram = int (*)(void *, int, const char *const *);
  using GetSize = int (*)(void *, size_t *);
  using GetBytes = int (*)(void *, char *);
  using DestroyProgram = int (*)(void **);
  using GetErrorString = const char *(*)(int);
  using Version = int (*)(int *, int *);

  SharedLibrary library_;
  std::string prefix_;
  CreateProgram createProgram_ = nullptr;
  CompileProgram compileProgram_ = nullptr;
  GetSize getLogSize_ = nullptr;
  GetBytes getLog_ = nullptr;
  GetSize getCodeSize_ = nullptr;
  GetBytes getCode_ = nullptr;
  DestroyProgram destroyProgram_ = nullptr;
  GetErrorString getErrorString_ = nullptr;
  Version version_ = nullptr;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_RTCAPI_H
