// RUN: monodc-opt %s -split-input-file -verify-diagnostics
// The verifier rejects bad shapes, dtypes and region use, naming the op.

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @u input : bf16 [1, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.load' op loads a f32 tile from bf16 region 'u'}}
    %u = mono.load @u[%t, %c0] : !mono.tile<64, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : bf16 [1, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %x = mono.constant 1.0 : !mono.tile<64, f32>
    %b = mono.cast %x : !mono.tile<64, f32> to !mono.tile<64, bf16>
    // expected-error @+1 {{'mono.store' op writes weight region 'w', which is read-only}}
    mono.store %b, @w[%t, %c0] : !mono.tile<64, bf16>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.load' op reads region 'nowhere' which the launch does not declare}}
    %u = mono.load @nowhere[%t, %c0] : !mono.tile<64, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @u input : f32 [1, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c48 = arith.constant 48 : index
    // expected-error @+1 {{'mono.load' op columns [48, 80) are outside region 'u' (64 columns)}}
    %u = mono.load @u[%t, %c48] : !mono.tile<32, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %a = mono.constant 1.0 : !mono.tile<64, f32>
    %b = mono.constant 1.0 : !mono.tile<32, f32>
    // expected-error @+1 {{'mono.add' op operand sizes 64 and 32 do not match}}
    %c = mono.add %a, %b : !mono.tile<64, f32>, !mono.tile<32, f32> -> !mono.tile<64, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %a = mono.constant 1.0 : !mono.tile<64, f32>
    %b = mono.cast %a : !mono.tile<64, f32> to !mono.tile<64, bf16>
    // expected-error @+1 {{'mono.mul' op operates on f32 tiles, got a bf16 tile}}
    %c = mono.mul %b, %b : !mono.tile<64, bf16>, !mono.tile<64, bf16> -> !mono.tile<64, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %a = mono.constant 1.0 : !mono.tile<48, f32>
    // expected-error @+1 {{'mono.quantize_mxfp8' op input size 48 is not a multiple of the 32-value group}}
    %c, %s = mono.quantize_mxfp8 standard %a : !mono.tile<48, f32> -> !mono.tile<48, f8E4M3FN>, !mono.tile<1, f8E8M0FNU>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : f8E4M3FN [32, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.constant 1.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.gemv' op an e4m3 weight takes an MXFP8 activation}}
    %o = mono.gemv @w [%c0], %a : !mono.tile<64, f32> -> !mono.tile<32, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : bf16 [32, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.constant 1.0 : !mono.tile<32, f32>
    // expected-error @+1 {{'mono.gemv' op activation of 32 values does not match the 64 columns of weight 'w'}}
    %o = mono.gemv @w [%c0], %a : !mono.tile<32, f32> -> !mono.tile<32, f32>
  }
}

// -----

// expected-error @+1 {{'mono.launch' op rows must be in [1, 48], got 49}}
mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 49 : i64} {
}

// -----

// expected-error @+1 {{'mono.launch' op block must be a power of two in [32, 1024], got 96}}
mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 96 : i64, rows = 1 : i64} {
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.stage' op stage 's' must have between 1 and 65536 tasks, got 0}}
  mono.stage @s tasks 0 {
  ^bb0(%t: index):
  }
}

// -----

// Signless attributes are read signed: a negative count is refused as itself
// (read unsigned it passed, and check-handoffs then walked 2^64 tasks).
mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.stage' op stage 's' must have between 1 and 65536 tasks, got -4}}
  mono.stage @s tasks -4 {
  ^bb0(%t: index):
  }
}

// -----

