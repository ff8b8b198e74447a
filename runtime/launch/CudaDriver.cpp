//===- CudaDriver.cpp - the CUDA driver API, loaded with dlopen -----------===//
#include "monodc/runtime/CudaDriver.h"

#include <cstring>

using namespace monodc::runtime;

namespace {
// From cuda.h (CUDA 12 and 13); the header is not needed to build.
constexpr int kAttributeMultiprocessorCount = 16;      // CU_DEVICE_ATTRIBUTE_...
constexpr int kFunctionMaxDynamicSharedBytes = 8;       // CU_FUNC_ATTRIBUTE_...
constexpr int64_t kStaticSharedLimit = 48 * 1024;       // past it, a launch must opt in
void *const kLaunchParamEnd = reinterpret_cast<void *>(0x00);
void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(0x01);
void *const kLaunchParamBufferSize = reinterpret_cast<void *>(0x02);
} // namespace

std::vector<std::string> CudaDriver::defaultLibraries() {
  return SharedLibrary::candidates("MONODC_CUDA_LIBRARY", {}, {"libcuda.so.1", "libcuda.so"});
}

Result<std::shared_ptr<CudaDriver>>
CudaDriver::load(const std::vector<std::string> &candidates) {
  Result<SharedLibrary> library = SharedLibrary::open(candidates, "the CUDA driver");
  if (!library)
    return library.error();
  std::shared_ptr<CudaDriver> cuda(new CudaDriver(std::move(*library)));
  Status resolved;
  // The _v2 names are what cuda.h's macros call (64-bit device pointers).
  cuda->library_.resolve(cuda->init_, "cuInit", resolved);
  cuda->library_.resolve(cuda->deviceGetCount_, "cuDeviceGetCount", resolved);
  cuda->library_.resolve(cuda->deviceGet_, "cuDeviceGet", resolved);
  cuda->library_.resolve(cuda->primaryCtxRetain_, "cuDevicePrimaryCtxRetain", resolved);
  cuda->library_.resolve(cuda->primaryCtxRelease_, "cuDevicePrimaryCtxRelease_v2", resolved);
  cuda->library_.resolve(cuda->ctxSetCurrent_, "cuCtxSetCurrent", resolved);
  cuda->library_.resolve(cuda->deviceCanAccessPeer_, "cuDeviceCanAccessPeer", resolved);
  cuda->library_.resolve(cuda->ctxEnablePeerAccess_, "cuCtxEnablePeerAccess", resolved);
  cuda->library_.resolve(cuda->deviceGetAttribute_, "cuDeviceGetAttribute", resolved);
  cuda->library_.resolve(cuda->moduleLoadData_, "cuModuleLoadData", resolved);
  cuda->library_.resolve(cuda->moduleUnload_, "cuModuleUnload", resolved);
  cuda->library_.resolve(cuda->moduleGetFunction_, "cuModuleGetFunction", resolved);
  cuda->library_.resolve(cuda->funcSetAttribute_, "cuFuncSetAttribute", resolved);
  cuda->library_.resolve(cuda->occupancy_, "cuOccupancyMaxActiveBlocksPerMultiprocessor", resolved);
  cuda->library_.resolve(cuda->memAlloc_, "cuMemAlloc_v2", resolved);
  cuda->library_.resolve(cuda->memFree_, "cuMemFree_v2", resolved);
  cuda->library_.resolve(cuda->memsetD8_, "cuMemsetD8_v2", resolved);
  cuda->library_.resolve(cuda->ctxSynchronize_, "cuCtxSynchronize", resolved);
  cuda->library_.resolve(cuda->streamSynchronize_, "cuStreamSynchronize", resolved);
  cuda->library_.resolve(cuda->memcpyDtoH_, "cuMemcpyDtoH_v2", resolved);
  cuda->library_.resolve(cuda->memcpyHtoD_, "cuMemcpyHtoD_v2", resolved);
  cuda->library_.resolve(cuda->ipcGetMemHandle_, "cuIpcGetMemHandle", resolved);
  cuda->library_.resolve(cuda->ipcOpenMemHandle_, "cuIpcOpenMemHandle_v2", resolved);
  cuda->library_.resolve(cuda->ipcCloseMemHandle_, "cuIpcCloseMemHandle", resolved);
  cuda->library_.resolve(cuda->launchKernel_, "cuLaunchKernel", resolved);
  cuda->library_.resolve(cuda->getErrorName_, "cuGetErrorName", resolved);
  if (!resolved)
    return resolved.error();
  return cuda;
}

