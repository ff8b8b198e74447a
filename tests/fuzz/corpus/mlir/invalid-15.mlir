mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @cache output : i8 [1, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c3 = arith.constant 3 : index
    %x = mono.constant 1.0 : !mono.tile<8, f32>
    %b = mono.cast %x : !mono.tile<8, f32> to !mono.tile<8, bf16>
    mono.store %b, @cache[%t, %c3] : !mono.tile<8, bf16>
  }
}
