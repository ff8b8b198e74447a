mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @cache output : i8 [1, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %x = mono.constant 1.0 : !mono.tile<8, f32>
    %q = mono.cast %x : !mono.tile<8, f32> to !mono.tile<8, f4E2M1FN>
    mono.store %q, @cache[%t, %c0] : !mono.tile<8, f4E2M1FN>
  }
}
