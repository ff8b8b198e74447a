mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64,rows = 1 : i64} {
  mono.region @p.flags flags : i64 [4]
  mono.stage @s tasks-4 {
  ^bb0(%t: index):
    %c1 = arith.constant 1 : index
    mono.wait @p.flags[%t, %c1] {mono.polled_once}
  }
}
