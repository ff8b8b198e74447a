// RUN: monodc-opt %s -split-input-file -mono-lower-tiles -mono-prepare-emission -verify-diagnostics | FileCheck %s
// The prepare pass records the shared memory a launch needs and refuses what
// the printer cannot serve.

// A gemv of k = 64 into 32 outputs needs (64 + 2 + 256 + 32) floats. An
// AMD launch keeps its stages in one body (no mono.stage_calls).
// CHECK: mono.launch @ok attributes {{{.*}}mono.lds_bytes = 1416 : i64
// CHECK-NOT: mono.stage_calls
mono.launch @ok attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @g weight : bf16 [32, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.constant 1.0 : !mono.tile<64, f32>
    %o = mono.gemv @g [%c0], %y : !mono.tile<64, f32> -> !mono.tile<32, f32>
  }
}

// -----

// expected-error @+1 {{'mono.launch' op unsupported arch 'gfx1100' (supported: gfx950, gfx942, gfx90a, sm_90)}}
mono.launch @bad attributes {arch = "gfx1100", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
}

// -----

mono.launch @big attributes {arch = "gfx950", grid = 4 : i64, block = 32 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    // expected-error @+1 {{'mono.constant' op tile of 4096 values needs 128 registers per thread at block 32 (limit 64)}}
    %y = mono.constant 1.0 : !mono.tile<4096, f32>
  }
}

// -----

// On sm_90 a gemv_rows of e4m3 weights runs on tensor cores when its rows
// make 16-row tiles (gemv_shape.h): 32 rows of 2048, two tokens (one tile;
// each tile's 64 blocks split over 4 warps), take a pass of 2 x (2 x 2048 +
// 64) bytes of f16 tokens, 64 blocks x 2 f32 scales, 8 warps x 16 x 2 f32
// partial sums and 2 x 32 f32 outputs: 10112 bytes. No ring. With 9
// tokens (two tiles), still one pass and one chunk: 9 x (2 x 2048 + 64) +
// 64 x 9 x 4 + 8 x 16 x 9 x 4 + 9 x 32 x 4 = 45504.
// An NVIDIA launch's fused stages are functions of their own.
// CHECK: mono.launch @mma attributes {{{.*}}mono.lds_bytes = 10112 : i64{{.*}}mono.stage_calls
// CHECK-NOT: mono.ring_bytes
mono.launch @mma attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<64, f32>
  }
}

// -----

// CHECK: mono.launch @mma9 attributes {{{.*}}mono.lds_bytes = 45504 : i64
// CHECK-NOT: mono.ring_bytes
mono.launch @mma9 attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 9 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @x input : f8E4M3FN [9, 2048]
  mono.region @xs input : f8E8M0FNU [9, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 9 : !mono.tile<288, f32>
  }
}

// -----

// MXFP4 takes the tensor cores too when its tiles pair over 32 rows: 32
// rows of 2048, two tokens, the same 10112 bytes as e4m3 above. No ring.
// CHECK: mono.launch @mma4 attributes {{{.*}}mono.lds_bytes = 10112 : i64
// CHECK-NOT: mono.ring_bytes
mono.launch @mma4 attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f4E2M1FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [256, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<64, f32>
  }
}

// -----

// On sm_90 an MXFP4 gemv_rows the tensor cores refuse (16 rows: no pair
// of 16-row tiles) whose weights stream (16 rows of 4096 MXFP4: 16 threads
// a row, 16 chunks each, 80 registers) streams them through a ring
// of shared memory (asynchronous copies): 4 stages x 8 chunks x 256 threads
// x (8 + 4) bytes = 98304, after its own 9280 bytes (1 token x 4096 bf16,
// 256 partials, 16 outputs). One whose weights stay in registers (16
// rows of 128) has none.
// CHECK: mono.launch @ring attributes {{{.*}}mono.lds_bytes = 107584 : i64
// CHECK: mono.gemv_rows @w {{.*}}mono.ring_bytes = 98304 : i64
// CHECK-NOT: mono.ring_bytes
mono.launch @ring attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : f4E2M1FN [16, 4096]
  mono.region @ws weight : f8E8M0FNU [256, 128]
  mono.region @x input : f8E4M3FN [1, 4096]
  mono.region @xs input : f8E8M0FNU [1, 128]
  mono.region @v weight : f4E2M1FN [16, 128]
  mono.region @vs weight : f8E8M0FNU [256, 8]
  mono.region @u input : f8E4M3FN [1, 128]
  mono.region @us input : f8E8M0FNU [1, 4]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 1 : !mono.tile<16, f32>
    %z = mono.gemv_rows @v scaled @vs[%c0], @u scaled @us[%c0] tokens 1 : !mono.tile<16, f32>
  }
}

