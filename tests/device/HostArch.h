// The device library's arch layer for the host, so CI (which has no GPU)
// runs the device library's own code. A block is MONO_BLOCK host threads
// (HostBlock below): thread ids are thread-local, mono_block_sync is a
// std::barrier across them, shared memory is whatever array the caller
// passes. Scalar functions also work from a single thread, whose id is 0.
// Atomics and fences act on one block only; they are not under test here.
#ifndef MONODC_TESTS_DEVICE_HOSTARCH_H
#define MONODC_TESTS_DEVICE_HOSTARCH_H

#include <atomic>
#include <barrier>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "monodc/formats/NumberFormats.h"

#define MONO_BLOCK 256
#define MONO_GRID 1
#define MONO_DEV inline

namespace host_arch {
inline thread_local int threadId = 0;
inline std::barrier<> *blockBarrier = nullptr;
} // namespace host_arch

MONO_DEV int mono_tid() { return host_arch::threadId; }
MONO_DEV int mono_cta() { return 0; }
MONO_DEV void mono_block_sync() {
  if (host_arch::blockBarrier)
    host_arch::blockBarrier->arrive_and_wait();
}
MONO_DEV float mono_as_float(mono_u32 bits) { return std::bit_cast<float>(bits); }
MONO_DEV mono_u32 mono_as_u32(float v) { return std::bit_cast<mono_u32>(v); }
MONO_DEV float mono_rint(float v) { return std::rint(v); }
MONO_DEV float mono_floor(float v) { return std::floor(v); }
MONO_DEV int mono_clz(mono_u32 v) { return v == 0 ? 32 : __builtin_clz(v); }
MONO_DEV float mono_fma(float a, float b, float c) { return std::fma(a, b, c); }
MONO_DEV float mono_sqrt(float v) { return std::sqrt(v); }
MONO_DEV float mono_exp2(float v) { return std::exp2(v); }
MONO_DEV float mono_log(float v) { return std::log(v); }
MONO_DEV float mono_exp(float v) { return std::exp(v); }
// CUDA's prmt (as arch_cuda.h), so the byte-permute paths run here too:
// byte k of the result is byte (s & 7) of hi:lo for selector nibble k, s;
// with s & 8 it is that byte's top bit repeated.
#define MONO_HAS_BYTE_PERM 1
MONO_DEV mono_u32 mono_byte_perm(mono_u32 lo, mono_u32 hi, mono_u32 selector) {
  const mono_u64 bytes = ((mono_u64)hi << 32) | lo;
  mono_u32 out = 0;
  for (int k = 0; k < 4; ++k) {
    const mono_u32 s = (selector >> (4 * k)) & 15u;
    mono_u32 b = (mono_u32)(bytes >> (8 * (s & 7u))) & 0xFFu;
    if (s & 8u)
      b = (b & 0x80u) ? 0xFFu : 0u;
    out |= b << (8 * k);
  }
  return out;
}
MONO_DEV mono_u32 mono_atomic_add_device(mono_u32 *p, mono_u32 v) {
  const mono_u32 old = *p;
  *p += v;
  return old;
}
MONO_DEV mono_u32 mono_atomic_add_relaxed_device(mono_u32 *p, mono_u32 v) {
  return mono_atomic_add_device(p, v);
}
MONO_DEV mono_u32 mono_load_acquire_device(const mono_u32 *p) {
  return std::atomic_ref<mono_u32>(*const_cast<mono_u32 *>(p)).load(std::memory_order_acquire);
}
MONO_DEV void mono_store_relaxed_device(mono_u32 *p, mono_u32 v) { *p = v; }
MONO_DEV void mono_store_release_device(mono_u32 *p, mono_u32 v) { *p = v; }
MONO_DEV mono_u64 mono_load_acquire_device_u64(const mono_u64 *p) { return *p; }
MONO_DEV void mono_store_relaxed_device_u64(mono_u64 *p, mono_u64 v) { *p = v; }
MONO_DEV void mono_store_release_device_u64(mono_u64 *p, mono_u64 v) { *p = v; }
MONO_DEV void mono_fence_release_device() {}
MONO_DEV void mono_fence_acquire_device() {}
MONO_DEV mono_u64 mono_load_acquire_system_u64(const mono_u64 *p) { return *p; }
MONO_DEV void mono_store_release_system_u64(mono_u64 *p, mono_u64 v) { *p = v; }
MONO_DEV void mono_fence_release_system() {}
MONO_DEV void mono_fence_acquire_system() {}
MONO_DEV void mono_poll_pause() { std::this_thread::yield(); }
MONO_DEV mono_u64 mono_clock_ns() {
  return static_cast<mono_u64>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}
