mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %e = mono.constant 1.0 : !mono.tile<16, f32>
    %a, %b, %c, %d = mono.expert_groups %e group 0 : !mono.tile<16, f32> -> !mono.tile<16, f32>, !mono.tile<16, f32>, !mono.tile<16, f32>, !mono.tile<16, f32>
  }
}