// -----

// Two tokens: no ring (the loop of several tokens already waits on shared
// memory, and the ring made it slower); 2 x 2048 bf16 + 2 x 256 partials +
// 32 outputs (16 rows: not the tensor cores' shape for MXFP4).
// CHECK: mono.launch @tokens attributes {{{.*}}mono.lds_bytes = 10368 : i64
// CHECK-NOT: mono.ring_bytes
mono.launch @tokens attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f4E2M1FN [16, 2048]
  mono.region @ws weight : f8E8M0FNU [256, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<32, f32>
  }
}

// -----

// gfx950 has no such copies: no ring, only the gemv's own bytes (8 bf16
// rows are half an MFMA tile, so fma chains: 128 x 2 token bytes + 256
// partials + 8 outputs).
// CHECK: mono.launch @noring attributes {{{.*}}mono.lds_bytes = 1312 : i64
// CHECK-NOT: mono.ring_bytes
mono.launch @noring attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : bf16 [8, 128]
  mono.region @x input : bf16 [1, 128]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.gemv_rows @w[%c0], @x[%c0] tokens 1 : !mono.tile<8, f32>
  }
}

// -----

// An MXFP4 GEMV on gfx950 takes the scaled MFMA (gemv_shape.h): 32 rows are
// two tiles for four waves, so each tile's k is split over two waves, whose
// partial sums take 4 x 16 x 16 f32 (one token tile), then 32 outputs:
// 4224 bytes. No ring.
// CHECK: mono.launch @mfma attributes {{{.*}}mono.lds_bytes = 4224 : i64
// CHECK-NOT: mono.ring_bytes
mono.launch @mfma attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : f4E2M1FN [32, 128]
  mono.region @ws weight : f8E8M0FNU [256, 8]
  mono.region @x input : f8E4M3FN [1, 128]
  mono.region @xs input : f8E8M0FNU [1, 4]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 1 : !mono.tile<32, f32>
  }
}

// -----

// With one thread a row (256 outputs at block 256) sm_90 stages the token as
// f32: 64 x 4 + 256 partials + 256 outputs, 2304 bytes (2176 as bf16). The
// weight (4 chunks of bf16 a thread) stays in registers: no ring.
// CHECK: mono.launch @f32tokens attributes {{{.*}}mono.lds_bytes = 2304 : i64
mono.launch @f32tokens attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : bf16 [256, 64]
  mono.region @x input : bf16 [1, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.gemv_rows @w[%c0], @x[%c0] tokens 1 : !mono.tile<256, f32>
  }
}

// -----

// Attention of 2 heads of 128 dims over 64 keys at block 256 in f32 chains
// (gfx90a has no matrix form of the chunk): 16 threads a score (256 / (2
// heads x 8 keys)), so key and query rows are 128 + 16 words (one word
// between the 16-dim segments). 64 slots + (8 keys + 2 queries) x 144 + 2 x
// 8 x 16 partial scores + 3 x 2 running values = 1766 words.
// CHECK: mono.launch @attend attributes {{{.*}}mono.lds_bytes = 7064 : i64
mono.launch @attend attributes {arch = "gfx90a", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 256]
  mono.region @cache input : i8 [2, 6400]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
  }
}

// -----

