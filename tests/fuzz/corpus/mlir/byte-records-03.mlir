mono.launch @attend_own attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 1] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 256]
  mono.region @cache output : i8 [2, 6400]
  mono.region @m output : f32 [1, 2]
  mono.stage @put tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %w = mono.load @slots[%t, %c0] : !mono.tile<1, f32>
    %slot = mono.to_index %w : !mono.tile<1, f32>
    %v = mono.constant 1.0 : !mono.tile<16, f32>
    %q = mono.cast %v : !mono.tile<16, f32> to !mono.tile<16, f8E4M3FN>
    mono.store %q, @cache[%c0, %c0] if %slot : !mono.tile<16, f8E4M3FN>
  }
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<1, f32>
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<1, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
    mono.store %m, @m[%t, %c0] : !mono.tile<2, f32>
  }
}