// Atomic across the block's threads: every poll of a block that gives up
// races for the wait-fault record.
MONO_DEV mono_u32 mono_atomic_cas_device(mono_u32 *p, mono_u32 expected, mono_u32 desired) {
  std::atomic_ref<mono_u32>(*p).compare_exchange_strong(expected, desired);
  return expected;
}

// Asynchronous copies as CUDA's cp.async: a thread's copies happen only when
// it waits for their group, so a read that comes before its wait sees stale
// bytes; and both addresses must be aligned to the copy's size.
#define MONO_HAS_ASYNC_COPY 1
namespace host_arch {
struct PendingCopy {
  void *to;
  const void *from;
  int bytes;
};
inline thread_local std::vector<PendingCopy> openGroup;
inline thread_local std::deque<std::vector<PendingCopy>> committedGroups;
inline void queueCopy(void *to, const void *from, int bytes) {
  if (reinterpret_cast<uintptr_t>(to) % bytes || reinterpret_cast<uintptr_t>(from) % bytes)
    throw std::logic_error("misaligned asynchronous copy");
  openGroup.push_back({to, from, bytes});
}
} // namespace host_arch
MONO_DEV void mono_async_copy4(void *lds, const void *global) { host_arch::queueCopy(lds, global, 4); }
MONO_DEV void mono_async_copy8(void *lds, const void *global) { host_arch::queueCopy(lds, global, 8); }
MONO_DEV void mono_async_copy16(void *lds, const void *global) { host_arch::queueCopy(lds, global, 16); }
MONO_DEV void mono_async_commit() {
  host_arch::committedGroups.push_back(std::move(host_arch::openGroup));
  host_arch::openGroup.clear();
}
template <int N>
MONO_DEV void mono_async_wait() {
  while (host_arch::committedGroups.size() > size_t(N)) {
    for (const host_arch::PendingCopy &c : host_arch::committedGroups.front())
      std::memcpy(c.to, c.from, size_t(c.bytes));
    host_arch::committedGroups.pop_front();
  }
}

