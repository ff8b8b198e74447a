// monodc device library: the shape of a gemv_rows weight slice. The
// compiler's shared-memory planning (mono-prepare-emission) includes this
// file too, so the bytes it gives a weight ring are the bytes the device
// lays out. Constant expressions only: no device code, no prelude types.
#ifndef MONO_GEMV_SHAPE_H
#define MONO_GEMV_SHAPE_H

// nvrtc takes an unannotated function for a host one and refuses it; clang's
// HIP makes constexpr functions host and device by itself.
#if defined(__CUDACC__)
#define MONO_SHAPE __host__ __device__ constexpr
#else
#define MONO_SHAPE constexpr
#endif

// kind (WKIND): 0 e4m3 with 32x32 E8M0 block scales, 1 bf16, 2 f32, 3 MXFP4
// (e2m1 with E8M0 per 32, AITER's layouts). A chunk is 16 weights of a row.
MONO_SHAPE bool mono_gemv_scaled(int kind) { return kind == 0 || kind == 3; }
// 16-byte vectors a chunk takes in registers.
MONO_SHAPE int mono_gemv_vectors(int kind) { return mono_gemv_scaled(kind) ? 1 : (kind == 1 ? 2 : 4); }
// Chunks a streaming group: 4, except MXFP4's chunks of 8 bytes go 8 at a
// time (64 bytes in flight a thread, like 4 e4m3 chunks), and f32 chunks,
// four times an e4m3 one, 2 (double-buffered, 4 chunks x 17 registers).
MONO_SHAPE int mono_gemv_group(int kind) { return kind == 3 ? 8 : (mono_gemv_vectors(kind) >= 4 ? 2 : 4); }
// A chunk's weight bytes, and its ring slot: the bytes, then the aligned
// 4-byte word that holds its scale byte.
MONO_SHAPE int mono_gemv_chunk_bytes(int kind) { return kind == 3 ? 8 : 16 * mono_gemv_vectors(kind); }
MONO_SHAPE int mono_gemv_slot(int kind) { return mono_gemv_chunk_bytes(kind) + (mono_gemv_scaled(kind) ? 4 : 0); }

// A thread's slice stays in registers (read once, no streaming and no ring)
// when its chunks take at most 40 registers: 4 a vector, 1 for the scale.
MONO_SHAPE bool mono_gemv_resident(int chunksPerThread, int kind) {
  return chunksPerThread * (4 * mono_gemv_vectors(kind) + 1) <= 40;
}

// Groups a weight ring holds: the compiler sizes rings with it; the device
// derives it from the ring's bytes. (An enumerator: a constant variable
// that a translation unit does not use draws a warning from nvrtc.)
enum { mono_ring_stages = 4 };

#endif
