mono.launch @lopsided attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, ranks = 2 : i64} {
  mono.region @partial input : bf16 [1, 64]
  mono.region @partials peer : bf16 [1, 64]
  mono.stage @push tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %p = mono.load @partial[%t, %c0] : !mono.tile<32, bf16>
    mono.store_peer %p, @partials[%t, %c0] to rank 0 : !mono.tile<32, bf16>
    mono.store_peer %p, @partials[%t, %c32] to rank 1 : !mono.tile<32, bf16>
  }
}