// Tensor cores (arch_cuda.h says which lane holds what): the 32 lanes of a
// warp meet, each reads the others' operands and computes its four sums of
// exact products (in double, rounded once), and they meet again before the
// exchange is reused.
namespace host_arch {
struct WarpExchange {
  std::barrier<> meet{32};
  mono_u32 a[32][4];
  mono_u32 b[32][2];
};
inline std::deque<WarpExchange> *warps = nullptr;
// Warp shuffles over MONO_HOST_WARP lanes: 32 as CUDA's (the default), or
// 64 as the AMD layer's waves (DeviceBlockReduceWave64Test).
#ifndef MONO_HOST_WARP
#define MONO_HOST_WARP 32
#endif
struct ShuffleExchange {
  std::barrier<> meet{MONO_HOST_WARP};
  float v[MONO_HOST_WARP];
};
inline std::deque<ShuffleExchange> *shuffles = nullptr;
/// The 16 bits at (row or column `index`, k) of an m16n8k16 operand register
/// array of `regsPerLane` registers a lane: lanes 4 index + t hold k 2t,
/// 2t + 1 in register `low` and k 8 + 2t, 9 + 2t in register `low` + `step`
/// (the lower k in the low half).
inline mono_u32 halfOperandBits(const mono_u32 *regs, int regsPerLane, int index, int k, int low,
                                int step) {
  const mono_u32 reg = regs[regsPerLane * (4 * index + (k % 8) / 2) + low + (k >= 8 ? step : 0)];
  return (reg >> (16 * (k % 2))) & 0xFFFFu;
}

inline double e4m3Value(mono_u32 code) {
  const int exponent = int(code >> 3) & 15, mantissa = int(code) & 7;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -9)
                                         : std::ldexp(8 + mantissa, exponent - 10);
  return (code & 0x80u) ? -magnitude : magnitude;
}
inline mono_u32 f16Bits(double v) {  // exact for every e4m3 value (f16 normals)
  if (v == 0)
    return std::signbit(v) ? 0x8000u : 0u;
  int exponent;
  const double fraction = std::frexp(std::fabs(v), &exponent);  // [0.5, 1)
  const mono_u32 mantissa = mono_u32(std::ldexp(fraction, 11)) & 0x3FFu;
  return (v < 0 ? 0x8000u : 0u) | (mono_u32(exponent - 1 + 15) << 10) | mantissa;
}
inline double f16Value(mono_u32 bits) {
  const int exponent = int(bits >> 10) & 31, mantissa = int(bits) & 0x3FF;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24)
                                         : std::ldexp(1024 + mantissa, exponent - 25);
  return (bits & 0x8000u) ? -magnitude : magnitude;
}
} // namespace host_arch
// e4m3 -> f16 pairs, exactly (arch_cuda.h).
#define MONO_HAS_E4M3_TO_F16 1
MONO_DEV void mono_e4m3x4_to_f16(mono_u32 w, mono_u32 &lo, mono_u32 &hi) {
  mono_u32 h[4];
  for (int i = 0; i < 4; ++i)
    h[i] = host_arch::f16Bits(host_arch::e4m3Value((w >> (8 * i)) & 0xFFu));
  lo = h[0] | (h[1] << 16);
  hi = h[2] | (h[3] << 16);
}
// bf16 pairs (arch_cuda.h): each half's value is exact in f32, so the max
// is f32's; the fma is exact in double for the operands the library gives
// it (products of two bf16 significands, sums of like magnitudes), then
// rounded once to bf16 by the formats library (nearest even).
namespace host_arch {
inline double bf16Value(mono_u32 bits) { return double(std::bit_cast<float>(bits << 16)); }
inline double bf16Half(mono_u32 pair, int h) { return bf16Value((pair >> (16 * h)) & 0xFFFFu); }
} // namespace host_arch
#define MONO_HAS_BF16X2 1
MONO_DEV mono_u32 mono_bf16x2_max(mono_u32 a, mono_u32 b) {
  mono_u32 d = 0;
  for (int h = 0; h < 2; ++h)
    d |= mono_u32(monodc::formats::bf16Bits(float(std::fmax(host_arch::bf16Half(a, h), host_arch::bf16Half(b, h)))))
         << (16 * h);
  return d;
}
MONO_DEV mono_u32 mono_bf16x2_fma(mono_u32 a, mono_u32 b, mono_u32 c) {
  mono_u32 d = 0;
  for (int h = 0; h < 2; ++h)
    d |= mono_u32(monodc::formats::bf16Bits(
             float(host_arch::bf16Half(a, h) * host_arch::bf16Half(b, h) + host_arch::bf16Half(c, h))))
         << (16 * h);
  return d;
}
// The f16 and bf16 instructions (m16n8k16, accumulating; arch_cuda.h says
// which lane holds what): d + the exact sum of the 16 products, rounded once.
namespace host_arch {
/// One of them, `value` giving an operand's value from its 16 bits: every
/// lane leaves its A and B registers in the exchange, then computes its
/// four results (row g + 8 (e / 2), column 2t + e % 2) as d[e] plus the
/// exact sum of the 16 products, rounded once.
template <class Value>
void halfMma(float (&d)[4], const mono_u32 (&a)[4], mono_u32 b0, mono_u32 b1, Value value) {
  const mono_u32 b[2] = {b0, b1};
  const int lane = threadId % 32;
  WarpExchange &x = (*warps)[threadId / 32];
  std::memcpy(x.a[lane], a, sizeof a);
  std::memcpy(x.b[lane], b, sizeof b);
  x.meet.arrive_and_wait();
  const int g = lane / 4, t = lane % 4;
  for (int e = 0; e < 4; ++e) {
    const int row = g + 8 * (e / 2), col = 2 * t + e % 2;
    double sum = d[e];
    for (int k = 0; k < 16; ++k)
      sum += value(halfOperandBits(&x.a[0][0], 4, row % 8, k, row / 8, 2)) *
             value(halfOperandBits(&x.b[0][0], 2, col, k, 0, 1));
    d[e] = float(sum);
  }
  x.meet.arrive_and_wait();
}
/// Lane l gets lane `from(l)`'s v, or keeps its own where from(l) is past
/// the warp; every lane of the warp takes part.
template <class From>
float shuffle(float v, From from) {
  const int lane = threadId % MONO_HOST_WARP;
  ShuffleExchange &x = (*shuffles)[threadId / MONO_HOST_WARP];
  x.v[lane] = v;
  x.meet.arrive_and_wait();
  const int source = from(lane);
  const float r = source < MONO_HOST_WARP ? x.v[source] : v;
  x.meet.arrive_and_wait();
  return r;
}
/// A shuffle down by w over the warp's host threads. Past the warp's end a
/// lane keeps its own value (CUDA's __shfl_down_sync) or, 64 wide, reads
/// the lane w wraps to (the AMD layer's ds_bpermute).
inline float shuffleDown(float v, int w) {
  return shuffle(v, [&](int lane) {
    return MONO_HOST_WARP == 64 ? (lane + w) % MONO_HOST_WARP : lane + w;
  });
}
} // namespace host_arch
#define MONO_HAS_WARP_SHUFFLE 1
#define MONO_WARP_SIZE MONO_HOST_WARP
MONO_DEV float mono_shfl_down_f32(float v, int w) { return host_arch::shuffleDown(v, w); }
MONO_DEV float mono_shfl_xor_f32(float v, int m) {
  return host_arch::shuffle(v, [&](int lane) { return lane ^ m; });
}
#define MONO_HAS_MMA_F16 1
MONO_DEV void mono_mma_f16(float (&d)[4], const mono_u32 (&a)[4], mono_u32 b0, mono_u32 b1) {
  host_arch::halfMma(d, a, b0, b1, host_arch::f16Value);
}
#define MONO_HAS_MMA_BF16 1
MONO_DEV void mono_mma_bf16(float (&d)[4], const mono_u32 (&a)[4], mono_u32 b0, mono_u32 b1) {
  host_arch::halfMma(d, a, b0, b1, host_arch::bf16Value);
}
// gfx950's matrix instructions (arch_gfx950.h) over 64-lane waves:
// the wave's lanes leave their operands in an exchange, meet, each computes
// its four results with the lane-exact model (HostMfma.h), and they meet
// again before the exchange is reused. Every lane of the wave must call it.
#if MONO_HOST_WARP == 64
#include "HostMfma.h"
namespace host_arch {
struct MfmaExchange {
  std::barrier<> meet{64};
  host_mfma::WaveOperands operands;
  host_mfma::Bf16WaveOperands bf16;
  host_mfma::Bf16x16WaveOperands bf16x16;
  host_mfma::Fp8WaveOperands fp8;
};
inline std::deque<MfmaExchange> *mfmas = nullptr;
} // namespace host_arch
#define MONO_HAS_SCALED_MFMA 1
template <int FA, int FB>
MONO_DEV void mono_mfma_scale_16x16x128(const mono_u32 (&a)[8], const mono_u32 (&b)[8],
                                        float (&c)[4], int scaleA, int scaleB) {
  static_assert((FA == 0 || FA == 4) && (FB == 0 || FB == 4), "formats: 0 e4m3, 4 e2m1");
  const int lane = host_arch::threadId % 64;
  host_arch::MfmaExchange &x = (*host_arch::mfmas)[host_arch::threadId / 64];
  std::memcpy(x.operands.a[lane], a, sizeof a);
  std::memcpy(x.operands.b[lane], b, sizeof b);
  std::memcpy(x.operands.c[lane], c, sizeof c);
  x.operands.scaleA[lane] = mono_u32(scaleA);
  x.operands.scaleB[lane] = mono_u32(scaleB);
  x.meet.arrive_and_wait();
  const std::array<float, 4> d = host_mfma::laneResult(x.operands, FA, FB, 0, 0, lane);
  x.meet.arrive_and_wait();
  for (int v = 0; v < 4; ++v)
    c[v] = d[size_t(v)];
}
namespace host_arch {
/// One 16x16 bf16 MFMA of K over the wave: this lane's K / 8 words of a and
/// b from `a`, `b`; c in place.
template <int K>
void bf16Instruction(host_mfma::Bf16Operands<K> &slot, const mono_u32 *a, const mono_u32 *b,
                     float (&c)[4]) {
  const int lane = threadId % 64;
  MfmaExchange &x = (*mfmas)[threadId / 64];
  std::memcpy(slot.a[lane], a, sizeof slot.a[lane]);
  std::memcpy(slot.b[lane], b, sizeof slot.b[lane]);
  std::memcpy(slot.c[lane], c, sizeof c);
  x.meet.arrive_and_wait();
  const std::array<float, 4> d = host_mfma::bf16LaneResult(slot, lane);
  x.meet.arrive_and_wait();
  for (int v = 0; v < 4; ++v)
    c[v] = d[size_t(v)];
}
} // namespace host_arch
#define MONO_HAS_MFMA_BF16 1
MONO_DEV void mono_mfma_bf16_16x16x32(const mono_u32 (&a)[4], const mono_u32 (&b)[4], float (&c)[4]) {
  host_arch::MfmaExchange &x = (*host_arch::mfmas)[host_arch::threadId / 64];
#if defined(MONO_HOST_GFX942)
  // gfx942's form of the step (arch_gfx950.h): the 16x16x16 instruction on
  // each lane's lower halves (a[0..1], b[0..1]), then on its upper halves.
  host_arch::bf16Instruction(x.bf16x16, a, b, c);
  host_arch::bf16Instruction(x.bf16x16, a + 2, b + 2, c);
#else
  host_arch::bf16Instruction(x.bf16, a, b, c);
#endif
}
#if defined(MONO_HOST_GFX942)
// gfx942's fp8 MFMA and the lane operations its GEMV block uses
// (arch_gfx950.h), C = 0.
#define MONO_HAS_FNUZ_FP8_MFMA 1
MONO_DEV void mono_mfma_fp8_16x16x32(const mono_u32 (&a)[2], const mono_u32 (&b)[2], float (&d)[4]) {
  const int lane = host_arch::threadId % 64;
  host_arch::MfmaExchange &x = (*host_arch::mfmas)[host_arch::threadId / 64];
  std::memcpy(x.fp8.a[lane], a, sizeof a);
  std::memcpy(x.fp8.b[lane], b, sizeof b);
  for (int v = 0; v < 4; ++v)
    x.fp8.c[lane][v] = 0.0f;
  x.meet.arrive_and_wait();
  const std::array<float, 4> r = host_mfma::fp8LaneResult(x.fp8, lane);
  x.meet.arrive_and_wait();
  for (int v = 0; v < 4; ++v)
    d[v] = r[size_t(v)];
}
MONO_DEV mono_u32 mono_lane_xor_u32(mono_u32 v, int m) {
  return mono_as_u32(host_arch::shuffle(mono_as_float(v), [&](int lane) { return lane ^ m; }));
}
MONO_DEV mono_u32 mono_lane_get_u32(mono_u32 v, int from) {
  return mono_as_u32(host_arch::shuffle(mono_as_float(v), [&](int) { return from; }));
}
MONO_DEV mono_u32 mono_perm_b32(mono_u32 hi, mono_u32 lo, mono_u32 selector) {
  const mono_u64 bytes = ((mono_u64)hi << 32) | lo;
  mono_u32 out = 0;
  for (int i = 0; i < 4; ++i) {
    const mono_u32 s = (selector >> (8 * i)) & 0xFFu;
    if (s > 7 && s != 12)
      throw std::logic_error("mono_perm_b32: selector byte not modelled");
    out |= (s == 12 ? 0u : (mono_u32)(bytes >> (8 * s)) & 0xFFu) << (8 * i);
  }
  return out;
}
MONO_DEV float mono_ldexp(float v, int e) { return std::ldexp(v, e); }
#endif
#endif
namespace host_arch {
/// Runs `body` as one block: MONO_BLOCK threads, each with its id, meeting
/// at every mono_block_sync (and a warp's 32 at every mono_mma_*, a wave's 64
/// at every mono_mfma_*).
inline void runBlock(const std::function<void()> &body) {
  std::barrier<> barrier(MONO_BLOCK);
  blockBarrier = &barrier;
  std::deque<WarpExchange> warpExchanges(MONO_BLOCK / 32);
  warps = &warpExchanges;
  std::deque<ShuffleExchange> shuffleExchanges(MONO_BLOCK / MONO_HOST_WARP);
  shuffles = &shuffleExchanges;
#if MONO_HOST_WARP == 64
  std::deque<MfmaExchange> mfmaExchanges(MONO_BLOCK / 64);
  mfmas = &mfmaExchanges;
#endif
  std::vector<std::thread> threads;
  threads.reserve(MONO_BLOCK);
  for (int t = 0; t < MONO_BLOCK; ++t)
    threads.emplace_back([t, &body] {
      threadId = t;
      body();
    });
  for (std::thread &thread : threads)
    thread.join();
  blockBarrier = nullptr;
  warps = nullptr;
  shuffles = nullptr;
#if MONO_HOST_WARP == 64
  mfmas = nullptr;
#endif
}
} // namespace host_arch

#endif
