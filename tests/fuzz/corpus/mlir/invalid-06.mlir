mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %a = mono.constant 1.0 : !mono.tile<48, f32>
    %c, %s = mono.quantize_mxfp8 standard %a : !mono.tile<48, f32> -> !mono.tile<48, f8E4M3FN>, !mono.tile<1, f8E8M0FNU>
  }
}
