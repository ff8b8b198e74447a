// monodc device library: AMD arch layer (gfx950 first; gfx942/gfx90a share it).
// Thread ids, barriers, scoped atomics and bit casts through clang builtins,
// so the translation unit needs no ROCm header or device library.
#if defined(__AMDGCN__)
#define MONO_DEV __attribute__((device)) inline __attribute__((always_inline))
#define MONO_KERNEL extern "C" __attribute__((global)) \
  __attribute__((amdgpu_flat_work_group_size(MONO_BLOCK, MONO_BLOCK)))
#define MONO_SHARED __attribute__((shared))

// The thread id through an empty asm, so that each call is a value of its
// own. A fused kernel is one body of stages: what they derive from a plain
// id (lanes, rows, offsets) would be computed once at the kernel's entry,
// shared by every stage and live through all of them (about 60 registers a
// lane in K2). Derived afresh, a value lives only in its stage. The
// assumption gives the id's range, the block (the builtin's is 0..1023).
MONO_DEV int mono_tid() {
  int t = (int)__builtin_amdgcn_workitem_id_x();
  __asm__ volatile("" : "+v"(t));
  __builtin_assume(t >= 0 && t < MONO_BLOCK);
  return t;
}
MONO_DEV int mono_cta() { return (int)__builtin_amdgcn_workgroup_id_x(); }

MONO_DEV void mono_block_sync() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

MONO_DEV float mono_as_float(mono_u32 bits) { return __builtin_bit_cast(float, bits); }
MONO_DEV mono_u32 mono_as_u32(float v) { return __builtin_bit_cast(mono_u32, v); }
MONO_DEV float mono_rint(float v) { return __builtin_rintf(v); }
MONO_DEV float mono_floor(float v) { return __builtin_floorf(v); }
MONO_DEV int mono_clz(mono_u32 v) { return __builtin_clz(v); }
MONO_DEV float mono_fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
MONO_DEV float mono_sqrt(float v) { return __builtin_sqrtf(v); }
MONO_DEV float mono_exp2(float v) { return __builtin_exp2f(v); }
MONO_DEV float mono_log(float v) { return __builtin_logf(v); }
MONO_DEV float mono_exp(float v) { return __builtin_expf(v); }

// Lane l of a wave (64 lanes on every arch of this layer) gets lane l + w's
// v, by ds_bpermute (a byte address a lane; lanes past the wave read a
// wrapped lane, values the block reduction never uses). Every lane of the
// wave must take part.
#define MONO_HAS_WARP_SHUFFLE 1
#define MONO_WARP_SIZE 64
MONO_DEV int mono_lane() {
  return (int)__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}
MONO_DEV float mono_shfl_down_f32(float v, int w) {
  return mono_as_float((mono_u32)__builtin_amdgcn_ds_bpermute((mono_lane() + w) << 2, (int)mono_as_u32(v)));
}
// Lane l gets lane l ^ m's v (m below the wave's width).
MONO_DEV float mono_shfl_xor_f32(float v, int m) {
  return mono_as_float((mono_u32)__builtin_amdgcn_ds_bpermute((mono_lane() ^ m) << 2, (int)mono_as_u32(v)));
}
// Lane l gets lane `from`'s v (ds_bpermute reads `from` modulo 64).
MONO_DEV float mono_shfl_idx_f32(float v, int from) {
  return mono_as_float((mono_u32)__builtin_amdgcn_ds_bpermute(from << 2, (int)mono_as_u32(v)));
}

