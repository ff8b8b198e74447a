//===- HipRuntime.h - the HIP runtime, loaded with dlopen -------*- C++ -*-===//
//
// The few HIP module-API functions a launcher needs, resolved from
// libamdhip64 at run time: the runtime library links without ROCm, and a
// process without it gets an error naming the libraries it looked for.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_HIPRUNTIME_H
#define MONODC_RUNTIME_HIPRUNTIME_H

#include "monodc/runtime/DeviceRuntime.h"
#include "monodc/runtime/SharedLibrary.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace monodc::runtime {

class HipRuntime final : public DeviceRuntime {
public:
  /// `$ROCM_PATH/lib/libamdhip64.so*`, then libamdhip64.so, .so.6, .so.5.
  static std::vector<std::string> defaultLibraries();
  static Result<std::shared_ptr<HipRuntime>>
  load(const std::vector<std::string> &candidates = defaultLibraries());

  const std::string &libraryName() const override { return library_.name(); }

  /// hipInit, then at least one device.
  Status initialize() override;
  Status setDevice(int device) override;
  Result<int> computeUnits(int device) override;
  Result<void *> loadModule(const std::vector<char> &codeObject) override;
  void unloadModule(void *module) override;
  Result<void *> function(void *module, const std::string &name) override;
  /// The AMD sources take their LDS statically: any dynamic amount is refused.
  Status allowDynamicShared(void *function, int64_t bytes) override;
  Result<int> residentBlocksPerUnit(void *function, int block, int64_t dynamicShared) override;
  Result<void *> allocate(size_t bytes) override;
  void release(void *pointer) override;
  Status zero(void *pointer, size_t bytes) override;
  Result<void *> allocateShareable(size_t bytes) override;
  Result<IpcHandle> exportHandle(void *pointer) override;
  Result<void *> openHandle(const IpcHandle &handle) override;
  void closeHandle(void *pointer) override;
  Status enablePeerAccess(int device, int peer) override;
  Status synchronize(void *stream) override;
  Status copyToHost(void *host, const void *device, size_t bytes) override;
  Status copyToDevice(void *device, const void *host, size_t bytes) override;
  Status launch(void *function, unsigned grid, unsigned block, int64_t dynamicShared, void *stream,
                std::vector<uint8_t> &kernarg) override;

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
  using StreamSynchronize = int (*)(void *);
  using ExtMallocWithFlags = int (*)(void **, size_t, unsigned);
  using IpcBytes = monodc_ipc_bytes;
  using IpcGetMemHandle = int (*)(IpcBytes *, void *);
  using IpcOpenMemHandle = int (*)(void **, IpcBytes, unsigned);
  using IpcCloseMemHandle = int (*)(void *);
  using Memcpy = int (*)(void *, const void *, size_t, int);
  using DeviceCanAccessPeer = int (*)(int *, int, int);
  using DeviceEnablePeerAccess = int (*)(int, unsigned);
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
  StreamSynchronize streamSynchronize_ = nullptr;
  ExtMallocWithFlags extMallocWithFlags_ = nullptr;
  IpcGetMemHandle ipcGetMemHandle_ = nullptr;
  IpcOpenMemHandle ipcOpenMemHandle_ = nullptr;
  IpcCloseMemHandle ipcCloseMemHandle_ = nullptr;
  Memcpy memcpy_ = nullptr;
  DeviceCanAccessPeer deviceCanAccessPeer_ = nullptr;
  DeviceEnablePeerAccess deviceEnablePeerAccess_ = nullptr;
  ModuleLaunchKernel moduleLaunchKernel_ = nullptr;
  GetErrorString getErrorString_ = nullptr;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_HIPRUNTIME_H
