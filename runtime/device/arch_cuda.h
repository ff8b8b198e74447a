// monodc device library: NVIDIA arch layer (sm_90 validation target, nvrtc).
// Warp 32; CUDA atomics with explicit scopes; __nanosleep in polls.
#if defined(__CUDA_ARCH__)
#define MONO_DEV __device__ __forceinline__
// One resident CTA per SM is all a persistent launch needs: every register is ours.
#define MONO_KERNEL extern "C" __global__ __launch_bounds__(MONO_BLOCK, 1)
#define MONO_SHARED __shared__
// A fused stage: a call of its own, so that ptxas allocates its registers
// as for the stage alone (HipEmitter.cpp).
#define MONO_STAGE static __device__ __noinline__

MONO_DEV int mono_tid() { return (int)threadIdx.x; }
MONO_DEV int mono_cta() { return (int)blockIdx.x; }
MONO_DEV void mono_block_sync() { __syncthreads(); }

MONO_DEV float mono_as_float(mono_u32 bits) { return __uint_as_float(bits); }
MONO_DEV mono_u32 mono_as_u32(float v) { return __float_as_uint(v); }
MONO_DEV float mono_rint(float v) { return rintf(v); }
MONO_DEV float mono_floor(float v) { return floorf(v); }
MONO_DEV int mono_clz(mono_u32 v) { return __clz((int)v); }
MONO_DEV float mono_fma(float a, float b, float c) { return fmaf(a, b, c); }
MONO_DEV float mono_sqrt(float v) { return sqrtf(v); }
MONO_DEV float mono_exp2(float v) { return exp2f(v); }
MONO_DEV float mono_log(float v) { return logf(v); }
MONO_DEV float mono_exp(float v) { return expf(v); }
// prmt: byte (s & 7) of hi:lo for each selector nibble s (s < 8 here).
#define MONO_HAS_BYTE_PERM 1
MONO_DEV mono_u32 mono_byte_perm(mono_u32 lo, mono_u32 hi, mono_u32 selector) {
  return __byte_perm(lo, hi, selector);
}

