mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %a = mono.constant 1.0 : !mono.tile<64, f32>
    %b = mono.cast %a : !mono.tile<64, f32> to !mono.tile<64, bf16>
    %c = mono.mul %b, %b : !mono.tile<64, bf16>, !mono.tile<64, bf16> -> !mono.tile<64, f32>
  }
}
