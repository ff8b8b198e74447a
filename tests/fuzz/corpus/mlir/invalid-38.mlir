mono.launch @flag attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, mono.advance_epoch = 1 : i64} {
}