CudaDriver::~CudaDriver() {
  for (const auto &[device, context] : contexts_)
    primaryCtxRelease_(device);
}

Status CudaDriver::check(int code, const char *call) const {
  if (code == 0)
    return Status::success();
  const char *name = nullptr;
  if (getErrorName_(code, &name) != 0)
    name = nullptr;
  return library_.callFailed(call, name, code);
}

Status CudaDriver::initialize() {
  if (Status s = check(init_(0), "cuInit"); !s)
    return makeError("the CUDA driver found no usable GPU: " + s.message());
  int devices = 0;
  if (Status s = check(deviceGetCount_(&devices), "cuDeviceGetCount"); !s)
    return makeError("the CUDA driver found no usable GPU: " + s.message());
  if (devices == 0)
    return makeError("the CUDA driver (" + library_.name() + ") found no GPU");
  return Status::success();
}

Status CudaDriver::setDevice(int device) {
  auto known = contexts_.find(device);
  if (known == contexts_.end()) {
    int handle = 0;
    if (Status s = check(deviceGet_(&handle, device), "cuDeviceGet"); !s)
      return s;
    void *context = nullptr;
    if (Status s = check(primaryCtxRetain_(&context, handle), "cuDevicePrimaryCtxRetain"); !s)
      return s;
    known = contexts_.emplace(device, context).first;
  }
  return check(ctxSetCurrent_(known->second), "cuCtxSetCurrent");
}

Result<int> CudaDriver::computeUnits(int device) {
  int handle = 0, units = 0;
  if (Status s = check(deviceGet_(&handle, device), "cuDeviceGet"); !s)
    return s.error();
  if (Status s = check(deviceGetAttribute_(&units, kAttributeMultiprocessorCount, handle),
                       "cuDeviceGetAttribute(multiprocessor count)");
      !s)
    return s.error();
  return units;
}

Result<void *> CudaDriver::loadModule(const std::vector<char> &codeObject) {
  const bool elf = codeObject.size() >= 4 && std::memcmp(codeObject.data(), "\x7f" "ELF", 4) == 0;
  std::vector<char> text;
  if (!elf) {
    text = codeObject;
    text.push_back('\0');
  }
  void *module = nullptr;
  if (Status s = check(moduleLoadData_(&module, elf ? codeObject.data() : text.data()),
                       "cuModuleLoadData");
      !s)
    return s.error();
  return module;
}

void CudaDriver::unloadModule(void *module) { moduleUnload_(module); }

Result<void *> CudaDriver::function(void *module, const std::string &name) {
  void *function = nullptr;
  if (Status s = check(moduleGetFunction_(&function, module, name.c_str()), "cuModuleGetFunction");
      !s)
    return makeError(s.message() + " (kernel " + name + ")");
  return function;
}

Status CudaDriver::allowDynamicShared(void *function, int64_t bytes) {
  if (bytes <= kStaticSharedLimit)
    return Status::success();
  if (Status s = check(funcSetAttribute_(function, kFunctionMaxDynamicSharedBytes,
                                         static_cast<int>(bytes)),
                       "cuFuncSetAttribute(max dynamic shared memory)");
      !s)
    return makeError(s.message() + " (" + std::to_string(bytes) + " bytes)");
  return Status::success();
}

Result<int> CudaDriver::residentBlocksPerUnit(void *function, int block, int64_t dynamicShared) {
  int blocks = 0;
  if (Status s = check(occupancy_(&blocks, function, block, static_cast<size_t>(dynamicShared)),
                       "cuOccupancyMaxActiveBlocksPerMultiprocessor");
      !s)
    return s.error();
  return blocks;
}

Result<void *> CudaDriver::allocate(size_t bytes) {
  unsigned long long pointer = 0;
  if (Status s = check(memAlloc_(&pointer, bytes), "cuMemAlloc"); !s)
    return makeError(s.message() + " (" + std::to_string(bytes) + " bytes)");
  return reinterpret_cast<void *>(pointer);
}

