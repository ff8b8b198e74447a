//===- CudaDriver.h - the CUDA driver API, loaded with dlopen ---*- C++ -*-===//
//
// The driver calls a launcher needs, resolved from libcuda at run time (the
// runtime library links without CUDA): the NVIDIA validation target's
// launches (sm_90 cubins from the nvrtc backend) go through the same
// Launcher as the AMD ones. A device's primary context is retained when the
// device is first made current and released with the driver object.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_CUDADRIVER_H
#define MONODC_RUNTIME_CUDADRIVER_H

#include "monodc/runtime/DeviceRuntime.h"
#include "monodc/runtime/SharedLibrary.h"

#include <map>
#include <memory>

namespace monodc::runtime {

class CudaDriver final : public DeviceRuntime {
public:
  /// `$MONODC_CUDA_LIBRARY` alone when set; else libcuda.so.1, libcuda.so.
  static std::vector<std::string> defaultLibraries();
  static Result<std::shared_ptr<CudaDriver>>
  load(const std::vector<std::string> &candidates = defaultLibraries());
  ~CudaDriver() override;

  const std::string &libraryName() const override { return library_.name(); }

  /// cuInit, then at least one device.
  Status initialize() override;
  /// Makes the device's primary context current (retained the first time).
  Status setDevice(int device) override;
  Result<int> computeUnits(int device) override;
  /// A cubin (ELF) as it is; other bytes (PTX) are passed NUL-terminated.
  Result<void *> loadModule(const std::vector<char> &codeObject) override;
  void unloadModule(void *module) override;
  Result<void *> function(void *module, const std::string &name) override;
  /// cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) past CUDA's 48 KB.
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
  explicit CudaDriver(SharedLibrary library) : library_(std::move(library)) {}
  Status check(int code, const char *call) const;

  using Init = int (*)(unsigned);
  using DeviceGetCount = int (*)(int *);
  using DeviceGet = int (*)(int *, int);
  using PrimaryCtxRetain = int (*)(void **, int);
  using PrimaryCtxRelease = int (*)(int);
  using CtxSetCurrent = int (*)(void *);
  using DeviceGetAttribute = int (*)(int *, int, int);
  using ModuleLoadData = int (*)(void **, const void *);
  using ModuleUnload = int (*)(void *);
  using ModuleGetFunction = int (*)(void **, void *, const char *);
  using FuncSetAttribute = int (*)(void *, int, int);
  using Occupancy = int (*)(int *, void *, int, size_t);
  using MemAlloc = int (*)(unsigned long long *, size_t);
  using MemFree = int (*)(unsigned long long);
  using MemsetD8 = int (*)(unsigned long long, unsigned char, size_t);
  using CtxSynchronize = int (*)();
  using StreamSynchronize = int (*)(void *);
  using IpcBytes = monodc_ipc_bytes;
  using IpcGetMemHandle = int (*)(IpcBytes *, unsigned long long);
  using IpcOpenMemHandle = int (*)(unsigned long long *, IpcBytes, unsigned);
  using IpcCloseMemHandle = int (*)(unsigned long long);
  using MemcpyDtoH = int (*)(void *, unsigned long long, size_t);
  using DeviceCanAccessPeer = int (*)(int *, int, int);
  using CtxEnablePeerAccess = int (*)(void *, unsigned);
  using MemcpyHtoD = int (*)(unsigned long long, const void *, size_t);
  using LaunchKernel = int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, void *, void **, void **);
  using GetErrorName = int (*)(int, const char **);

  SharedLibrary library_;
  std::map<int, void *> contexts_;  // retained primary contexts by device
  Init init_ = nullptr;
  DeviceGetCount deviceGetCount_ = nullptr;
  DeviceGet deviceGet_ = nullptr;
  PrimaryCtxRetain primaryCtxRetain_ = nullptr;
  PrimaryCtxRelease primaryCtxRelease_ = nullptr;
  CtxSetCurrent ctxSetCurrent_ = nullptr;
  DeviceGetAttribute deviceGetAttribute_ = nullptr;
  ModuleLoadData moduleLoadData_ = nullptr;
  ModuleUnload moduleUnload_ = nullptr;
  ModuleGetFunction moduleGetFunction_ = nullptr;
  FuncSetAttribute funcSetAttribute_ = nullptr;
  Occupancy occupancy_ = nullptr;
  MemAlloc memAlloc_ = nullptr;
  MemFree memFree_ = nullptr;
  MemsetD8 memsetD8_ = nullptr;
  CtxSynchronize ctxSynchronize_ = nullptr;
  StreamSynchronize streamSynchronize_ = nullptr;
  IpcGetMemHandle ipcGetMemHandle_ = nullptr;
  IpcOpenMemHandle ipcOpenMemHandle_ = nullptr;
  IpcCloseMemHandle ipcCloseMemHandle_ = nullptr;
  MemcpyDtoH memcpyDtoH_ = nullptr;
  DeviceCanAccessPeer deviceCanAccessPeer_ = nullptr;
  CtxEnablePeerAccess ctxEnablePeerAccess_ = nullptr;
  MemcpyHtoD memcpyHtoD_ = nullptr;
  LaunchKernel launchKernel_ = nullptr;
  GetErrorName getErrorName_ = nullptr;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_CUDADRIVER_H
