//===- HipRuntime.h - the HIP runtime, loaded with dlopen -------*- C++ -*-===//
//
// The few HIP module-API functions a launcher needs, resolved from
// libamdhip64 at run time: the runtime library links without ROCm, and a
// process without it gets an error naming the libraries it looked for.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_HIPRUNTIME_H
#define MONODC_RUNTIME_HIPRUNTIME_H

#include "monodc/runtime/Result.h"
#include "monodc/runtime/SharedLibrary.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace monodc::runtime {

class HipRuntime {
public:
  /// `$ROCM_PATH/lib/libamdhip64.so*`, then libamdhip64.so, .so.6, .so.5.
  static std::vector<std::string> defaultLibraries();
  static Result<std::shared_ptr<HipRuntime>>
  load(const std::vector<std::string> &candidates = defaultLibraries());

  const std::string &libraryName() const { return library_.name(); }

  /// hipInit, then at least one device.
  Status initialize();
  Status setDevice(int device);
  Result<int> computeUnits(int device);
  Result<void *> loadModule(const std::vector<char> &codeObject);
  void unloadModule(void *module);
  Result<void *> function(void *module, const std::string &name);
  /// CTAs of `block` threads that fit on one compute unit at once.
  Result<int> residentBlocksPerUnit(void *function, int block);
  Result<void *> allocate(size_t bytes);
  void release(void *pointer);
  /// Zeroes `bytes` at `pointer` and waits until done.
  Status zero(void *pointer, size_t bytes);
  /// Launches with the arguments given as one packed kernarg buffer.
  Status launch(void *function, unsigned grid, unsigned block, void *stream,
                std::vector<uint8_t> &kernarg);

private:
  explicit HipRuntime(SharedLibrary library) : library_(std::move(library)) {}
  Status check(int code, const char *call) const;

  using Init = int (*)(unsigned);
  using GetDeviceCount = int (*)(int *);
  using SetDevice = int (*)(int);
  using DeviceGetAttribute = int (*)(int *, int, int);
  using ModuleLoadData = int (*)(void **, const void *);
  using ModuleUnload = int (*)(void *);
  using ModuleGetFunction = int (*)(void **, void *, const char *);
  using Occupancy = int (*)(int *, void *, int, size_t);
  using Malloc = int (*)(void **, size_t);
  using Free = int (*)(void *);
  using Memset = int (*)(void *, int, size_t);
  using DeviceSynchronize = int (*)();
  using ModuleLaunchKernel = int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, unsigned, void *, void **, void **);
  using GetErrorString = const char *(*)(int);

  SharedLibrary library_;
  Init init_ = nullptr;
  GetDeviceCount getDeviceCount_ = nullptr;
  SetDevice setDevice_ = nullptr;
  DeviceGetAttribute deviceGetAttribute_ = nullptr;
  ModuleLoadData moduleLoadData_ = nullptr;
  ModuleUnload moduleUnload_ = nullptr;
  ModuleGetFunction moduleGetFunction_ = nullptr;
  Occupancy occupancy_ = nullptr;
  Malloc malloc_ = nullptr;
  Free free_ = nullptr;
  Memset memset_ = nullptr;
  DeviceSynchronize deviceSynchronize_ = nullptr;
  ModuleLaunchKernel moduleLaunchKernel_ = nullptr;
  GetErrorString getErrorString_ = nullptr;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_HIPRUNTIME_H