// The same on sm_90 takes the tensor cores (attend_shape.h): keys and 8
// query rows of 64 + 4 words (64 x 68 + 8 x 68 = 4896), 2 dim parts of
// partial scores (2 x 64 keys x 8 columns = 1024), the weights' two halves
// (2 x 8 rows of 32 + 4 words = 576), 64 slots and 16 for max and sum:
// 6576 words.
// CHECK: mono.launch @attendmma attributes {{{.*}}mono.lds_bytes = 26304 : i64
mono.launch @attendmma attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 256]
  mono.region @cache input : i8 [2, 6400]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
  }
}

// -----

// The same on gfx950 takes the bf16 MFMA (attend_shape.h): the batch layout
// of the sm_90 case below with one dim part (4 waves, 4 key tiles) of
// partial scores (64 keys x 8 columns = 512): 4896 + 512 + 576 + 64 + 16 =
// 6064 words.
// CHECK: mono.launch @attendmfma attributes {{{.*}}mono.lds_bytes = 24256 : i64
mono.launch @attendmfma attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 256]
  mono.region @cache input : i8 [2, 6400]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
  }
}

// -----

// 96 dims are 6 tiles of 16, which the 8 warps cannot share evenly: sm_90
// keeps the f32 chunks (16 parts: rows of 96 + 16 words; 64 + 10 x 112 +
// 2 x 8 x 16 + 6 = 1446 words).
// CHECK: mono.launch @attend96 attributes {{{.*}}mono.lds_bytes = 5784 : i64
mono.launch @attend96 attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 192]
  mono.region @cache input : i8 [2, 4352]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] {heads = 2 : i64, headDim = 96 : i64, ropeDim = 32 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<192, f32>
  }
}

// -----

// A slice goes through shared memory whole: 32768 f32 are 128 KB, more than
// a gfx942 CTA has.
mono.launch @toomuch attributes {arch = "gfx942", grid = 4 : i64, block = 512 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %y = mono.constant 1.0 : !mono.tile<32768, f32>
    // expected-error @+1 {{'mono.slice' op needs 131072 bytes of shared memory; a CTA of gfx942 has at most 65536}}
    %z = mono.slice %y[0] : !mono.tile<32768, f32> -> !mono.tile<16, f32>
  }
}

// -----

// A slice of a small tile (at most 1024 values) may take the last of the
// three areas of small rearrangements: (2 x 1024 + 128) floats. A large one
// needs its input only: 2048 floats.
// CHECK: mono.launch @smallslice attributes {{{.*}}mono.lds_bytes = 8704 : i64
mono.launch @smallslice attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<128, f32>
    %up = mono.slice %x[16] {stride = 32 : i64, block = 16 : i64} : !mono.tile<128, f32> -> !mono.tile<64, f32>
  }
}

// -----

// A slice of at most a wave's values (64 on gfx950) to more than one goes by
// shuffles (mono-lower-tiles' via): no shared memory (the launch's minimum
// of 4 bytes).
// CHECK: mono.launch @shuffledslice attributes {{{.*}}mono.lds_bytes = 4 : i64
mono.launch @shuffledslice attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<64, f32>
    %up = mono.slice %x[16] {stride = 32 : i64, block = 16 : i64} : !mono.tile<64, f32> -> !mono.tile<32, f32>
  }
}

// -----

// CHECK: mono.launch @largeslice attributes {{{.*}}mono.lds_bytes = 8192 : i64
mono.launch @largeslice attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<2048, f32>
    %up = mono.slice %x[16] {stride = 32 : i64, block = 16 : i64} : !mono.tile<2048, f32> -> !mono.tile<1024, f32>
  }
}

// -----

// An axis-0 sum and expand whose columns are whole blocks (512 at block
// 256) keep each value in its thread and need no shared memory (4 bytes is
// every launch's least); with 128 columns the sum takes the last of the
// small areas: (2 x 1024 + 256) floats.
// CHECK: mono.launch @inthread attributes {{{.*}}mono.lds_bytes = 4 : i64
mono.launch @inthread attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<1024, f32>
    %sum = mono.reduce sum %x {shape = array<i64: 2, 512>, axis = 0 : i64} : !mono.tile<1024, f32> -> !mono.tile<512, f32>
    %back = mono.expand %sum {shape = array<i64: 2, 512>, axis = 0 : i64} : !mono.tile<512, f32> -> !mono.tile<1024, f32>
  }
}