void CudaDriver::release(void *pointer) { memFree_(reinterpret_cast<unsigned long long>(pointer)); }

Status CudaDriver::zero(void *pointer, size_t bytes) {
  if (Status s = check(memsetD8_(reinterpret_cast<unsigned long long>(pointer), 0, bytes),
                       "cuMemsetD8");
      !s)
    return s;
  return check(ctxSynchronize_(), "cuCtxSynchronize");
}

Result<void *> CudaDriver::allocateShareable(size_t bytes) { return allocate(bytes); }

Result<IpcHandle> CudaDriver::exportHandle(void *pointer) {
  IpcBytes bytes{};
  if (Status s = check(ipcGetMemHandle_(&bytes, reinterpret_cast<unsigned long long>(pointer)),
                       "cuIpcGetMemHandle");
      !s)
    return s.error();
  IpcHandle handle;
  std::memcpy(handle.data(), bytes.reserved, handle.size());
  return handle;
}

// CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: a buffer on another GPU is reachable.
Result<void *> CudaDriver::openHandle(const IpcHandle &handle) {
  IpcBytes bytes;
  std::memcpy(bytes.reserved, handle.data(), handle.size());
  unsigned long long pointer = 0;
  if (Status s = check(ipcOpenMemHandle_(&pointer, bytes, 0x1), "cuIpcOpenMemHandle"); !s)
    return s.error();
  return reinterpret_cast<void *>(pointer);
}

void CudaDriver::closeHandle(void *pointer) {
  ipcCloseMemHandle_(reinterpret_cast<unsigned long long>(pointer));
}

// The peer's primary context is retained (setDevice) before this device's is
// made current again: cuCtxEnablePeerAccess names the peer by its context.
Status CudaDriver::enablePeerAccess(int device, int peer) {
  int deviceHandle = 0, peerHandle = 0, can = 0;
  if (Status s = check(deviceGet_(&deviceHandle, device), "cuDeviceGet"); !s)
    return s;
  if (Status s = check(deviceGet_(&peerHandle, peer), "cuDeviceGet"); !s)
    return s;
  if (Status s = check(deviceCanAccessPeer_(&can, deviceHandle, peerHandle), "cuDeviceCanAccessPeer");
      !s)
    return s;
  if (!can)
    return makeError("GPU " + std::to_string(device) + " cannot reach the memory of GPU " +
                     std::to_string(peer) + " (cuDeviceCanAccessPeer): its ranks cannot share "
                     "one process's peer buffers");
  if (Status s = setDevice(peer); !s)
    return s;
  if (Status s = setDevice(device); !s)
    return s;
  const int code = ctxEnablePeerAccess_(contexts_.at(peer), 0);
  constexpr int kAlreadyEnabled = 704; // CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
  return code == kAlreadyEnabled ? Status::success() : check(code, "cuCtxEnablePeerAccess");
}

Status CudaDriver::synchronize(void *stream) {
  return check(streamSynchronize_(stream), "cuStreamSynchronize");
}

Status CudaDriver::copyToHost(void *host, const void *device, size_t bytes) {
  return check(memcpyDtoH_(host, reinterpret_cast<unsigned long long>(device), bytes),
               "cuMemcpyDtoH");
}

Status CudaDriver::copyToDevice(void *device, const void *host, size_t bytes) {
  return check(memcpyHtoD_(reinterpret_cast<unsigned long long>(device), host, bytes),
               "cuMemcpyHtoD");
}

Status CudaDriver::launch(void *function, unsigned grid, unsigned block, int64_t dynamicShared,
                          void *stream, std::vector<uint8_t> &kernarg) {
  size_t size = kernarg.size();
  void *config[] = {kLaunchParamBufferPointer, kernarg.data(), kLaunchParamBufferSize, &size,
                    kLaunchParamEnd};
  return check(launchKernel_(function, grid, 1, 1, block, 1, 1,
                             static_cast<unsigned>(dynamicShared), stream, nullptr, config),
               "cuLaunchKernel");
}
