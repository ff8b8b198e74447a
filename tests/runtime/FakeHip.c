/* A stand-in for libamdhip64 with the functions the launcher calls: it lets
 * the launcher's device-independent logic (loading, occupancy refusal, buffer
 * allocation and zeroing, argument packing) run without a GPU. It records
 * what it was asked; fake_hip_* read and set that state. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int units = 4, perUnit = 2, devices = 1;
static size_t allocated, zeroedBytes;
static void *lastAllocation;
static unsigned launchedGrid, launchedBlock;
static unsigned char kernarg[4096];
static size_t kernargSize;
static char loadedKernel[256];
static int moduleLoaded, launches;
static int peerAccess = 1, peerEnabled[8][8], current;
/* The kernels' names by function handle, and each launch since
 * fake_hip_configure (up to kLogged): its kernel and arguments. */
enum { kFunctions = 16, kLogged = 16 };
static char functionNames[kFunctions][256];
static int functions;
static struct { const char *kernel; unsigned char kernarg[1024]; size_t size; } logged[kLogged];

void fake_hip_configure(int computeUnits, int blocksPerUnit, int deviceCount) {
  units = computeUnits;
  perUnit = blocksPerUnit;
  devices = deviceCount;
  launches = 0;
}
size_t fake_hip_allocated(void) { return allocated; }
size_t fake_hip_zeroed(void) { return zeroedBytes; }
void *fake_hip_last_allocation(void) { return lastAllocation; }
unsigned fake_hip_grid(void) { return launchedGrid; }
unsigned fake_hip_block(void) { return launchedBlock; }
const unsigned char *fake_hip_kernarg(size_t *size) {
  *size = kernargSize;
  return kernarg;
}
const char *fake_hip_kernel(void) { return loadedKernel; }
int fake_hip_launches(void) { return launches; }
int fake_hip_modules(void) { return moduleLoaded; }
const char *fake_hip_launch_kernel(int launch) {
  return launch >= 0 && launch < launches && launch < kLogged ? logged[launch].kernel : "";
}
const unsigned char *fake_hip_launch_kernarg(int launch, size_t *size) {
  int known = launch >= 0 && launch < launches && launch < kLogged;
  *size = known ? logged[launch].size : 0;
  return known ? logged[launch].kernarg : 0;
}

int hipInit(unsigned flags) { (void)flags; return devices > 0 ? 0 : 100; }
int hipGetDeviceCount(int *count) { *count = devices; return 0; }
int hipSetDevice(int device) {
  if (device >= devices) return 101;
  current = device;
  return 0;
}
int hipDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  if (attribute != 63) return 1; /* hipErrorInvalidValue: not the CU count */
  *value = units;
  return 0;
}
int hipModuleLoadData(void **module, const void *image) {
  if (memcmp(image, "\x7f" "ELF", 4) != 0) return 200; /* hipErrorInvalidImage */
  ++moduleLoaded;
  *module = (void *)0x1;
  return 0;
}
int hipModuleUnload(void *module) { (void)module; --moduleLoaded; return 0; }
int hipModuleGetFunction(void **function, void *module, const char *name) {
  (void)module;
  strncpy(loadedKernel, name, sizeof loadedKernel - 1);
  int index = 0;
  while (index < functions && strcmp(functionNames[index], name) != 0)
    ++index;
  if (index == kFunctions) return 1;
  if (index == functions)
    strncpy(functionNames[functions++], name, sizeof functionNames[0] - 1);
  *function = (void *)(uintptr_t)(0x100 + index);
  return 0;
}
int hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *f, int block,
                                                       size_t shared) {
  (void)f; (void)block; (void)shared;
  *blocks = perUnit;
  return 0;
}
int hipMalloc(void **pointer, size_t bytes) {
  allocated = bytes;
  lastAllocation = *pointer = malloc(bytes);
  memset(lastAllocation, 0xAB, bytes); /* so that zeroing shows */
  return 0;
}
int hipFree(void *pointer) { free(pointer); allocated = 0; lastAllocation = 0; return 0; }
int hipMemset(void *pointer, int value, size_t bytes) {
  memset(pointer, value, bytes);
  zeroedBytes = value == 0 ? bytes : 0;
  return 0;
}
int hipDeviceSynchronize(void) { return 0; }
int hipStreamSynchronize(void *stream) { (void)stream; return 0; }
/* Fine-grained memory and IPC handles: one process, host memory, so a
 * handle carries the pointer and opening it gives the pointer back. */
