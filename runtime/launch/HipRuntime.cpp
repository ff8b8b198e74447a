//===- HipRuntime.cpp - the HIP runtime, loaded with dlopen ---------------===//
#include "monodc/runtime/HipRuntime.h"

#include <cstring>

using namespace monodc::runtime;

namespace {
// From hip_runtime_api.h (ROCm 5 and 6); the header is not needed to build.
constexpr int kAttributeMultiprocessorCount = 63;
void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(0x01);
void *const kLaunchParamBufferSize = reinterpret_cast<void *>(0x02);
void *const kLaunchParamEnd = reinterpret_cast<void *>(0x03);
} // namespace

std::vector<std::string> HipRuntime::defaultLibraries() {
  return SharedLibrary::candidates("MONODC_HIP_LIBRARY", {"ROCM_PATH"},
                                   {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"});
}

Result<std::shared_ptr<HipRuntime>>
HipRuntime::load(const std::vector<std::string> &candidates) {
  Result<SharedLibrary> library = SharedLibrary::open(candidates, "the HIP runtime");
  if (!library)
    return library.error();
  std::shared_ptr<HipRuntime> hip(new HipRuntime(std::move(*library)));
  Status resolved;
  hip->library_.resolve(hip->init_, "hipInit", resolved);
  hip->library_.resolve(hip->getDeviceCount_, "hipGetDeviceCount", resolved);
  hip->library_.resolve(hip->setDevice_, "hipSetDevice", resolved);
  hip->library_.resolve(hip->deviceGetAttribute_, "hipDeviceGetAttribute", resolved);
  hip->library_.resolve(hip->moduleLoadData_, "hipModuleLoadData", resolved);
  hip->library_.resolve(hip->moduleUnload_, "hipModuleUnload", resolved);
  hip->library_.resolve(hip->moduleGetFunction_, "hipModuleGetFunction", resolved);
  hip->library_.resolve(hip->occupancy_, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", resolved);
  hip->library_.resolve(hip->malloc_, "hipMalloc", resolved);
  hip->library_.resolve(hip->free_, "hipFree", resolved);
  hip->library_.resolve(hip->memset_, "hipMemset", resolved);
  hip->library_.resolve(hip->deviceSynchronize_, "hipDeviceSynchronize", resolved);
  hip->library_.resolve(hip->streamSynchronize_, "hipStreamSynchronize", resolved);
  hip->library_.resolve(hip->memcpy_, "hipMemcpy", resolved);
  hip->library_.resolve(hip->deviceCanAccessPeer_, "hipDeviceCanAccessPeer", resolved);
  hip->library_.resolve(hip->deviceEnablePeerAccess_, "hipDeviceEnablePeerAccess", resolved);
  hip->library_.resolve(hip->extMallocWithFlags_, "hipExtMallocWithFlags", resolved);
  hip->library_.resolve(hip->ipcGetMemHandle_, "hipIpcGetMemHandle", resolved);
  hip->library_.resolve(hip->ipcOpenMemHandle_, "hipIpcOpenMemHandle", resolved);
  hip->library_.resolve(hip->ipcCloseMemHandle_, "hipIpcCloseMemHandle", resolved);
  hip->library_.resolve(hip->moduleLaunchKernel_, "hipModuleLaunchKernel", resolved);
  hip->library_.resolve(hip->getErrorString_, "hipGetErrorString", resolved);
  if (!resolved)
    return resolved.error();
  return hip;
}

Status HipRuntime::check(int code, const char *call) const {
  if (code == 0)
    return Status::success();
  return library_.callFailed(call, getErrorString_(code), code);
}

Status HipRuntime::initialize() {
  if (Status s = check(init_(0), "hipInit"); !s)
    return makeError("the HIP runtime found no usable GPU: " + s.message());
  int devices = 0;
  if (Status s = check(getDeviceCount_(&devices), "hipGetDeviceCount"); !s)
    return makeError("the HIP runtime found no usable GPU: " + s.message());
  if (devices == 0)
    return makeError("the HIP runtime (" + library_.name() + ") found no GPU");
  return Status::success();
}

Status HipRuntime::setDevice(int device) { return check(setDevice_(device), "hipSetDevice"); }

Result<int> HipRuntime::computeUnits(int device) {
  int units = 0;
  if (Status s = check(deviceGetAttribute_(&units, kAttributeMultiprocessorCount, device),
                       "hipDeviceGetAttribute(multiprocessor count)");
      !s)
    return s.error();
  return units;
}

Result<void *> HipRuntime::loadModule(const std::vector<char> &codeObject) {
  void *module = nullptr;
  if (Status s = check(moduleLoadData_(&module, codeObject.data()), "hipModuleLoadData"); !s)
    return s.error();
  return module;
}

void HipRuntime::unloadModule(void *module) { moduleUnload_(module); }

Result<void *> HipRuntime::function(void *module, const std::string &name) {
  void *function = nullptr;
  if (Status s = check(moduleGetFunction_(&function, module, name.c_str()),
                       "hipModuleGetFunction");
      !s)
    return makeError(s.message() + " (kernel " + name + ")");
  return function;
}

Status HipRuntime::allowDynamicShared(void *function, int64_t bytes) {
  (void)function;
  if (bytes == 0)
    return Status::success();
  return makeError("the HIP launcher passes no dynamic shared memory (the launch asks for " +
                   std::to_string(bytes) + " bytes)");
}

Result<int> HipRuntime::residentBlocksPerUnit(void *function, int block, int64_t dynamicShared) {
  int blocks = 0;
  if (Status s = check(occupancy_(&blocks, function, block, static_cast<size_t>(dynamicShared)),
                       "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor");
      !s)
    return s.error();
  return blocks;
}

Result<void *> HipRuntime::allocate(size_t bytes) {
  void *pointer = nullptr;
  if (Status s = check(malloc_(&pointer, bytes), "hipMalloc"); !s)
    return makeError(s.message() + " (" + std::to_string(bytes) + " bytes)");
  return pointer;
}

void HipRuntime::release(void *pointer) { free_(pointer); }

Status HipRuntime::zero(void *pointer, size_t bytes) {
  if (Status s = check(memset_(pointer, 0, bytes), "hipMemset"); !s)
    return s;
  return check(deviceSynchronize_(), "hipDeviceSynchronize");
}

// hipDeviceMallocFinegrained: coherent with the other GPUs and the host,
// which the peer mailboxes' system-scope releases and acquires need.
Result<void *> HipRuntime::allocateShareable(size_t bytes) {
  void *pointer = nullptr;
  if (Status s = check(extMallocWithFlags_(&pointer, bytes, 0x1), "hipExtMallocWithFlags"); !s)
    return makeError(s.message() + " (" + std::to_string(bytes) + " fine-grained bytes)");
  return pointer;
}

Result<IpcHandle> HipRuntime::exportHandle(void *pointer) {
  IpcBytes bytes{};
  if (Status s = check(ipcGetMemHandle_(&bytes, pointer), "hipIpcGetMemHandle"); !s)
    return s.error();
  IpcHandle handle;
  std::memcpy(handle.data(), bytes.reserved, handle.size());
  return handle;
}

// hipIpcMemLazyEnablePeerAccess: a buffer on another GPU is reachable.
Result<void *> HipRuntime::openHandle(const IpcHandle &handle) {
  IpcBytes bytes;
  std::memcpy(bytes.reserved, handle.data(), handle.size());
  void *pointer = nullptr;
  if (Status s = check(ipcOpenMemHandle_(&pointer, bytes, 0x1), "hipIpcOpenMemHandle"); !s)
    return s.error();
  return pointer;
}

void HipRuntime::closeHandle(void *pointer) { ipcCloseMemHandle_(pointer); }

Status HipRuntime::enablePeerAccess(int device, int peer) {
  int can = 0;
  if (Status s = check(deviceCanAccessPeer_(&can, device, peer), "hipDeviceCanAccessPeer"); !s)
    return s;
  if (!can)
    return makeError("GPU " + std::to_string(device) + " cannot reach the memory of GPU " +
                     std::to_string(peer) + " (hipDeviceCanAccessPeer): its ranks cannot share "
                     "one process's peer buffers");
  if (Status s = setDevice(device); !s)
    return s;
  const int code = deviceEnablePeerAccess_(peer, 0);
  constexpr int kAlreadyEnabled = 704; // hipErrorPeerAccessAlreadyEnabled
  return code == kAlreadyEnabled ? Status::success() : check(code, "hipDeviceEnablePeerAccess");
}

Status HipRuntime::synchronize(void *stream) {
  return check(streamSynchronize_(stream), "hipStreamSynchronize");
}

// hipMemcpyKind: 1 host to device, 2 device to host.
Status HipRuntime::copyToHost(void *host, const void *device, size_t bytes) {
  return check(memcpy_(host, device, bytes, 2), "hipMemcpy");
}

Status HipRuntime::copyToDevice(void *device, const void *host, size_t bytes) {
  return check(memcpy_(device, host, bytes, 1), "hipMemcpy");
}

Status HipRuntime::launch(void *function, unsigned grid, unsigned block, int64_t dynamicShared,
                          void *stream, std::vector<uint8_t> &kernarg) {
  size_t size = kernarg.size();
  void *config[] = {kLaunchParamBufferPointer, kernarg.data(), kLaunchParamBufferSize, &size,
                    kLaunchParamEnd};
  return check(moduleLaunchKernel_(function, grid, 1, 1, block, 1, 1,
                                   static_cast<unsigned>(dynamicShared), stream, nullptr, config),
               "hipModuleLaunchKernel");
}
