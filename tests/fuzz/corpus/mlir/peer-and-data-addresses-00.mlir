mono.launch @allreduce attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, ranks = 2 : i64} {
  mono.region @partial input : bf16 [1, 64]
  mono.region @partials peer : bf16 [1, 64]
  mono.region @reduced output : bf16 [1, 64]
  mono.stage @push tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %p = mono.load @partial[%t, %c0] : !mono.tile<64, bf16>
    mono.store_peer %p, @partials[%t, %c0] to rank 0 : !mono.tile<64, bf16>
    mono.store_peer %p, @partials[%t, %c0] to rank 1 : !mono.tile<64, bf16>
  }
  mono.stage @reduce tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.load_peer @partials[%t, %c0] from rank 0 : !mono.tile<64, bf16>
    %b = mono.load_peer @partials[%t, %c0] from rank 1 : !mono.tile<64, bf16>
    %af = mono.cast %a : !mono.tile<64, bf16> to !mono.tile<64, f32>
    %bf = mono.cast %b : !mono.tile<64, bf16> to !mono.tile<64, f32>
    %s = mono.add %af, %bf : !mono.tile<64, f32>, !mono.tile<64, f32> -> !mono.tile<64, f32>
    %o = mono.cast %s : !mono.tile<64, f32> to !mono.tile<64, bf16>
    mono.store %o, @reduced[%t, %c0] : !mono.tile<64, bf16>
  }
}
