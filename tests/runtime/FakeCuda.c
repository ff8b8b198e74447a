/* A stand-in for libcuda with the driver calls the launcher makes, as
 * FakeHip.c is for libamdhip64: loading, context, occupancy refusal,
 * allocation and zeroing, the dynamic shared memory attribute and argument
 * packing run without a GPU. It records what it was asked; fake_cuda_* read
 * and set that state, and fake_cuda_calls counts every call, so a test can
 * see that a launch makes the launch call alone (what stream capture needs). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int units = 4, perUnit = 2, devices = 1, retained, current;
static size_t allocated, zeroedBytes;
static void *lastAllocation;
static unsigned launchedGrid, launchedBlock, launchedShared;
static int dynamicAttribute = -1;
static unsigned char kernarg[4096];
static size_t kernargSize;
static char loadedKernel[256];
static int moduleLoaded, launches, calls;
static size_t occupancyShared;

void fake_cuda_configure(int multiprocessors, int blocksPerUnit, int deviceCount) {
  units = multiprocessors;
  perUnit = blocksPerUnit;
  devices = deviceCount;
  launches = 0;
  dynamicAttribute = -1;
}
size_t fake_cuda_allocated(void) { return allocated; }
size_t fake_cuda_zeroed(void) { return zeroedBytes; }
void *fake_cuda_last_allocation(void) { return lastAllocation; }
unsigned fake_cuda_grid(void) { return launchedGrid; }
unsigned fake_cuda_block(void) { return launchedBlock; }
unsigned fake_cuda_shared(void) { return launchedShared; }
int fake_cuda_dynamic_attribute(void) { return dynamicAttribute; }
size_t fake_cuda_occupancy_shared(void) { return occupancyShared; }
const unsigned char *fake_cuda_kernarg(size_t *size) {
  *size = kernargSize;
  return kernarg;
}
const char *fake_cuda_kernel(void) { return loadedKernel; }
int fake_cuda_launches(void) { return launches; }
int fake_cuda_modules(void) { return moduleLoaded; }
int fake_cuda_retained(void) { return retained; }
int fake_cuda_calls(void) { return calls; }

int cuInit(unsigned flags) { (void)flags; ++calls; return devices > 0 ? 0 : 100; }
int cuDeviceGetCount(int *count) { ++calls; *count = devices; return 0; }
int cuDeviceGet(int *device, int ordinal) {
  ++calls;
  if (ordinal >= devices) return 101; /* CUDA_ERROR_INVALID_DEVICE */
  *device = ordinal;
  return 0;
}
int cuDevicePrimaryCtxRetain(void **context, int device) {
  ++calls;
  ++retained;
  *context = (void *)(uintptr_t)(0x100 + device);
  return 0;
}
int cuDevicePrimaryCtxRelease_v2(int device) { (void)device; ++calls; --retained; return 0; }
int cuCtxSetCurrent(void *context) { ++calls; current = (int)(uintptr_t)context; return 0; }
/* Peer access between devices (contexts 0x100 + device): allowed unless
 * fake_cuda_peer_access(0); a second enable refused as CUDA does. */
