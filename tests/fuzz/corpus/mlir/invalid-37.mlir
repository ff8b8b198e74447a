mono.launch @place attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @r scratch : f32 [1, 4] {mono.base = 0 : i64}
}
