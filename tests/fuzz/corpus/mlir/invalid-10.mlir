mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 96 : i64, rows = 1 : i64} {
}
