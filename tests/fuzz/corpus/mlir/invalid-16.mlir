mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @cache input : i8 [1, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c48 = arith.constant 48 : index
    %b = mono.load @cache[%t, %c48] : !mono.tile<16, bf16>
  }
}
