mono.launch @acrossthreads attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<256, f32>
    %sum = mono.reduce sum %x {shape = array<i64: 2, 128>, axis = 0 : i64} : !mono.tile<256, f32> -> !mono.tile<128, f32>
  }
}
