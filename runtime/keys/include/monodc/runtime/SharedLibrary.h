//===- SharedLibrary.h - vendor libraries loaded at run time ----*- C++ -*-===//
//
// hiprtc, nvrtc and the HIP runtime are loaded with dlopen, so the runtime
// library builds and links on machines without them and reports their absence
// as an error naming what it looked for.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_SHAREDLIBRARY_H
#define MONODC_RUNTIME_SHAREDLIBRARY_H

#include "monodc/runtime/Result.h"

#include <string>
#include <vector>

namespace monodc::runtime {

class SharedLibrary {
public:
  /// Loads the first candidate that the dynamic loader accepts (a soname or a
  /// path). The error names `what` and every candidate tried.
  static Result<SharedLibrary> open(const std::vector<std::string> &candidates,
                                    const std::string &what);

  /// `$<overrideVar>` alone when it is set (a path or a name); else `names`
  /// under `$<var>/lib` and `$<var>/lib64` for each set variable of
  /// `rootVars`, then the bare names (the loader's search path).
  static std::vector<std::string> candidates(const std::string &overrideVar,
                                             const std::vector<std::string> &rootVars,
                                             const std::vector<std::string> &names);

  SharedLibrary(SharedLibrary &&other) noexcept;
  SharedLibrary &operator=(SharedLibrary &&other) noexcept;
  SharedLibrary(const SharedLibrary &) = delete;
  SharedLibrary &operator=(const SharedLibrary &) = delete;
  ~SharedLibrary();

  /// The candidate that loaded.
  const std::string &name() const { return name_; }

  /// A function of the library; the error names the symbol and the library.
  template <typename Function> Result<Function> function(const char *symbol) const {
    Result<void *> address = lookup(symbol);
    if (!address)
      return address.error();
    return reinterpret_cast<Function>(*address);
  }

  /// Resolves `symbol` into `slot`, unless `status` holds an error already;
  /// the first failure stays in `status`. For loading a table of functions.
  template <typename Function>
  void resolve(Function &slot, const std::string &symbol, Status &status) const {
    if (!status)
      return;
    Result<Function> address = function<Function>(symbol.c_str());
    if (address)
      slot = *address;
    else
      status = address.error();
  }

  /// "`call` failed in <library>: <errorName> (<code>)": how a call of a
  /// loaded API that returned an error code is reported (errorName null:
  /// the API had no name for it).
  Error callFailed(const std::string &call, const char *errorName, int code) const {
    return makeError(call + " failed in " + name_ + ": " + (errorName ? errorName : "unknown error") +
                     " (" + std::to_string(code) + ")");
  }

private:
  SharedLibrary(void *handle, std::string name) : handle_(handle), name_(std::move(name)) {}
  Result<void *> lookup(const char *symbol) const;

  void *handle_ = nullptr;
  std::string name_;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_SHAREDLIBRARY_H
