// RUN: monodc-opt %s -split-input-file -mono-lower-tiles -verify-diagnostics | FileCheck %s

// gfx950 has the 16x16x128 scaled MFMA: e4m3 weights with 32x32 scales
// over MXFP8 tokens, 32 rows (two 16-row tiles) of k 2048 (16 steps of 128),
// take it; so do MXFP4 weights. bf16 weights over bf16 tokens are not MX
// data: they take the 16x16x32 bf16 MFMA.
// CHECK-LABEL: mono.launch @amd
// CHECK: mono.gemv_rows @w scaled @ws[{{.*}}] tokens 2 lowered to scaled_mfma
// CHECK: mono.gemv_rows @w4 scaled @ws4[{{.*}}] tokens 2 lowered to scaled_mfma
// CHECK: mono.gemv_rows @wb[{{.*}}], @xb[{{.*}}] tokens 2 lowered to bf16_mfma
mono.launch @amd attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @w4 weight : f4E2M1FN [32, 2048]
  mono.region @ws4 weight : f8E8M0FNU [256, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.region @wb weight : bf16 [32, 2048]
  mono.region @xb input : bf16 [2, 2048]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<64, f32>
    %b = mono.gemv_rows @w4 scaled @ws4[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<64, f32>
    %c = mono.gemv_rows @wb[%c0], @xb[%c0] tokens 2 : !mono.tile<64, f32>
  }
}

// -----

// 8 rows are half a tile and k 64 half a step: fma chains on gfx950 too.
// CHECK-LABEL: mono.launch @partial
// CHECK: tokens 1 lowered to fma_chains
// CHECK: tokens 1 lowered to fma_chains
mono.launch @partial attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : f8E4M3FN [8, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @k weight : f8E4M3FN [32, 64]
  mono.region @ks weight : f8E8M0FNU [1, 2]
  mono.region @x input : f8E4M3FN [1, 2048]
  mono.region @xs input : f8E8M0FNU [1, 64]
  mono.region @y input : f8E4M3FN [1, 64]
  mono.region @ys input : f8E8M0FNU [1, 2]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 1 : !mono.tile<8, f32>
    %b = mono.gemv_rows @k scaled @ks[%c0], @y scaled @ys[%c0] tokens 1 : !mono.tile<32, f32>
  }
}

// -----

// gfx942 has no scaled MFMA but the 16x16x32 FNUZ fp8 one: the e4m3 and
// MXFP4 GEMVs take it with the scales in software (fp8_mfma); half a tile
// (8 rows) and half a step (k 64) stay on fma chains. sm_90 has no MFMA:
// the warp mma where its rule chooses it. The bf16 GEMV takes gfx942's
// 16x16x16 bf16 MFMA (two a 32-k step).
// CHECK-LABEL: mono.launch @cdna3
// CHECK: mono.gemv_rows @w scaled @ws[{{.*}}] tokens 2 lowered to fp8_mfma
// CHECK: mono.gemv_rows @w4 scaled @ws4[{{.*}}] tokens 2 lowered to fp8_mfma
// CHECK: mono.gemv_rows @w8 scaled {{.*}} lowered to fma_chains
// CHECK: mono.gemv_rows @k scaled {{.*}} lowered to fma_chains
// CHECK: mono.gemv_rows @wb[{{.*}}], @xb[{{.*}}] tokens 2 lowered to bf16_mfma
// CHECK-LABEL: mono.launch @hopper
// CHECK: lowered to warp_mma
mono.launch @cdna3 attributes {arch = "gfx942", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @w4 weight : f4E2M1FN [32, 2048]
  mono.region @ws4 weight : f8E8M0FNU [256, 64]
  mono.region @w8 weight : f8E4M3FN [8, 2048]
  mono.region @k weight : f8E4M3FN [32, 64]
  mono.region @ks weight : f8E8M0FNU [1, 2]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.region @y input : f8E4M3FN [2, 64]
  mono.region @ys input : f8E8M0FNU [2, 2]
  mono.region @wb weight : bf16 [32, 2048]
  mono.region @xb input : bf16 [2, 2048]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<64, f32>
    %b = mono.gemv_rows @w4 scaled @ws4[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<64, f32>
    %d = mono.gemv_rows @w8 scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<16, f32>
    %e = mono.gemv_rows @k scaled @ks[%c0], @y scaled @ys[%c0] tokens 2 : !mono.tile<64, f32>
    %c = mono.gemv_rows @wb[%c0], @xb[%c0] tokens 2 : !mono.tile<64, f32>
  }
}
mono.launch @hopper attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<64, f32>
  }
}

// -----