// Device scope inside a rank; system scope is for peer memory across ranks.
MONO_DEV mono_u32 mono_atomic_add_device(mono_u32 *p, mono_u32 v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_AGENT);
}
// Atomicity only: task claims (arch_cuda.h says why).
MONO_DEV mono_u32 mono_atomic_add_relaxed_device(mono_u32 *p, mono_u32 v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
MONO_DEV mono_u32 mono_load_acquire_device(const mono_u32 *p) {
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
}
MONO_DEV void mono_store_relaxed_device(mono_u32 *p, mono_u32 v) {
  __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
MONO_DEV void mono_store_release_device(mono_u32 *p, mono_u32 v) {
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
}
MONO_DEV mono_u64 mono_load_acquire_device_u64(const mono_u64 *p) {
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
}
MONO_DEV void mono_store_relaxed_device_u64(mono_u64 *p, mono_u64 v) {
  __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
MONO_DEV void mono_store_release_device_u64(mono_u64 *p, mono_u64 v) {
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
}
MONO_DEV void mono_fence_release_device() { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent"); }
MONO_DEV void mono_fence_acquire_device() { __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent"); }
MONO_DEV mono_u64 mono_load_acquire_system_u64(const mono_u64 *p) {
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
}
MONO_DEV void mono_store_release_system_u64(mono_u64 *p, mono_u64 v) {
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}
MONO_DEV void mono_fence_release_system() { __builtin_amdgcn_fence(__ATOMIC_RELEASE, ""); }
MONO_DEV void mono_fence_acquire_system() { __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, ""); }
MONO_DEV void mono_poll_pause() { __builtin_amdgcn_s_sleep(1); }
// s_memrealtime: the constant 100 MHz clock, 10 ns a tick. The empty asm
// keeps the read from moving across the barriers around what a stage timer
// or a poll's budget measures.
MONO_DEV mono_u64 mono_clock_ns() {
  __asm__ volatile("" ::: "memory");
  const mono_u64 t = __builtin_amdgcn_s_memrealtime();
  __asm__ volatile("" ::: "memory");
  return t * 10;
}
// Device scope; the one writer of the wait-fault record wins it.
MONO_DEV mono_u32 mono_atomic_cas_device(mono_u32 *p, mono_u32 expected, mono_u32 desired) {
  __hip_atomic_compare_exchange_strong(p, &expected, desired, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_AGENT);
  return expected;
}

#if defined(__gfx950__)
// gfx950 converts the two FP4 codes of a byte (low nibble first), or the two
// OCP e4m3 codes of a 16-bit half, to f32 in one instruction; with scale 1
// the values are exact.
typedef float mono_f32x2 __attribute__((ext_vector_type(2)));
#define MONO_HAS_E2M1_CVT 1
MONO_DEV void mono_e2m1x8_convert(mono_u32 w, float *v) {
  typedef mono_f32x2 f32x2;
  const f32x2 b0 = __builtin_amdgcn_cvt_scalef32_pk_f32_fp4(w, 1.0f, 0);
  const f32x2 b1 = __builtin_amdgcn_cvt_scalef32_pk_f32_fp4(w, 1.0f, 1);
  const f32x2 b2 = __builtin_amdgcn_cvt_scalef32_pk_f32_fp4(w, 1.0f, 2);
  const f32x2 b3 = __builtin_amdgcn_cvt_scalef32_pk_f32_fp4(w, 1.0f, 3);
  v[0] = b0.x; v[1] = b0.y; v[2] = b1.x; v[3] = b1.y;
  v[4] = b2.x; v[5] = b2.y; v[6] = b3.x; v[7] = b3.y;
}
#define MONO_HAS_E4M3_CVT 1
MONO_DEV void mono_e4m3x4_convert(mono_u32 w, float *v) {
  const mono_f32x2 lo = __builtin_amdgcn_cvt_scalef32_pk_f32_fp8(w, 1.0f, false);
  const mono_f32x2 hi = __builtin_amdgcn_cvt_scalef32_pk_f32_fp8(w, 1.0f, true);
  v[0] = lo.x; v[1] = lo.y; v[2] = hi.x; v[3] = hi.y;
}

// The scaled matrix instruction v_mfma_scale_f32_16x16x128_f8f6f4 (docs/
// gfx950-matrix-cores.md gives the lane layouts): c (a 16x16 f32 tile, lane l
// value v at row 4 (l / 16) + v, column l % 16) += A (16 x 128) . B (128 x
// 16). FA, FB are the operands' formats (0 e4m3, 4 e2m1; e2m1 uses only
// a[0..3], the rest should be 0). Byte 0 of scaleA (scaleB) of lane l is the
// E8M0 scale of A row (B column) l % 16, k block l / 16 (opsel 0). Every lane
// of the wave takes part. The scales must not both be the constant 0: LLVM
// then emits the unscaled form, which means 2^0, not 2^-127.
#define MONO_HAS_SCALED_MFMA 1
typedef int mono_i32x8 __attribute__((ext_vector_type(8)));
typedef float mono_f32x4 __attribute__((ext_vector_type(4)));
template <int FA, int FB>
MONO_DEV void mono_mfma_scale_16x16x128(const mono_u32 (&a)[8], const mono_u32 (&b)[8],
                                        float (&c)[4], int scaleA, int scaleB) {
  static_assert((FA == 0 || FA == 4) && (FB == 0 || FB == 4), "formats: 0 e4m3, 4 e2m1");
  const mono_i32x8 va = {(int)a[0], (int)a[1], (int)a[2], (int)a[3],
                         (int)a[4], (int)a[5], (int)a[6], (int)a[7]};
  const mono_i32x8 vb = {(int)b[0], (int)b[1], (int)b[2], (int)b[3],
                         (int)b[4], (int)b[5], (int)b[6], (int)b[7]};
  mono_f32x4 vc = {c[0], c[1], c[2], c[3]};
  vc = __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(va, vb, vc, FA, FB, 0, scaleA, 0, scaleB);
  c[0] = vc.x; c[1] = vc.y; c[2] = vc.z; c[3] = vc.w;
}

// v_mfma_f32_16x16x32_bf16: c (as above) += A (16 x 32) . B (32 x 16). Lane
// l holds A row (B column) l % 16 at k 8 (l / 16) .. + 7 as bf16 pairs, the
// lower k in the low half (docs/gfx950-matrix-cores.md). Every lane of the
// wave takes part.
#define MONO_HAS_MFMA_BF16 1
typedef __bf16 mono_bf16x8 __attribute__((ext_vector_type(8)));
typedef mono_u32 mono_u32x4v __attribute__((ext_vector_type(4)));
MONO_DEV void mono_mfma_bf16_16x16x32(const mono_u32 (&a)[4], const mono_u32 (&b)[4], float (&c)[4]) {
  const mono_u32x4v va = {a[0], a[1], a[2], a[3]}, vb = {b[0], b[1], b[2], b[3]};
  mono_f32x4 vc = {c[0], c[1], c[2], c[3]};
  vc = __builtin_amdgcn_mfma_f32_16x16x32_bf16(__builtin_bit_cast(mono_bf16x8, va),
                                               __builtin_bit_cast(mono_bf16x8, vb), vc, 0, 0, 0);
  c[0] = vc.x; c[1] = vc.y; c[2] = vc.z; c[3] = vc.w;
}
#elif defined(__gfx942__)
// gfx942 has no 16x16x32 bf16 form: a 32-k step is two v_mfma_f32_16x16x16_bf16,
// each lane giving the first the lower half of its 8 k (a[0..1], b[0..1]) and
// the second the upper half, so a lane loads the same 16 bytes as on gfx950.
// A and B pair the same lanes' halves, so each instruction sums 16 of the
// step's products (k % 8 < 4, then the rest) and rounds once
// (formats::bf16MfmaStep with k 16; docs/gfx950-matrix-cores.md).
#define MONO_HAS_MFMA_BF16 1
typedef float mono_f32x4 __attribute__((ext_vector_type(4)));
typedef short mono_i16x4 __attribute__((ext_vector_type(4)));
MONO_DEV void mono_mfma_bf16_16x16x32(const mono_u32 (&a)[4], const mono_u32 (&b)[4], float (&c)[4]) {
  mono_f32x4 vc = {c[0], c[1], c[2], c[3]};
  const mono_u32 alo[2] = {a[0], a[1]}, ahi[2] = {a[2], a[3]};
  const mono_u32 blo[2] = {b[0], b[1]}, bhi[2] = {b[2], b[3]};
  vc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(mono_i16x4, alo),
                                                 __builtin_bit_cast(mono_i16x4, blo), vc, 0, 0, 0);
  vc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(mono_i16x4, ahi),
                                                 __builtin_bit_cast(mono_i16x4, bhi), vc, 0, 0, 0);
  c[0] = vc.x; c[1] = vc.y; c[2] = vc.z; c[3] = vc.w;
}
// v_mfma_f32_16x16x32_fp8_fp8 with C = 0: d (lane l value v at row
// 4 (l / 16) + v, column l % 16) = A (16 x 32) . B (32 x 16). Byte p of lane
// l's two registers is A row (B column) l % 16, k 8 (l / 16) + p
// (docs/gfx950-matrix-cores.md "gfx942"). The codes are gfx942's fp8, FNUZ
// e4m3 (bias 8, 0x80 NaN), not OCP's. Every lane of the wave takes part.
#define MONO_HAS_FNUZ_FP8_MFMA 1
MONO_DEV void mono_mfma_fp8_16x16x32(const mono_u32 (&a)[2], const mono_u32 (&b)[2], float (&d)[4]) {
  const mono_f32x4 zero = {0.0f, 0.0f, 0.0f, 0.0f};
  const mono_f32x4 vd = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(
      (long)(((mono_u64)a[1] << 32) | a[0]), (long)(((mono_u64)b[1] << 32) | b[0]), zero, 0, 0, 0);
  d[0] = vd.x; d[1] = vd.y; d[2] = vd.z; d[3] = vd.w;
}
// Lane l gets lane l ^ m's v (ds_bpermute; every lane of the wave takes part).
MONO_DEV mono_u32 mono_lane_xor_u32(mono_u32 v, int m) {
  return (mono_u32)__builtin_amdgcn_ds_bpermute((mono_lane() ^ m) << 2, (int)v);
}
// Lane l gets lane `from`'s v (from in 0..63).
MONO_DEV mono_u32 mono_lane_get_u32(mono_u32 v, int from) {
  return (mono_u32)__builtin_amdgcn_ds_bpermute(from << 2, (int)v);
}
// v_perm_b32: byte i of the result is byte s of hi:lo (hi bytes 4..7) for
// selector byte i = s in 0..7, and 0 for s = 12.
MONO_DEV mono_u32 mono_perm_b32(mono_u32 hi, mono_u32 lo, mono_u32 selector) {
  return __builtin_amdgcn_perm(hi, lo, selector);
}
// v * 2^e, rounded once (v_ldexp_f32).
MONO_DEV float mono_ldexp(float v, int e) { return __builtin_ldexpf(v, e); }
// No scaled form: gemv_mfma.h's scaled path must not be instantiated here.
template <int FA, int FB>
MONO_DEV void mono_mfma_scale_16x16x128(const mono_u32 (&)[8], const mono_u32 (&)[8], float (&)[4],
                                        int, int) {
  static_assert(FA < 0, "gfx942 has no scaled MFMA (mono-lower-tiles never chooses it there)");
}
#endif
#endif
