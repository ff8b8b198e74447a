mono.launch @largeslice attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<2048, f32>
    %up = mono.slice %x[16] {stride = 32 : i64, block = 16 : i64} : !mono.tile<2048, f32> -> !mono.tile<1024, f32>
  }
}
