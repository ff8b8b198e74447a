// The yardsticks of a layer's floor, measured in the run that uses them:
// the read rate of a kernel that only streams memory (16-byte loads, the
// best of a sweep of grids and blocks), beside a device-to-device copy's
// rate (its reads plus its writes) and the HBM peak from the device's
// attributes. The floor divides the bytes a layer must read by the read
// rate; a copy's read half is not a read rate (it also spends the bus on
// its writes).
#ifndef MONODC_BENCH_GPU_READRATE_H
#define MONODC_BENCH_GPU_READRATE_H

#include "CudaSupport.h"

#include <cstdio>

namespace gpu {

struct Bandwidth {
  double readRate = 0;  ///< bytes a second, the read-only kernel's best
  int bestGrid = 0, bestBlock = 0;
  double copyRate = 0;  ///< bytes read plus written a second by cuMemcpyDtoD
  double hbmPeak = 0;   ///< bytes a second from clock and bus width, 0 if unknown
};

namespace detail {
// Four independent 16-byte loads a thread a round, folded by xor into one
// word that is stored only when it matches a value no input makes, so the
// loads stay live without a store per load.
inline constexpr const char *kReadSource = R"(
extern "C" __global__ void mono_read_only(const uint4 *__restrict__ p, unsigned long long n,
                                          unsigned *sink) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride);
    uint4 c = __ldcs(p + i + 2 * stride), d = __ldcs(p + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w;
    acc ^= c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride) {
    uint4 a = __ldcs(p + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x9E3779B9u) sink[0] = acc;
}
)";
} // namespace detail

/// Measures the three rates over `bytes` of device memory on `stream`.
inline Bandwidth measureBandwidth(const Device &device, CUstream stream,
                                  size_t bytes = size_t(4) << 30) {
  Bandwidth b;
  CUevent start, stop;
  check(cuEventCreate(&start, 0), "event");
  check(cuEventCreate(&stop, 0), "event");
  auto timeMs = [&](int reps, const std::function<void()> &body) {
    body();  // warm-up
    check(cuEventRecord(start, stream), "record");
    for (int i = 0; i < reps; ++i)
      body();
    check(cuEventRecord(stop, stream), "record");
    check(cuEventSynchronize(stop), "bandwidth");
    float ms = 0;
    check(cuEventElapsedTime(&ms, start, stop), "elapsed");
    return double(ms) / reps;
  };

  CUdeviceptr src = alloc(bytes), dst = alloc(bytes), sink = alloc(4);
  check(cuMemsetD8(src, 0x5A, bytes), "fill");
  CUfunction read = nullptr;
  check(cuModuleGetFunction(&read, compileModule(detail::kReadSource, "read_only.cu"),
                            "mono_read_only"),
        "read kernel");
  unsigned long long vectors = bytes / 16;
  void *args[] = {&src, &vectors, &sink};
  for (int perSm : {1, 2, 4, 8, 16})
    for (int block : {256, 512, 1024}) {
      const int grid = perSm * device.sms;
      const double ms = timeMs(10, [&] {
        check(cuLaunchKernel(read, grid, 1, 1, block, 1, 1, 0, stream, args, nullptr), "read");
      });
      const double rate = bytes / (ms * 1e-3);
      if (rate > b.readRate) {
        b.readRate = rate;
        b.bestGrid = grid;
        b.bestBlock = block;
      }
    }
  const double copyMs =
      timeMs(10, [&] { check(cuMemcpyDtoDAsync(dst, src, bytes, stream), "copy"); });
  b.copyRate = 2.0 * bytes / (copyMs * 1e-3);
  cuMemFree(src);
  cuMemFree(dst);
  cuMemFree(sink);

  int clockKhz = 0, busBits = 0;
  if (cuDeviceGetAttribute(&clockKhz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, device.device) ==
          CUDA_SUCCESS &&
      cuDeviceGetAttribute(&busBits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, device.device) ==
          CUDA_SUCCESS)
    b.hbmPeak = 2.0 * clockKhz * 1e3 * busBits / 8;  // double data rate
  cuEventDestroy(start);
  cuEventDestroy(stop);
  return b;
}

inline void printBandwidth(const Bandwidth &b) {
  std::printf("bandwidth: read-only kernel %.3f TB/s (grid %d x %d); device-to-device copy "
              "%.3f TB/s read + written (%.2fx its read half); HBM peak %.3f TB/s (read-only "
              "%.1f%% of it)\n",
              b.readRate / 1e12, b.bestGrid, b.bestBlock, b.copyRate / 1e12,
              b.readRate / (b.copyRate / 2), b.hbmPeak / 1e12,
              b.hbmPeak > 0 ? 100.0 * b.readRate / b.hbmPeak : 0.0);
}

} // namespace gpu

#endif