// -----

// CHECK: mono.launch @acrossthreads attributes {{{.*}}mono.lds_bytes = 9216 : i64
mono.launch @acrossthreads attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<256, f32>
    %sum = mono.reduce sum %x {shape = array<i64: 2, 128>, axis = 0 : i64} : !mono.tile<256, f32> -> !mono.tile<128, f32>
  }
}

// -----

// A hand-over needs a claimed stage whose task ends with its publish.
mono.launch @badhandover attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @x input : f32 [1, 64]
  mono.region @y output : f32 [1, 64]
  // expected-error @+1 {{'mono.stage' op hands its next task over in a publish (mono.hand_over) but does not claim its tasks or does not end with mono.publish}}
  mono.stage @s tasks 1 attributes {mono.hand_over} {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @x[%c0, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%c0, %c0] : !mono.tile<64, f32>
  }
}

// -----

// On AMD an fma-chains gemv_rows stages whole passes of tokens, or a last
// pass few enough that the reads LLVM leaves in flight for its tokens (8
// registers a token and chunk) stay within 128 registers
// (gemvRowsChunkTokens): 32 rows of 576 e4m3 (k not in 128s: no scaled
// MFMA) keep 5 chunks a thread in registers, 40 registers a token, so a
// last pass holds at most 3. 12 tokens go as 6 + 6, 13 as 6 + 6 + 1, 15 as
// 7 + 7 + 1; 11 (8 + 3), 16 (8 + 8) and 4 keep the 8-token bound. With a
// runtime count no pass's tokens are known: 8. The shared memory is the
// largest gemv's, 16 tokens: 8 x 576 bf16, 8 x 256 partials, 16 x 32 outputs.
// CHECK: mono.launch @passes attributes {{{.*}}mono.lds_bytes = 19456 : i64
// CHECK: tokens 12 lowered to fma_chains {mono.chunk_tokens = 6 : i64}
// CHECK: tokens 13 lowered to fma_chains {mono.chunk_tokens = 6 : i64}
// CHECK: tokens 15 lowered to fma_chains {mono.chunk_tokens = 7 : i64}
// CHECK: tokens 11 lowered to fma_chains {mono.chunk_tokens = 8 : i64}
// CHECK: tokens 16 lowered to fma_chains {mono.chunk_tokens = 8 : i64}
// CHECK: tokens 4 lowered to fma_chains {mono.chunk_tokens = 4 : i64}
// CHECK: tokens 13 count %{{.*}} lowered to fma_chains {mono.chunk_tokens = 8 : i64}
mono.launch @passes attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 16 : i64} {
  mono.region @w weight : f8E4M3FN [32, 576]
  mono.region @ws weight : f8E8M0FNU [1, 18]
  mono.region @x input : f8E4M3FN [16, 576]
  mono.region @xs input : f8E8M0FNU [16, 18]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %n = arith.constant 5 : index
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 12 : !mono.tile<384, f32>
    %b = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 13 : !mono.tile<416, f32>
    %c = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 15 : !mono.tile<480, f32>
    %d = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 11 : !mono.tile<352, f32>
    %e = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 16 : !mono.tile<512, f32>
    %f = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 4 : !mono.tile<128, f32>
    %g = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 13 count %n : !mono.tile<416, f32>
  }
}

// -----

// sm_90 keeps the 8-token bound (its stages are functions of their own,
// register-allocated by ptxas): the same 13 tokens on fma chains take 8.
// CHECK: tokens 13 lowered to fma_chains {mono.chunk_tokens = 8 : i64}
mono.launch @passes_sm90 attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 16 : i64} {
  mono.region @w weight : f8E4M3FN [32, 576]
  mono.region @ws weight : f8E8M0FNU [1, 18]
  mono.region @x input : f8E4M3FN [16, 576]
  mono.region @xs input : f8E8M0FNU [16, 18]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %b = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 13 lowered to fma_chains : !mono.tile<416, f32>
  }
}