MONO_DEV mono_u32 mono_atomic_add_device(mono_u32 *p, mono_u32 v) {
  mono_u32 old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
// Atomicity only, no ordering: a dynamic stage's task claims, whose result
// orders nothing (tasks wait on their inputs' flags). An acq_rel add made
// thread 0 drain its stores (MEMBAR.ALL.GPU) and invalidate L1 (CCTL.IVALL)
// at every claim, with the block waiting at the barrier after it.
MONO_DEV mono_u32 mono_atomic_add_relaxed_device(mono_u32 *p, mono_u32 v) {
  mono_u32 old;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
MONO_DEV mono_u32 mono_load_acquire_device(const mono_u32 *p) {
  mono_u32 v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
MONO_DEV void mono_store_relaxed_device(mono_u32 *p, mono_u32 v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
MONO_DEV void mono_store_release_device(mono_u32 *p, mono_u32 v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
MONO_DEV mono_u64 mono_load_acquire_device_u64(const mono_u64 *p) {
  mono_u64 v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
MONO_DEV void mono_store_relaxed_device_u64(mono_u64 *p, mono_u64 v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
MONO_DEV void mono_store_release_device_u64(mono_u64 *p, mono_u64 v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
// bar.sync orders every thread's earlier memory operations before what
// thread 0 does after it, and a release by thread 0 is cumulative over them
// (the PTX memory model; CUDA's own grid barrier relies on the same): a
// publish needs no fence per thread, nor a wait one after its barrier.
#define MONO_BARRIER_IS_CUMULATIVE 1
MONO_DEV void mono_fence_release_device() { __threadfence(); }
MONO_DEV void mono_fence_acquire_device() { __threadfence(); }
MONO_DEV mono_u64 mono_load_acquire_system_u64(const mono_u64 *p) {
  mono_u64 v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
MONO_DEV void mono_store_release_system_u64(mono_u64 *p, mono_u64 v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
MONO_DEV void mono_fence_release_system() { __threadfence_system(); }
MONO_DEV void mono_fence_acquire_system() { __threadfence_system(); }
MONO_DEV void mono_poll_pause() { __nanosleep(64); }
// Nanoseconds of the global timer. "memory": the read does not move across
// the barriers around what a stage timer or a poll's budget measures.
MONO_DEV mono_u64 mono_clock_ns() {
  mono_u64 t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t) :: "memory");
  return t;
}
// Device scope; the one writer of the wait-fault record wins it.
MONO_DEV mono_u32 mono_atomic_cas_device(mono_u32 *p, mono_u32 expected, mono_u32 desired) {
  return atomicCAS(p, expected, desired);
}
// Asynchronous copies to shared memory (cp.async, sm_80 on): the weight
// rings of gemv_rows. Small copies go through L1 (.ca); 16 bytes bypass it.
#define MONO_HAS_ASYNC_COPY 1
MONO_DEV mono_u32 mono_shared_address(const void *p) {
  mono_u32 a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
MONO_DEV void mono_async_copy4(void *lds, const void *global) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(mono_shared_address(lds)), "l"(global) : "memory");
}
MONO_DEV void mono_async_copy8(void *lds, const void *global) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(mono_shared_address(lds)), "l"(global) : "memory");
}
MONO_DEV void mono_async_copy16(void *lds, const void *global) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(mono_shared_address(lds)), "l"(global) : "memory");
}
MONO_DEV void mono_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// This thread's copies of all but the newest N groups are complete and visible to it.
template <int N>
MONO_DEV void mono_async_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }
// e4m3 codes to f16 (sm_89 on), exactly: four codes -> two f16 pairs, the
// lower code in a pair's low half. sm_90 has no e4m3 matrix instruction in
// mma.sync (ptxas emulates one with these conversions of both operands and
// f16 instructions); gemv_mma.h converts the weights once a block itself
// and stages its tokens as f16.
#define MONO_HAS_E4M3_TO_F16 1
MONO_DEV void mono_e4m3x4_to_f16(mono_u32 w, mono_u32 &lo, mono_u32 &hi) {
  asm("{ .reg .b16 l, h;\n mov.b32 {l, h}, %2;\n cvt.rn.f16x2.e4m3x2 %0, l;\n"
      " cvt.rn.f16x2.e4m3x2 %1, h; }"
      : "=r"(lo), "=r"(hi) : "r"(w));
}
// One e4m3 code from f32 and back by sm_89's conversions, bit for bit
// generic.h's portable arithmetic (bench/gpu/E4m3CvtCheck.cpp compares
// every f32 and every code): satfinite rounds to nearest even and then
// saturates, which gives 448 for every magnitude the library clamps to 448;
// a NaN keeps the library's code, sign | 0x7F. About 3 instructions where
// the arithmetic takes 20; the quantizing epilogues run one a value, once
// a task, where a fused kernel waits for instruction fetch.
#define MONO_HAS_E4M3_SCALAR_CVT 1
MONO_DEV mono_u8 mono_e4m3_bits_cvt(float v) {
  unsigned short pair;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %1;" : "=h"(pair) : "f"(v));
  const mono_u8 nan = (mono_u8)(((mono_as_u32(v) >> 31) << 7) | 0x7Fu);
  return v != v ? nan : (mono_u8)(pair & 0xFFu);
}
MONO_DEV float mono_e4m3_value_cvt(mono_u8 c) {
  float f;
  asm("{ .reg .b16 p, lo, hi; .reg .b32 h2;\n mov.b16 p, %1;\n cvt.rn.f16x2.e4m3x2 h2, p;\n"
      " mov.b32 {lo, hi}, h2;\n cvt.f32.f16 %0, lo; }" : "=f"(f) : "h"((unsigned short)c));
  return f;
}
// Lane l of a warp gets lane l + w's v (lanes past the warp keep their
// own); every lane of the warp must take part.
#define MONO_HAS_WARP_SHUFFLE 1
#define MONO_WARP_SIZE 32
MONO_DEV float mono_shfl_down_f32(float v, int w) { return __shfl_down_sync(0xFFFFFFFFu, v, w); }
// Lane l gets lane l ^ m's v (m below the warp's width).
MONO_DEV float mono_shfl_xor_f32(float v, int m) { return __shfl_xor_sync(0xFFFFFFFFu, v, m); }
// Lane l gets lane `from`'s v (`from` taken modulo the warp's width).
MONO_DEV float mono_shfl_idx_f32(float v, int from) { return __shfl_sync(0xFFFFFFFFu, v, from); }
// Two bf16 values a register (the lower in the low half): max, and fma
// rounded once to nearest even; bf16 denormals are kept (no flush).
#define MONO_HAS_BF16X2 1
MONO_DEV mono_u32 mono_bf16x2_max(mono_u32 a, mono_u32 b) {
  mono_u32 d;
  asm("max.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
MONO_DEV mono_u32 mono_bf16x2_fma(mono_u32 a, mono_u32 b, mono_u32 c) {
  mono_u32 d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
// d += A . B over f16 or bf16 (m16n8k16), the products summed in f32 by the
// instruction: a register holds two values, the lower k in its low half. A
// lane (g, t) gives A's row g at k 2t, 2t + 1 (a0), row g + 8 (a1), row g
// at k 2t + 8, 2t + 9 (a2), row g + 8 there (a3); B's column g at k 2t,
// 2t + 1 (b0) and 2t + 8, 2t + 9 (b1); it gets d's rows g (d0, d1) and
// g + 8 (d2, d3), columns 2t and 2t + 1. The attention chunks of
// attend_mma.h take bf16, the GEMVs of gemv_mma.h f16.
#define MONO_MMA_M16N8K16(NAME, TYPE)                                                               \
  MONO_DEV void NAME(float (&d)[4], const mono_u32 (&a)[4], mono_u32 b0, mono_u32 b1) {            \
    asm("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE ".f32 {%0, %1, %2, %3}, "           \
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"                                             \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                            \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));                            \
  }
#define MONO_HAS_MMA_F16 1
MONO_MMA_M16N8K16(mono_mma_f16, "f16")
#define MONO_HAS_MMA_BF16 1
MONO_MMA_M16N8K16(mono_mma_bf16, "bf16")
// Launches whose shared memory passes CUDA's 48 KB of static shared memory
// take it as dynamic shared memory (the manifest's dynamic_shared_bytes).
#define MONO_DYNAMIC_LDS(name) extern __shared__ __align__(16) float name[]
#endif