int hipExtMallocWithFlags(void **pointer, size_t bytes, unsigned flags) {
  if (flags != 1) return 1;
  return hipMalloc(pointer, bytes);
}
/* The runtime's own name for the handle (DeviceRuntime.h), so that the
 * sanitizers see one function type on both sides. */
typedef struct monodc_ipc_bytes { char reserved[64]; } FakeIpcHandle;
static int opened;
int hipIpcGetMemHandle(FakeIpcHandle *handle, void *pointer) {
  memset(handle, 0, sizeof *handle);
  memcpy(handle->reserved, &pointer, sizeof pointer);
  return 0;
}
int hipIpcOpenMemHandle(void **pointer, FakeIpcHandle handle, unsigned flags) {
  if (flags != 1) return 1;
  memcpy(pointer, handle.reserved, sizeof *pointer);
  ++opened;
  return *pointer ? 0 : 1;
}
int hipIpcCloseMemHandle(void *pointer) { (void)pointer; --opened; return 0; }
/* Peer access between devices: allowed unless fake_hip_peer_access(0);
 * each enabled pair counted, a second enable refused as HIP does. */
void fake_hip_peer_access(int allowed) {
  peerAccess = allowed;
  memset(peerEnabled, 0, sizeof peerEnabled);
}
int fake_hip_peer_enabled(int device, int peer) { return peerEnabled[device][peer]; }
int hipDeviceCanAccessPeer(int *can, int device, int peer) {
  if (device >= devices || peer >= devices) return 101;
  *can = peerAccess && device != peer;
  return 0;
}
int hipDeviceEnablePeerAccess(int peer, unsigned flags) {
  (void)flags;
  if (peer >= devices || peer == current) return 101;
  if (peerEnabled[current][peer]) return 704; /* hipErrorPeerAccessAlreadyEnabled */
  peerEnabled[current][peer] = 1;
  return 0;
}
int fake_hip_open_handles(void) { return opened; }
/* Device memory is host memory here: either direction is a memcpy. */
int hipMemcpy(void *to, const void *from, size_t bytes, int kind) {
  if (kind != 1 && kind != 2) return 1;
  memcpy(to, from, bytes);
  return 0;
}
int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned shared, void *stream, void **params,
                          void **extra) {
  (void)gy; (void)gz; (void)by; (void)bz; (void)shared; (void)stream;
  if (params || !extra || extra[0] != (void *)1 || extra[2] != (void *)2 || extra[4] != (void *)3)
    return 1;
  kernargSize = *(size_t *)extra[3];
  if (kernargSize > sizeof kernarg) return 1;
  memcpy(kernarg, extra[1], kernargSize);
  launchedGrid = gx;
  launchedBlock = bx;
  if (launches < kLogged && kernargSize <= sizeof logged[0].kernarg) {
    uintptr_t index = (uintptr_t)f - 0x100;
    logged[launches].kernel = index < (uintptr_t)functions ? functionNames[index] : "";
    memcpy(logged[launches].kernarg, kernarg, kernargSize);
    logged[launches].size = kernargSize;
  }
  ++launches;
  return 0;
}
const char *hipGetErrorString(int code) {
  switch (code) {
  case 100: return "hipErrorNoDevice";
  case 101: return "hipErrorInvalidDevice";
  case 200: return "hipErrorInvalidImage";
  default: return "hipErrorInvalidValue";
  }
}
