//===- CApiSupport.h - the GPU harnesses over the runtime's C ABI -*- C++ -*-===//
//
// What the harnesses that drive the runtime library through its C ABI
// (LauncherCheck.cpp, DecodeLoop.cpp) share: stopping on a library error,
// the driver's primary context, and a kernel's arguments as the ABI
// describes them.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_BENCH_GPU_CAPISUPPORT_H
#define MONODC_BENCH_GPU_CAPISUPPORT_H

#include "monodc/runtime/monodc.h"

#include "CudaSupport.h"

#include <string>
#include <vector>

namespace gpu {

/// Stops the program on a library error, printing its message.
inline void require(monodc_error *error, const std::string &what) {
  if (!error)
    return;
  const std::string message = monodc_error_message(error);
  monodc_error_free(error);
  die(what + ": " + message);
}

/// Initialises the driver and makes device 0's primary context current: the
/// library retains and uses the same one, so the buffers a harness allocates
/// are the launchers' to use. Release it with cuDevicePrimaryCtxRelease.
inline CUdevice usePrimaryContext() {
  check(cuInit(0), "cuInit");
  CUdevice device;
  CUcontext context;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&context, device), "primary context");
  check(cuCtxSetCurrent(context), "current context");
  return device;
}

/// Every argument of `kernel`, in order.
inline std::vector<monodc_kernel_argument> kernelArguments(const monodc_kernel *kernel) {
  std::vector<monodc_kernel_argument> all(monodc_kernel_argument_count(kernel));
  for (size_t i = 0; i < all.size(); ++i)
    require(monodc_kernel_argument_get(kernel, i, &all[i]), "argument");
  return all;
}

/// An argument that is a number the launcher takes (the rank, a region's
/// rows or columns given at launch), not memory to bind.
inline bool isCount(const monodc_kernel_argument &a) {
  const std::string kind = a.kind;
  return kind == "rank" || kind == "rows" || kind == "cols";
}

/// Every region of `kernel` sized at launch (the KV caches) with the rows
/// its manifest names, which the harnesses allocate.
inline std::vector<std::pair<std::string, int64_t>> nominalRows(const monodc_kernel *kernel) {
  std::vector<std::pair<std::string, int64_t>> rows;
  for (const monodc_kernel_argument &a : kernelArguments(kernel))
    if (a.rows_at_launch)
      rows.push_back({a.name, a.bytes / a.row_bytes});
  return rows;
}

} // namespace gpu

#endif