// Fma chains stage their tokens as f32 words on NVIDIA with one thread a
// row (256 rows over a block of 256); with several threads a row (128
// rows), and on gfx950, as bf16 halves. A preset fma_chains is kept.
// CHECK-LABEL: mono.launch @hopperchains
// CHECK: mono.gemv_rows @w256{{.*}} lowered to fma_chains_f32
// CHECK: mono.gemv_rows @w128{{.*}} lowered to fma_chains :
// CHECK: mono.gemv_rows @w256{{.*}} lowered to fma_chains :
// CHECK-LABEL: mono.launch @amdchains
// CHECK: mono.gemv_rows @w256{{.*}} lowered to fma_chains :
mono.launch @hopperchains attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w256 weight : f32 [256, 512]
  mono.region @w128 weight : f32 [128, 512]
  mono.region @x input : f32 [1, 512]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.gemv_rows @w256[%c0], @x[%c0] tokens 1 : !mono.tile<256, f32>
    %b = mono.gemv_rows @w128[%c0], @x[%c0] tokens 1 : !mono.tile<128, f32>
    %c = mono.gemv_rows @w256[%c0], @x[%c0] tokens 1 lowered to fma_chains : !mono.tile<256, f32>
  }
}
mono.launch @amdchains attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w256 weight : f32 [256, 512]
  mono.region @x input : f32 [1, 512]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.gemv_rows @w256[%c0], @x[%c0] tokens 1 : !mono.tile<256, f32>
  }
}

// -----

// A lowering already set is kept where the target runs it, refused where
// it does not.
// CHECK-LABEL: mono.launch @kept
// CHECK: lowered to fma_chains
mono.launch @kept attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 lowered to fma_chains : !mono.tile<64, f32>
  }
}

// -----

mono.launch @nompma attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op lowered to scaled_mfma: sm_90 has no scaled matrix instruction}}
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 lowered to scaled_mfma : !mono.tile<64, f32>
  }
}

// -----

mono.launch @notmx attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @wb weight : bf16 [32, 2048]
  mono.region @xb input : bf16 [2, 2048]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op lowered to scaled_mfma: scaled MFMA needs MX data on both sides}}
    %a = mono.gemv_rows @wb[%c0], @xb[%c0] tokens 2 lowered to scaled_mfma : !mono.tile<64, f32>
  }
}

// -----

mono.launch @nowarpmma attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op lowered to warp_mma: the 16x8x16 f16 warp mma path does not serve this GEMV on gfx950}}
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 lowered to warp_mma : !mono.tile<64, f32>
  }
}

// -----

// The attention chunk: gfx950 takes the 16x16x32 bf16 MFMA, gfx942 the
// same steps on its 16x16x16 form (two a step), sm_90 the 16x8x16 bf16 warp
// mma, gfx90a (none of them) f32 chains; 48 keys are not whole 32-key steps
// of the MFMA, so gfx950 keeps f32 chains for them.
// CHECK-LABEL: mono.launch @attend950
// CHECK: mono.attend_chunk @q[{{.*}}], @cache[{{.*}}] lowered to bf16_mfma
// CHECK: mono.attend_chunk @q[{{.*}}], @cache[{{.*}}] lowered to fma_chains
// CHECK-LABEL: mono.launch @attend90
// CHECK: lowered to warp_mma
// CHECK-LABEL: mono.launch @attend942
// CHECK: lowered to bf16_mfma
// CHECK-LABEL: mono.launch @attend90a
// CHECK: lowered to fma_chains
mono.launch @attend950 attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 256]
  mono.region @cache input : i8 [2, 6400]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
    %s48 = mono.load @slots[%t, %c0] : !mono.tile<48, f32>
    %m2, %l2, %p2 = mono.attend_chunk @q[%t, %c0], @cache[%s48] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<48, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
  }
}
mono.launch @attend90 attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
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
mono.launch @attend942 attributes {arch = "gfx942", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
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
mono.launch @attend90a attributes {arch = "gfx90a", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
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

// A lowering set by hand is kept only where the target can run it.
mono.launch @attendnomfma attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 256]
  mono.region @cache input : i8 [2, 6400]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.attend_chunk' op lowered to bf16_mfma: sm_90 has no 16x16 bf16 MFMA (16x16x32 or 16x16x16)}}
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] lowered to bf16_mfma {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
  }
}

// -----

mono.launch @attendnomfma90a attributes {arch = "gfx90a", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 256]
  mono.region @cache input : i8 [2, 6400]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.attend_chunk' op lowered to bf16_mfma: gfx90a has no 16x16 bf16 MFMA (16x16x32 or 16x16x16)}}
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] lowered to bf16_mfma {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
  }
}

