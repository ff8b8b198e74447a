mono.launch @toomuch attributes {arch = "gfx942", grid = 4 : i64, block = 512 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %y = mono.constant 1.0 : !mono.tile<32768, f32>
    %z = mono.slice %y[0] : !mono.tile<32768, f32> -> !mono.tile<16, f32>
  }
}
