mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, ranks = 2 : i64} {
  mono.region @p peer : bf16 [2, 16]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    mono.skip_unless %c1
    %f = mono.constant 1.0 : !mono.tile<16, f32>
    %v = mono.cast %f : !mono.tile<16, f32> to !mono.tile<16, bf16>
    mono.store_peer %v, @p[%c0, %c0] to rank 1 : !mono.tile<16, bf16>
  }
}