// -----

mono.launch @attendtoomanyheads attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 1280]
  mono.region @cache input : i8 [2, 6400]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.attend_chunk' op lowered to bf16_mfma: the chunk's shape does not fit it: at most 8 heads, keys a multiple of 32}}
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] lowered to bf16_mfma {heads = 10 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<10, f32>, !mono.tile<10, f32>, !mono.tile<1280, f32>
  }
}

// -----

// bf16 weights over f32 tokens are no bf16 MFMA operands.
mono.launch @nobf16mfma attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @wb weight : bf16 [32, 2048]
  mono.region @x input : f32 [2, 2048]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op lowered to bf16_mfma: the bf16 MFMA needs bf16 weights over bf16 tokens without scales}}
    %a = mono.gemv_rows @wb[%c0], @x[%c0] tokens 2 lowered to bf16_mfma : !mono.tile<64, f32>
  }
}

// -----

mono.launch @nobf16mfma90 attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @wb weight : bf16 [32, 2048]
  mono.region @xb input : bf16 [2, 2048]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op lowered to bf16_mfma: sm_90 has no 16x16 bf16 MFMA (16x16x32 or 16x16x16)}}
    %a = mono.gemv_rows @wb[%c0], @xb[%c0] tokens 2 lowered to bf16_mfma : !mono.tile<64, f32>
  }
}

// -----

// DSV41's chunk (8 heads of 512 dims, 64 keys) lays out 79552 bytes of
// shared memory in the MFMA form: gfx950's CTA holds it, gfx942's 64 KB do
// not, so gfx942 keeps f32 chains, and a preset MFMA form is refused.
// CHECK-LABEL: mono.launch @bigchunk950
// CHECK: lowered to bf16_mfma
// CHECK-LABEL: mono.launch @bigchunk942
// CHECK: lowered to fma_chains
mono.launch @bigchunk950 attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 4096]
  mono.region @cache input : i8 [2, 18688]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] {heads = 8 : i64, headDim = 512 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<8, f32>, !mono.tile<8, f32>, !mono.tile<4096, f32>
  }
}
mono.launch @bigchunk942 attributes {arch = "gfx942", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 4096]
  mono.region @cache input : i8 [2, 18688]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] {heads = 8 : i64, headDim = 512 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<8, f32>, !mono.tile<8, f32>, !mono.tile<4096, f32>
  }
}

// -----

mono.launch @bigchunkpreset942 attributes {arch = "gfx942", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 4096]
  mono.region @cache input : i8 [2, 18688]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.attend_chunk' op lowered to bf16_mfma: the chunk needs 79552 bytes of shared memory in this form; a CTA of gfx942 has at most 65536}}
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] lowered to bf16_mfma {heads = 8 : i64, headDim = 512 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<8, f32>, !mono.tile<8, f32>, !mono.tile<4096, f32>
  }
}

// -----

// Rearrangements get a `via`: an axis-0 reduction or expand whose columns
// are whole blocks stays in its threads; an input of at most a wave's values
// (64 on gfx950, 32 on sm_90) to 2..wave values goes by shuffles; anything
// else, and a one-value result, through shared memory. A reduction that an
// expand of the same shape takes whole (and that does not stay in its
// threads) prints with it (mono.with_expand) and moves as the pair (its
// input, the expand's result).
// CHECK-LABEL: mono.launch @amdvia
// CHECK: mono.reduce sum %{{.*}} via in_thread {axis = 0 : i64, shape
// CHECK: mono.expand %{{.*}} via in_thread
// CHECK: mono.slice %{{.*}}[0] via shuffle
// CHECK: mono.slice %{{.*}}[0] via shared
// CHECK: mono.slice %{{.*}}[3] via shared
// CHECK: mono.gather %{{.*}}[%{{.*}}] via shuffle
// CHECK: mono.reduce max %{{.*}} via shuffle {axis = 1 : i64, mono.with_expand,
// CHECK: mono.expand %{{.*}} via shuffle
// CHECK: mono.reduce max %{{.*}} via shared {axis = 1 : i64, shape
// CHECK-LABEL: mono.launch @hoppervia
// CHECK: mono.slice %{{.*}}[0] via shared
// CHECK: mono.slice %{{.*}}[0] via shuffle
mono.launch @amdvia attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %big = mono.constant 1.0 : !mono.tile<1024, f32>
    %r = mono.reduce sum %big {shape = array<i64: 4, 256>, axis = 0 : i64} : !mono.tile<1024, f32> -> !mono.tile<256, f32>
    %e = mono.expand %r {shape = array<i64: 4, 256>, axis = 0 : i64} : !mono.tile<256, f32> -> !mono.tile<1024, f32>
    %x = mono.constant 1.0 : !mono.tile<64, f32>
    %a = mono.slice %x[0] : !mono.tile<64, f32> -> !mono.tile<32, f32>
    %b = mono.slice %big[0] : !mono.tile<1024, f32> -> !mono.tile<32, f32>
    %c = mono.slice %x[3] : !mono.tile<64, f32> -> !mono.tile<1, f32>
    %i = mono.constant 2.0 : !mono.tile<16, f32>
    %g = mono.gather %x[%i] : !mono.tile<64, f32>, !mono.tile<16, f32> -> !mono.tile<16, f32>
    %m = mono.reduce max %x {shape = array<i64: 4, 16>, axis = 1 : i64} : !mono.tile<64, f32> -> !mono.tile<4, f32>
    %me = mono.expand %m {shape = array<i64: 4, 16>, axis = 1 : i64} : !mono.tile<4, f32> -> !mono.tile<64, f32>
    %w = mono.reduce max %big {shape = array<i64: 32, 32>, axis = 1 : i64} : !mono.tile<1024, f32> -> !mono.tile<32, f32>
  }
}
mono.launch @hoppervia attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<64, f32>
    %a = mono.slice %x[0] : !mono.tile<64, f32> -> !mono.tile<32, f32>
    %y = mono.constant 1.0 : !mono.tile<32, f32>
    %b = mono.slice %y[0] : !mono.tile<32, f32> -> !mono.tile<16, f32>
  }
}