// expected-error @+1 {{'mono.launch' op grid must be in [1, 65536], got -1}}
mono.launch @l attributes {arch = "gfx950", grid = -1 : i64, block = 256 : i64, rows = 1 : i64} {
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    // expected-error @+1 {{tile size must be positive, got 0}}
    %y = mono.constant 1.0 : !mono.tile<0, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    // expected-error @+1 {{tile element type must be f32, bf16, f8E4M3FN, f4E2M1FN or f8E8M0FNU, got 'i32'}}
    %y = mono.constant 1.0 : !mono.tile<4, i32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @cache output : i8 [1, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %x = mono.constant 1.0 : !mono.tile<8, f32>
    %q = mono.cast %x : !mono.tile<8, f32> to !mono.tile<8, f4E2M1FN>
    // expected-error @+1 {{'mono.store' op cannot address e2m1 values in byte region 'cache'; two of them share a byte}}
    mono.store %q, @cache[%t, %c0] : !mono.tile<8, f4E2M1FN>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @cache output : i8 [1, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c3 = arith.constant 3 : index
    %x = mono.constant 1.0 : !mono.tile<8, f32>
    %b = mono.cast %x : !mono.tile<8, f32> to !mono.tile<8, bf16>
    // expected-error @+1 {{'mono.store' op byte 3 of region 'cache' is not aligned to the 2-byte bf16 values stored there}}
    mono.store %b, @cache[%t, %c3] : !mono.tile<8, bf16>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @cache input : i8 [1, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c48 = arith.constant 48 : index
    // expected-error @+1 {{'mono.load' op columns [48, 80) are outside region 'cache' (64 columns)}}
    %b = mono.load @cache[%t, %c48] : !mono.tile<16, bf16>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.region' op region 'y' has an index_bound, which only an f32, i32 or i64 input with a bound in [1, 2^24] may have}}
  mono.region @y output : f32 [1, 1] {index_bound = 8 : i64}
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // An index above 2^24 would not load exactly as f32.
  // expected-error @+1 {{'mono.region' op region 'pages' has an index_bound, which only an f32, i32 or i64 input with a bound in [1, 2^24] may have}}
  mono.region @pages input : i32 [1, 8] {index_bound = 16777217 : i64}
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.region' op region 'y' is handed from another launch, which only an input may be}}
  mono.region @y output : bf16 [1, 8] {handed_from = @k1::@q}
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.region' op region 'q' must name its producer as @launch::@region, got @k1}}
  mono.region @q input : bf16 [1, 8] {handed_from = @k1}
}

// -----

mono.launch @k1 attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.region' op region 'q_in' is handed from its own launch; a hand-over joins two launches}}
  mono.region @q_in input : bf16 [1, 8] {handed_from = @k1::@q}
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.region' op region 'x' is a step result, which only an output may be}}
  mono.region @x input : bf16 [1, 8] {step_result}
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.region' op region 'w' is sized at launch, which only a 2-D input, output or weight may be}}
  mono.region @w scratch : bf16 [4, 8] {rows_at_launch}
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.region' op region 'v' is sized at launch, which only a 2-D input, output or weight may be}}
  mono.region @v input : bf16 [8] {rows_at_launch}
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @cache input : bf16 [4, 8]
  // expected-error @+1 {{'mono.region' op region 'pages' indexes @cache, which needs an index_bound that is a multiple of the rows of a region of the launch sized at launch}}
  mono.region @pages input : i32 [1, 8] {index_bound = 4 : i64, indexes = @cache}
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @cache input : bf16 [4, 8] {rows_at_launch}
  // expected-error @+1 {{'mono.region' op region 'slots' indexes @cache, which needs an index_bound that is a multiple of the rows of a region of the launch sized at launch}}
  mono.region @slots input : i64 [1, 1] {index_bound = 6 : i64, indexes = @cache}
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @cache input : bf16 [4, 8]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    // expected-error @+1 {{'mono.region_rows' op reads the rows of region 'cache', which is not sized at launch (its rows are 4)}}
    %n = mono.region_rows @cache : !mono.tile<1, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @cache input : bf16 [4, 8] {rows_at_launch}
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    // expected-error @+1 {{'mono.region_rows' op gives a one-value f32 tile}}
    %n = mono.region_rows @cache : !mono.tile<2, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @cache input : bf16 [4, 8] {rows_at_launch}
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.load' op row 1 is outside region 'cache' (1 row known before launch)}}
    %v = mono.load @cache[%c1, %c0] : !mono.tile<8, bf16>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.region' op region 'pages' holds i32, which only an index input (with an index_bound) may hold}}
  mono.region @pages input : i32 [1, 8]
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @positions input : i64 [1, 1] {index_bound = 4096 : i64}
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // An index input loads as f32 whole numbers, not in its storage format.
    // expected-error @+1 {{'mono.load' op loads a bf16 tile from i64 region 'positions'}}
    %p = mono.load @positions[%t, %c0] : !mono.tile<1, bf16>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    // expected-error @+1 {{'mono.iota' op counts in an f32 tile of at most 2^24 values}}
    %i = mono.iota %t : !mono.tile<64, bf16>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<96, f32>
    // expected-error @+1 {{'mono.quantize_mxfp8' op input size 96 is not a multiple of the 64-value group}}
    %c, %s = mono.quantize_mxfp8 kv %x : !mono.tile<96, f32> -> !mono.tile<96, f8E4M3FN>, !mono.tile<1, f8E8M0FNU>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @q input : bf16 [1, 256]
  mono.region @cache input : i8 [4, 6000]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %slots = mono.constant 0.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.attend_chunk' op reads keys from region 'cache', which must be a byte region of 32 200-byte records a row}}
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%slots] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @q input : bf16 [1, 256]
  mono.region @cache input : i8 [4, 6400]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %slots = mono.constant 0.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.attend_chunk' op needs heads >= 1, a rope part in 16-dim pieces and nope dims in 64-dim groups (at most 8), got heads 2, head dim 128, rope 32}}
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%slots] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 32 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
  }
}

