//===- DeviceRuntime.h - what a launcher asks of a GPU runtime --*- C++ -*-===//
//
// The few calls a persistent launch needs (device, module, occupancy,
// memory, launch), implemented over HIP (HipRuntime) and over the CUDA
// driver API (CudaDriver), both loaded with dlopen so that the runtime
// library links without either.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_DEVICERUNTIME_H
#define MONODC_RUNTIME_DEVICERUNTIME_H

#include "monodc/runtime/Result.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

/// The 64 bytes of an IPC handle as the C APIs pass them by value
/// (CUipcMemHandle, hipIpcMemHandle_t). At global scope so that its type,
/// which the runtimes' function pointers name, is the one a C stand-in
/// library declares (the sanitizers compare function types by name).
struct monodc_ipc_bytes {
  char reserved[64];
};

namespace monodc::runtime {

/// A device allocation's inter-process handle (CUDA's CUipcMemHandle, HIP's
/// hipIpcMemHandle_t: 64 opaque bytes).
using IpcHandle = std::array<uint8_t, 64>;

class DeviceRuntime {
public:
  virtual ~DeviceRuntime() = default;

  /// The library that was loaded, for messages.
  virtual const std::string &libraryName() const = 0;

  /// Initializes the runtime; at least one device.
  virtual Status initialize() = 0;
  /// Makes `device` current for the calls that follow.
  virtual Status setDevice(int device) = 0;
  virtual Result<int> computeUnits(int device) = 0;
  virtual Result<void *> loadModule(const std::vector<char> &codeObject) = 0;
  virtual void unloadModule(void *module) = 0;
  virtual Result<void *> function(void *module, const std::string &name) = 0;
  /// Lets `function` take `bytes` of dynamic shared memory.
  virtual Status allowDynamicShared(void *function, int64_t bytes) = 0;
  /// CTAs of `block` threads with `dynamicShared` bytes that fit on one
  /// compute unit at once.
  virtual Result<int> residentBlocksPerUnit(void *function, int block, int64_t dynamicShared) = 0;
  virtual Result<void *> allocate(size_t bytes) = 0;
  virtual void release(void *pointer) = 0;
  /// Zeroes `bytes` at `pointer` and waits until done.
  virtual Status zero(void *pointer, size_t bytes) = 0;
  /// Memory another process can open (tensor-parallel peer buffers): on
  /// HIP fine-grained, so that system-scope atomics and stores reach the
  /// other GPUs; on CUDA device memory. Released with release().
  virtual Result<void *> allocateShareable(size_t bytes) = 0;
  /// The handle another process opens `pointer` (from allocateShareable) by.
  virtual Result<IpcHandle> exportHandle(void *pointer) = 0;
  /// Maps another process's allocation into this one (peer access enabled
  /// where it is on another device); closed with closeHandle.
  virtual Result<void *> openHandle(const IpcHandle &handle) = 0;
  virtual void closeHandle(void *pointer) = 0;
  /// Lets kernels on `device` reach memory allocated on `peer` (one process
  /// driving several GPUs); an error where the hardware cannot. Enabling a
  /// pair twice is no error.
  virtual Status enablePeerAccess(int device, int peer) = 0;
  /// Waits until every launch on `stream` (null: the default stream) is done.
  virtual Status synchronize(void *stream) = 0;
  /// Synchronous copies between host and device memory.
  virtual Status copyToHost(void *host, const void *device, size_t bytes) = 0;
  virtual Status copyToDevice(void *device, const void *host, size_t bytes) = 0;
  /// Launches with the arguments as one packed buffer. Only the launch call
  /// itself: nothing that waits, so a stream being captured into a graph
  /// captures it.
  virtual Status launch(void *function, unsigned grid, unsigned block, int64_t dynamicShared,
                        void *stream, std::vector<uint8_t> &kernarg) = 0;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_DEVICERUNTIME_H
