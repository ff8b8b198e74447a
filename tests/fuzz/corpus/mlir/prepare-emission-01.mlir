mono.launch @bad attributes {arch = "gfx1100", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
}
