// RUN: monodc-opt %s -split-input-file -mono-check-handoffs -mono-place-tasks -mono-plan-memory -mono-materialize-sync -verify-diagnostics | FileCheck %s
// Peer memory: stores to every rank, then loads of each rank's slot become
// system-scope publishes and per-rank waits. A row that depends on data may
// be any row: the read waits for every producer task, and every row must be
// written; a column that depends on data is refused.

// CHECK-LABEL: mono.launch @allreduce
// CHECK-SAME: mono.peer_slot_bytes = 512
// CHECK-SAME: ranks = 2
// CHECK: mono.region @partials peer : bf16 [1, 64] {mono.peer_offset = 0 : i64}
// CHECK: mono.region @push.peer_flags flags : i64 [1] {mono.peer, mono.peer_offset = 256 : i64}
// CHECK: mono.store_peer %{{.*}}, @partials[%{{.*}}, %{{.*}}] to rank 0
// CHECK: mono.store_peer %{{.*}}, @partials[%{{.*}}, %{{.*}}] to rank 1
// CHECK-NEXT: mono.publish_peer @push.peer_flags[%arg0]
// CHECK: mono.wait_peer @push.peer_flags[%{{.*}}, %{{.*}}] from rank 0 {mono.regions = ["partials"]}
// CHECK-NEXT: mono.load_peer @partials[%{{.*}}, %{{.*}}] from rank 0
// CHECK: mono.wait_peer @push.peer_flags[%{{.*}}, %{{.*}}] from rank 1 {mono.regions = ["partials"]}
// CHECK-NEXT: mono.load_peer @partials[%{{.*}}, %{{.*}}] from rank 1
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

// -----

// A gather: the row comes from data, so @pick waits for all four @fill tasks.
// CHECK-LABEL: mono.launch @gather
// CHECK: mono.stage @pick
// CHECK: mono.to_index
// CHECK-NEXT: %[[FIRST:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[COUNT:.*]] = arith.constant 4 : index
// CHECK-NEXT: mono.wait @fill.flags[%[[FIRST]], %[[COUNT]]] {mono.regions = ["s"]}
// CHECK-NEXT: mono.load @s[%{{.*}}, %{{.*}}]
mono.launch @gather attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @where input : f32 [1, 1]
  mono.region @s scratch : f32 [4, 64]
  mono.region @y output : f32 [1, 64]
  mono.stage @fill tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @s[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @pick tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %w = mono.load @where[%t, %c0] : !mono.tile<1, f32>
    %row = mono.to_index %w : !mono.tile<1, f32>
    %v = mono.load @s[%row, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
}

// -----

// Rows 2 and 3 are never written: a row chosen by data could be one of them.
mono.launch @holes attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @where input : f32 [1, 1]
  mono.region @s scratch : f32 [4, 64]
  mono.region @y output : f32 [1, 64]
  mono.stage @fill tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @s[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @pick tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %w = mono.load @where[%t, %c0] : !mono.tile<1, f32>
    %row = mono.to_index %w : !mono.tile<1, f32>
    // expected-error @+1 {{task 0 of stage 'pick' reads region 's' at a row that depends on data, so every row must be written, but no task of stage 'fill' writes row 2 columns [0, 64)}}
    %v = mono.load @s[%row, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
}

// -----

mono.launch @column attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @where input : f32 [1, 1]
  mono.region @s scratch : f32 [1, 256]
  mono.region @y output : f32 [1, 64]
  mono.stage @fill tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<256, f32>
    mono.store %v, @s[%t, %c0] : !mono.tile<256, f32>
  }
  mono.stage @pick tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %w = mono.load @where[%t, %c0] : !mono.tile<1, f32>
    %col = mono.to_index %w : !mono.tile<1, f32>
    // expected-error @+1 {{reads handed-off region 's' at a column that depends on data}}
    %v = mono.load @s[%c0, %col] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
}

// -----

mono.launch @lopsided attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, ranks = 2 : i64} {
  mono.region @partial input : bf16 [1, 64]
  mono.region @partials peer : bf16 [1, 64]
  // expected-error @+1 {{stage 'push' stores different windows of peer region 'partials' row 0 to rank 1 than to rank 0; every rank must receive the same layout}}
  mono.stage @push tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %p = mono.load @partial[%t, %c0] : !mono.tile<32, bf16>
    mono.store_peer %p, @partials[%t, %c0] to rank 0 : !mono.tile<32, bf16>
    mono.store_peer %p, @partials[%t, %c32] to rank 1 : !mono.tile<32, bf16>
  }
}
