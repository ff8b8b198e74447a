mono.launch @attend attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 256]
  mono.region @q2 scratch : bf16 [1, 256]
  mono.region @cache input : i8 [2, 6400]
  mono.region @m output : f32 [1, 2]
  mono.stage @fillq tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %q = mono.load @q[%t, %c0] : !mono.tile<256, bf16>
    mono.store %q, @q2[%t, %c0] : !mono.tile<256, bf16>
  }
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    %m, %l, %p = mono.attend_chunk @q2[%t, %c0], @cache[%s] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
    mono.store %m, @m[%t, %c0] : !mono.tile<2, f32>
  }
}
