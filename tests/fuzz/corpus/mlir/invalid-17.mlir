mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @y output : f32 [1, 1] {index_bound = 8 : i64}
}