// -----

// The device library dequantizes keys 16 dims at a time: an 8-dim rope part
// (even, nope in whole 64-dim groups) is refused.
mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @q input : bf16 [1, 272]
  mono.region @cache input : i8 [4, 5120]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %slots = mono.constant 0.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.attend_chunk' op needs heads >= 1, a rope part in 16-dim pieces and nope dims in 64-dim groups (at most 8), got heads 2, head dim 136, rope 8}}
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%slots] {heads = 2 : i64, headDim = 136 : i64, ropeDim = 8 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<272, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @q input : bf16 [1, 256]
  mono.region @cache input : i8 [4, 6400]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %slots = mono.constant 0.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.attend_chunk' op results must be f32 tiles of 2, 2 and 256 values}}
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%slots] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<128, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : f4E2M1FN [32, 128]
  mono.region @ws weight : f8E8M0FNU [32, 4]
  mono.region @x input : f8E4M3FN [1, 128]
  mono.region @xs input : f8E8M0FNU [1, 4]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op scales 'ws' of shuffled MXFP4 weight 'w' must be e8m0 [256, 8]}}
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 1 : !mono.tile<16, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : f4E2M1FN [24, 128]
  mono.region @ws weight : f8E8M0FNU [256, 8]
  mono.region @x input : f8E4M3FN [1, 128]
  mono.region @xs input : f8E8M0FNU [1, 4]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op shuffled MXFP4 weight 'w' needs rows a multiple of 16 and k of 64, got [24, 128]}}
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 1 : !mono.tile<8, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 4 : i64} {
  mono.region @w weight : f8E4M3FN [16, 64]
  mono.region @ws weight : f8E8M0FNU [1, 2]
  mono.region @x input : f8E4M3FN [4, 64]
  mono.region @xs input : f8E8M0FNU [4, 2]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c5 = arith.constant 5 : index
    // expected-error @+1 {{'mono.gemv_rows' op count 5 is outside [0, 4]}}
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 4 count %c5 : !mono.tile<64, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %e = mono.constant 1.0 : !mono.tile<16, f32>
    // expected-error @+1 {{'mono.expert_groups' op group = 0 must be at least 1}}
    %a, %b, %c, %d = mono.expert_groups %e group 0 : !mono.tile<16, f32> -> !mono.tile<16, f32>, !mono.tile<16, f32>, !mono.tile<16, f32>, !mono.tile<16, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %e = mono.constant 1.0 : !mono.tile<16, f32>
    // expected-error @+1 {{'mono.expert_groups' op takes and returns f32 tiles of one size (a slot or a place each)}}
    %a, %b, %c, %d = mono.expert_groups %e group 8 : !mono.tile<16, f32> -> !mono.tile<16, f32>, !mono.tile<8, f32>, !mono.tile<16, f32>, !mono.tile<16, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %e = mono.constant 1.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.slice' op takes runs of 16 values every 8; runs must not overlap}}
    %a = mono.slice %e[0] {stride = 8 : i64, block = 16 : i64} : !mono.tile<64, f32> -> !mono.tile<16, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %e = mono.constant 1.0 : !mono.tile<64, f32>
    // The last run (values 32 to 47 of the result) would start at 16 + 48 = 64.
    // expected-error @+1 {{'mono.slice' op 48 values from 16 by 32 (runs of 16) are outside a tile of 64}}
    %a = mono.slice %e[16] {stride = 32 : i64, block = 16 : i64} : !mono.tile<64, f32> -> !mono.tile<48, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @d scratch : f32 [8, 16]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c5 = arith.constant 5 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.store' op count 5 is outside [0, 4]}}
    mono.store %v, @d[%c0, %c0] count %c5 {rows = 4 : i64} : !mono.tile<64, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @d output : f32 [8, 16]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.store' op takes a guard or a count, not both}}
    mono.store %v, @d[%c0, %c0] if %c0 count %c2 {rows = 4 : i64} : !mono.tile<64, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @y output : f32 [4, 16]
  mono.stage @s tasks 4 {
  ^bb0(%t: index):
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{'mono.skip_unless' op is the stage's second; a task skips once}}
    mono.skip_unless %c1
    mono.skip_unless %c1
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @y output : f32 [4, 16]
  mono.stage @s tasks 4 {
  ^bb0(%t: index):
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{'mono.skip_unless' op is both `rest` and `pad`; a pad row's task promises nothing of later tasks (pad rows need not be the last)}}
    mono.skip_unless %c1 rest pad
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, ranks = 2 : i64} {
  mono.region @p peer : bf16 [2, 16]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    mono.skip_unless %c1
    %f = mono.constant 1.0 : !mono.tile<16, f32>
    %v = mono.cast %f : !mono.tile<16, f32> to !mono.tile<16, bf16>
    // expected-error @+1 {{'mono.store_peer' op follows a mono.skip_unless; a task that may skip keeps its peer hand-offs ahead of it}}
    mono.store_peer %v, @p[%c0, %c0] to rank 1 : !mono.tile<16, bf16>
  }
}

// -----

// The attributes the passes record are declared: an unknown mono.* name,
// a wrong type, a wrong op and a negative size are refused.
// expected-error @+1 {{unknown attribute 'mono.lds_byte' (the mono dialect declares mono.base,}}
mono.launch @typo attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, mono.lds_byte = 4 : i64} {
}

// -----

// expected-error @+1 {{'mono.lds_bytes' must be an i64 integer, got "4"}}
mono.launch @type attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, mono.lds_bytes = "4"} {
}

// -----

// expected-error @+1 {{'mono.scratch_bytes' must not be negative, got -256}}
mono.launch @negative attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, mono.scratch_bytes = -256 : i64} {
}

