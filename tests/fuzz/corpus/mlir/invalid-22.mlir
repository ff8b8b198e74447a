mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @q input : bf16 [1, 256]
  mono.region @cache input : i8 [4, 6400]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %slots = mono.constant 0.0 : !mono.tile<64, f32>
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%slots] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<128, f32>
  }
}
