//===- SharedLibrary.cpp - vendor libraries loaded at run time ------------===//
#include "monodc/runtime/SharedLibrary.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace monodc::runtime;

// The sanitizer runtimes refuse RTLD_DEEPBIND (it would bind the library past
// their interceptors) and abort the process. A sanitizer build
// (scripts/sanitize.sh) is runtime-only: no LLVM of its own for comgr to
// collide with, so it loads without it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MONODC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                    \
    __has_feature(memory_sanitizer)
#define MONODC_SANITIZED 1
#endif
#endif
#ifdef MONODC_SANITIZED
constexpr int kDeepBind = 0;
#else
constexpr int kDeepBind = RTLD_DEEPBIND;
#endif

Result<SharedLibrary> SharedLibrary::open(const std::vector<std::string> &candidates,
                                          const std::string &what) {
  std::string tried, lastError;
  for (const std::string &candidate : candidates) {
    // RTLD_LOCAL keeps the vendor's symbols out of the process; RTLD_DEEPBIND
    // keeps the process's symbols out of the vendor's: ROCm's comgr carries
    // its own LLVM and crashes when bound to the LLVM 22 of a JIT process.
    // RTLD_NODELETE keeps GPU runtimes mapped after dlclose, as their exit
    // handlers expect.
    if (void *handle = dlopen(candidate.c_str(),
                              RTLD_NOW | RTLD_LOCAL | kDeepBind | RTLD_NODELETE))
      return SharedLibrary(handle, candidate);
    if (const char *error = dlerror())
      lastError = error;
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  return makeError("cannot load " + what + " (tried " + tried + ")" +
                   (lastError.empty() ? "" : ": " + lastError));
}

std::vector<std::string> SharedLibrary::candidates(const std::string &overrideVar,
                                                   const std::vector<std::string> &rootVars,
                                                   const std::vector<std::string> &names) {
  if (const char *chosen = std::getenv(overrideVar.c_str()); chosen && *chosen)
    return {chosen};
  std::vector<std::string> result;
  for (const std::string &var : rootVars) {
    const char *root = std::getenv(var.c_str());
    if (!root || !*root)
      continue;
    for (const char *subdir : {"/lib/", "/lib64/"})
      for (const std::string &name : names)
        result.push_back(root + std::string(subdir) + name);
  }
  result.insert(result.end(), names.begin(), names.end());
  return result;
}

SharedLibrary::SharedLibrary(SharedLibrary &&other) noexcept
    : handle_(other.handle_), name_(std::move(other.name_)) {
  other.handle_ = nullptr;
}

SharedLibrary &SharedLibrary::operator=(SharedLibrary &&other) noexcept {
  if (this != &other) {
    if (handle_)
      dlclose(handle_);
    handle_ = other.handle_;
    name_ = std::move(other.name_);
    other.handle_ = nullptr;
  }
  return *this;
}

SharedLibrary::~SharedLibrary() {
  if (handle_)
    dlclose(handle_);
}

Result<void *> SharedLibrary::lookup(const char *symbol) const {
  dlerror();
  void *address = dlsym(handle_, symbol);
  if (!address)
    return makeError("" + name_ + " has no symbol " + symbol +
                     " (an unsupported version of the library?)");
  return address;
}