// -----

// A `via` already set is kept where the rearrangement can move that way
// (shared memory always can), refused naming why where it cannot.
// CHECK-LABEL: mono.launch @presetvia
// CHECK: mono.slice %{{.*}}[0] via shared
mono.launch @presetvia attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<64, f32>
    %a = mono.slice %x[0] via shared : !mono.tile<64, f32> -> !mono.tile<32, f32>
  }
}

// -----

mono.launch @badshuffle attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<128, f32>
    // expected-error @+1 {{'mono.slice' op via shuffle: shuffles need an input of at most a wave (64 values) and a result of 2 to 64 values}}
    %a = mono.slice %x[0] via shuffle : !mono.tile<128, f32> -> !mono.tile<32, f32>
  }
}

// -----

mono.launch @badinthread attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<512, f32>
    // expected-error @+1 {{'mono.reduce' op via in_thread: only an axis-0 reduction or expand whose columns are whole blocks (256) keeps its values in their threads}}
    %r = mono.reduce sum %x via in_thread {shape = array<i64: 4, 128>, axis = 0 : i64} : !mono.tile<512, f32> -> !mono.tile<128, f32>
  }
}

// -----

// fp8_mfma is gfx942's form: gfx950 (OCP fp8) and sm_90 lack its FNUZ
// instruction, and on gfx942 it takes MX data only.
mono.launch @fp8on950 attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op lowered to fp8_mfma: gfx950 has no 16x16x32 FNUZ fp8 MFMA (gfx942's)}}
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 lowered to fp8_mfma : !mono.tile<64, f32>
  }
}

// -----

mono.launch @fp8on90 attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op lowered to fp8_mfma: sm_90 has no 16x16x32 FNUZ fp8 MFMA (gfx942's)}}
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 lowered to fp8_mfma : !mono.tile<64, f32>
  }
}

// -----

mono.launch @fp8notmx attributes {arch = "gfx942", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @wb weight : bf16 [32, 2048]
  mono.region @xb input : bf16 [2, 2048]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op lowered to fp8_mfma: the fp8 MFMA form needs MX data on both sides}}
    %a = mono.gemv_rows @wb[%c0], @xb[%c0] tokens 2 lowered to fp8_mfma : !mono.tile<64, f32>
  }
}

// -----

mono.launch @fp8halftile attributes {arch = "gfx942", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : f8E4M3FN [8, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @x input : f8E4M3FN [1, 2048]
  mono.region @xs input : f8E8M0FNU [1, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op lowered to fp8_mfma: the fp8 MFMA form needs MX data on both sides (e2m1 or e4m3 weights with scales, MXFP8 tokens), whole 16-row tiles}}
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 1 lowered to fp8_mfma : !mono.tile<8, f32>
  }
}

// -----

// gfx942 still refuses a preset scaled_mfma.
mono.launch @scaledon942 attributes {arch = "gfx942", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op lowered to scaled_mfma: gfx942 has no scaled matrix instruction}}
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 lowered to scaled_mfma : !mono.tile<64, f32>
  }
}
