mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 49 : i64} {
}