static int peerAccess = 1, peerEnabled[8][8];
void fake_cuda_peer_access(int allowed) {
  peerAccess = allowed;
  memset(peerEnabled, 0, sizeof peerEnabled);
}
int fake_cuda_peer_enabled(int device, int peer) { return peerEnabled[device][peer]; }
int cuDeviceCanAccessPeer(int *can, int device, int peer) {
  ++calls;
  if (device >= devices || peer >= devices) return 101;
  *can = peerAccess && device != peer;
  return 0;
}
int cuCtxEnablePeerAccess(void *peerContext, unsigned flags) {
  (void)flags;
  ++calls;
  const int device = current - 0x100, peer = (int)(uintptr_t)peerContext - 0x100;
  if (device < 0 || device >= devices || peer < 0 || peer >= devices || peer == device) return 1;
  if (peerEnabled[device][peer]) return 704; /* CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED */
  peerEnabled[device][peer] = 1;
  return 0;
}
int cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  ++calls;
  if (attribute != 16) return 1; /* CUDA_ERROR_INVALID_VALUE: not the SM count */
  *value = units;
  return 0;
}
int cuModuleLoadData(void **module, const void *image) {
  ++calls;
  if (memcmp(image, "\x7f" "ELF", 4) != 0) return 200; /* CUDA_ERROR_INVALID_IMAGE */
  ++moduleLoaded;
  *module = (void *)0x1;
  return 0;
}
int cuModuleUnload(void *module) { (void)module; ++calls; --moduleLoaded; return 0; }
int cuModuleGetFunction(void **function, void *module, const char *name) {
  (void)module;
  ++calls;
  strncpy(loadedKernel, name, sizeof loadedKernel - 1);
  *function = (void *)0x2;
  return 0;
}
int cuFuncSetAttribute(void *function, int attribute, int value) {
  (void)function;
  ++calls;
  if (attribute != 8) return 1; /* not CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
  if (value > 227 * 1024) return 1;
  dynamicAttribute = value;
  return 0;
}
int cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *f, int block, size_t shared) {
  (void)f; (void)block;
  ++calls;
  occupancyShared = shared;
  *blocks = perUnit;
  return 0;
}
int cuMemAlloc_v2(unsigned long long *pointer, size_t bytes) {
  ++calls;
  allocated = bytes;
  lastAllocation = malloc(bytes);
  memset(lastAllocation, 0xAB, bytes); /* so that zeroing shows */
  *pointer = (unsigned long long)(uintptr_t)lastAllocation;
  return 0;
}
int cuMemFree_v2(unsigned long long pointer) {
  ++calls;
  free((void *)(uintptr_t)pointer);
  allocated = 0;
  lastAllocation = 0;
  return 0;
}
int cuMemsetD8_v2(unsigned long long pointer, unsigned char value, size_t bytes) {
  ++calls;
  memset((void *)(uintptr_t)pointer, value, bytes);
  zeroedBytes = value == 0 ? bytes : 0;
  return 0;
}
int cuCtxSynchronize(void) { ++calls; return 0; }
int cuStreamSynchronize(void *stream) { (void)stream; ++calls; return 0; }
/* IPC handles in one process: a handle carries the pointer. */
/* The runtime's own name for the handle (DeviceRuntime.h), so that the
 * sanitizers see one function type on both sides. */
typedef struct monodc_ipc_bytes { char reserved[64]; } FakeIpcHandle;
int cuIpcGetMemHandle(FakeIpcHandle *handle, unsigned long long pointer) {
  ++calls;
  memset(handle, 0, sizeof *handle);
  memcpy(handle->reserved, &pointer, sizeof pointer);
  return 0;
}
int cuIpcOpenMemHandle_v2(unsigned long long *pointer, FakeIpcHandle handle, unsigned flags) {
  ++calls;
  if (flags != 1) return 1;
  memcpy(pointer, handle.reserved, sizeof *pointer);
  return 0;
}
int cuIpcCloseMemHandle(unsigned long long pointer) { (void)pointer; ++calls; return 0; }
/* Device memory is host memory here. */
int cuMemcpyDtoH_v2(void *to, unsigned long long from, size_t bytes) {
  ++calls;
  memcpy(to, (const void *)(uintptr_t)from, bytes);
  return 0;
}
int cuMemcpyHtoD_v2(unsigned long long to, const void *from, size_t bytes) {
  ++calls;
  memcpy((void *)(uintptr_t)to, from, bytes);
  return 0;
}
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
  (void)f; (void)gy; (void)gz; (void)by; (void)bz; (void)stream;
  ++calls;
  /* CU_LAUNCH_PARAM_BUFFER_POINTER 1, _SIZE 2, _END 0 (HIP's end is 3). */
  if (params || !extra || extra[0] != (void *)1 || extra[2] != (void *)2 || extra[4] != (void *)0)
    return 1;
  if (current == 0) return 201; /* CUDA_ERROR_INVALID_CONTEXT */
  kernargSize = *(size_t *)extra[3];
  if (kernargSize > sizeof kernarg) return 1;
  memcpy(kernarg, extra[1], kernargSize);
  launchedGrid = gx;
  launchedBlock = bx;
  launchedShared = shared;
  ++launches;
  return 0;
}
int cuGetErrorName(int code, const char **name) {
  switch (code) {
  case 100: *name = "CUDA_ERROR_NO_DEVICE"; return 0;
  case 101: *name = "CUDA_ERROR_INVALID_DEVICE"; return 0;
  case 200: *name = "CUDA_ERROR_INVALID_IMAGE"; return 0;
  case 201: *name = "CUDA_ERROR_INVALID_CONTEXT"; return 0;
  default: *name = "CUDA_ERROR_INVALID_VALUE"; return 0;
  }
}
