// Synthetic contents for a decode layer's launches (LayerBench, LayerStress):
// values in each region's format, filled on the GPU (one rank's routed
// experts alone are gigabytes at full size), and index inputs holding whole
// numbers inside their bounds.
#ifndef MONODC_BENCH_GPU_SYNTHETICLAYER_H
#define MONODC_BENCH_GPU_SYNTHETICLAYER_H

#include "CudaSupport.h"
#include "RegionCodec.h"

#include <algorithm>
#include <vector>

namespace gpu {

class SyntheticFill {
public:
  SyntheticFill() {
    check(cuModuleGetFunction(&kernel_, compileModule(kSource, "fill.cu"), "fill"), "fill");
  }

  /// `bytes` of values in `format` at p, each call from its own seed; on the
  /// null stream (synchronize the context before other streams use them).
  void values(CUdeviceptr p, size_t bytes, const std::string &format) {
    int kind = format == "e8m0" ? 1 : format == "bf16" ? 2 : format == "f32" ? 3 : 0;
    unsigned long long n = bytes;
    ++seed_;
    void *args[] = {&p, &n, &seed_, &kind};
    check(cuLaunchKernel(kernel_, 1024, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "fill");
  }

  /// Starts the sequence of seeds again, so that what a run fills after
  /// this does not depend on what it filled before.
  void restart() { seed_ = 1; }

  /// The last `rows` rows of a step are pad rows (slot_mapping and
  /// positions -1), as in a step padded to a captured width.
  void setPadRows(int rows) { padRows_ = rows; }

  /// A region's contents: an index input gets whole numbers inside its
  /// bound, anything else (weights too) values. Every real row's keys are
  /// whole: positions near the table's end (a full window, every compressed
  /// key at either ratio) and top-k rows in the first 1024 (written at any
  /// such position); a step's cache slots are distinct.
  void region(const Manifest &m, const Region &reg, CUdeviceptr p) {
    for (const monodc::runtime::IndexSpec &index : m.indexBounds)
      if (const int64_t bound = index.bound; index.name == reg.name) {
        std::vector<float> v(size_t(reg.rows * reg.cols));
        const bool marksPads = reg.name == "slot_mapping" || reg.name == "positions";
        const size_t firstPad = size_t(std::max<int64_t>(reg.rows - padRows_, 0)) * reg.cols;
        for (size_t i = 0; i < v.size(); ++i) {
          int64_t whole = int64_t(i * 7919) % bound;
          if (reg.name == "slot_mapping")
            whole = int64_t(i) % bound;
          else if (reg.name == "positions")
            whole = bound - 1 - int64_t(i) % bound;
          else if (reg.name == "index_topk")
            whole = int64_t(i * 7919) % std::min<int64_t>(bound, 1024);
          v[i] = marksPads && i >= firstPad ? -1.0f : float(whole);
        }
        const std::vector<uint8_t> bytes = encodeRegion(reg.format, v);
        check(cuMemcpyHtoD(p, bytes.data(), bytes.size()), "index input");
        return;
      }
    values(p, reg.bytes, reg.format);
  }

private:
  // From a hash of (seed, index): e4m3-like bytes below 2 in magnitude (also
  // for byte records and packed e2m1), E8M0 scales 2^-10..2^-6, bf16 and f32
  // uniform in [-1, 1).
  static constexpr const char *kSource = R"(
__device__ unsigned long long mix(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
extern "C" __global__ void fill(unsigned char *p, unsigned long long bytes,
                                unsigned long long seed, int kind) {
  const unsigned long long unit = kind == 2 ? 2 : (kind == 3 ? 4 : 1);
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
       i < bytes / unit; i += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned long long x = mix(seed * 0x100000001B3ull + i);
    float u = (float)(x >> 40) / 16777216.0f * 2.0f - 1.0f;
    if (kind == 0) {
      // Bit 6 clear: below 2 in magnitude as e4m3 (never NaN), as a bf16
      // high byte and as an E8M0 scale inside a byte record, so no record
      // decodes to a huge value that would make the attention non-finite.
      p[i] = (unsigned char)(x & 0xBF);
    } else if (kind == 1) {
      p[i] = (unsigned char)(117 + x % 5);
    } else if (kind == 2) {
      unsigned int bits = __float_as_uint(u);
      ((unsigned short *)p)[i] = (unsigned short)(bits >> 16);
    } else {
      ((float *)p)[i] = u;
    }
  }
}
)";
  CUfunction kernel_ = nullptr;
  int padRows_ = 0;
  unsigned long long seed_ = 1;
};

} // namespace gpu

#endif