// -----

mono.launch @place attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.base' belongs on mono.stage, not on 'mono.region'}}
  mono.region @r scratch : f32 [1, 4] {mono.base = 0 : i64}
}

// -----

// expected-error @+1 {{'mono.advance_epoch' must be true or false}}
mono.launch @flag attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, mono.advance_epoch = 1 : i64} {
}

// -----

mono.launch @wholevia attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.reduce' op reduces the whole tile in a library call; `via` belongs on axis reductions}}
    %s = mono.reduce sum %x via shared : !mono.tile<64, f32> -> !mono.tile<1, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.region' op region 't' has its columns given at launch, which only a 2-D index input with fixed rows may have}}
  mono.region @t input : f32 [2, 8] {cols_at_launch}
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  // expected-error @+1 {{'mono.region' op region 't' has its columns given at launch, which only a 2-D index input with fixed rows may have}}
  mono.region @t input : i32 [2, 8] {index_bound = 4 : i64, cols_at_launch, rows_at_launch}
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @t input : i32 [2, 8] {index_bound = 4 : i64, cols_at_launch}
  mono.stage @s tasks 1 {
  ^bb0(%i: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.load' op addresses region 't', whose columns are given at launch; read it with mono.load_at}}
    %v = mono.load @t[%c0, %c0] : !mono.tile<8, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @x input : f32 [2, 8]
  mono.stage @s tasks 1 {
  ^bb0(%i: index):
    %c0 = arith.constant 0 : index
    %c = mono.constant 1.0 : !mono.tile<4, f32>
    // expected-error @+1 {{'mono.load_at' op reads region 'x' at columns given by data, which only a 2-D index input allows}}
    %v = mono.load_at @x[%c0] cols %c : !mono.tile<4, f32> -> !mono.tile<4, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @t input : i32 [2, 8] {index_bound = 4 : i64}
  mono.stage @s tasks 1 {
  ^bb0(%i: index):
    %c2 = arith.constant 2 : index
    %c = mono.constant 1.0 : !mono.tile<4, f32>
    // expected-error @+1 {{'mono.load_at' op row 2 is outside region 't' (2 rows)}}
    %v = mono.load_at @t[%c2] cols %c : !mono.tile<4, f32> -> !mono.tile<4, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @t input : i32 [2, 8] {index_bound = 4 : i64}
  mono.stage @s tasks 1 {
  ^bb0(%i: index):
    %c0 = arith.constant 0 : index
    %c = mono.constant 1.0 : !mono.tile<4, f32>
    // expected-error @+1 {{'mono.load_at' op takes an f32 tile of columns and gives an f32 tile of as many entries}}
    %v = mono.load_at @t[%c0] cols %c : !mono.tile<4, f32> -> !mono.tile<8, f32>
  }
}

// -----

mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @t input : i32 [2, 8] {index_bound = 4 : i64}
  mono.stage @s tasks 1 {
  ^bb0(%i: index):
    // expected-error @+1 {{'mono.region_cols' op reads the columns of region 't', which are not given at launch (it has 8)}}
    %n = mono.region_cols @t : !mono.tile<1, f32>
  }
}
