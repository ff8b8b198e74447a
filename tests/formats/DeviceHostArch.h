// The device library's arch layer for the host: the building blocks that
// touch no thread, barrier or atomic, compiled by the host compiler so the
// device library's number formats can be tested exactly in CI, where no GPU
// runs. Thread ids and barriers stand for a single thread; the tests only
// call the scalar format functions.
#ifndef MONODC_TESTS_FORMATS_DEVICEHOSTARCH_H
#define MONODC_TESTS_FORMATS_DEVICEHOSTARCH_H

#include <bit>
#include <cmath>

#define MONO_BLOCK 256
#define MONO_GRID 1
#define MONO_DEV inline

MONO_DEV int mono_tid() { return 0; }
MONO_DEV int mono_cta() { return 0; }
MONO_DEV void mono_block_sync() {}
MONO_DEV float mono_as_float(mono_u32 bits) { return std::bit_cast<float>(bits); }
MONO_DEV mono_u32 mono_as_u32(float v) { return std::bit_cast<mono_u32>(v); }
MONO_DEV float mono_rint(float v) { return std::rint(v); }
MONO_DEV int mono_clz(mono_u32 v) { return v == 0 ? 32 : __builtin_clz(v); }
MONO_DEV float mono_fma(float a, float b, float c) { return std::fma(a, b, c); }
MONO_DEV float mono_sqrt(float v) { return std::sqrt(v); }
MONO_DEV float mono_exp2(float v) { return std::exp2(v); }
MONO_DEV float mono_log(float v) { return std::log(v); }
MONO_DEV float mono_exp(float v) { return std::exp(v); }
MONO_DEV mono_u32 mono_atomic_add_device(mono_u32 *p, mono_u32 v) {
  const mono_u32 old = *p;
  *p += v;
  return old;
}
MONO_DEV mono_u32 mono_load_acquire_device(const mono_u32 *p) { return *p; }
MONO_DEV void mono_store_relaxed_device(mono_u32 *p, mono_u32 v) { *p = v; }
MONO_DEV void mono_store_release_device(mono_u32 *p, mono_u32 v) { *p = v; }
MONO_DEV mono_u64 mono_load_acquire_device_u64(const mono_u64 *p) { return *p; }
MONO_DEV void mono_store_release_device_u64(mono_u64 *p, mono_u64 v) { *p = v; }
MONO_DEV void mono_fence_release_device() {}
MONO_DEV void mono_fence_acquire_device() {}
MONO_DEV mono_u64 mono_load_acquire_system_u64(const mono_u64 *p) { return *p; }
MONO_DEV void mono_store_release_system_u64(mono_u64 *p, mono_u64 v) { *p = v; }
MONO_DEV void mono_fence_release_system() {}
MONO_DEV void mono_fence_acquire_system() {}
MONO_DEV void mono_poll_pause() {}

#endif
