// RUN: monodc-opt %s -split-input-file -mono-check-handoffs -verify-diagnostics | FileCheck %s
// Every read of scratch/output/peer memory needs its writer in an earlier
// stage; a word has one writer per step. Violations name stage and region.

// A good plan passes unchanged.
// CHECK-LABEL: mono.launch @good
mono.launch @good attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @x input : f32 [2, 64]
  mono.region @s scratch : f32 [2, 64]
  mono.region @y output : f32 [2, 64]
  mono.stage @produce tasks 4 {
  ^bb0(%t: index):
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %row = arith.divui %t, %c2 : index
    %half = arith.remui %t, %c2 : index
    %col = arith.muli %half, %c32 : index
    %v = mono.load @x[%row, %col] : !mono.tile<32, f32>
    mono.store %v, @s[%row, %col] : !mono.tile<32, f32>
  }
  mono.stage @consume tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @s[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
}

// -----

mono.launch @later attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @s scratch : f32 [1, 64]
  mono.region @y output : f32 [1, 64]
  mono.stage @first tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{stage 'first' reads region 's' written by the later stage 'second'; it would wait forever}}
    %v = mono.load @s[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @second tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @s[%t, %c0] : !mono.tile<64, f32>
  }
}

// -----

mono.launch @nobody attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @s scratch : f32 [1, 64]
  mono.region @y output : f32 [1, 64]
  mono.stage @only tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{stage 'only' reads scratch region 's' which no stage of the launch writes}}
    %v = mono.load @s[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
}

// -----

mono.launch @itself attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @s scratch : f32 [1, 64]
  mono.stage @loop tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{stage 'loop' reads region 's' which it writes itself}}
    %v = mono.load @s[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @s[%t, %c0] : !mono.tile<64, f32>
  }
}

// -----

mono.launch @twowriters attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @s scratch : f32 [1, 64]
  mono.stage @a tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @s[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @b tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 2.0 : !mono.tile<64, f32>
    // expected-error @+1 {{region 's' is written by stages 'a' and 'b'; a word has one writer per step}}
    mono.store %v, @s[%t, %c0] : !mono.tile<64, f32>
  }
}

// -----

mono.launch @overlap attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @s scratch : f32 [1, 64]
  // expected-error @+1 {{tasks 0 and 1 of stage 'w' both write region 's' row 0 column 16}}
  mono.stage @w tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %col = arith.muli %t, %c16 : index
    %v = mono.constant 1.0 : !mono.tile<32, f32>
    mono.store %v, @s[%c0, %col] : !mono.tile<32, f32>
  }
}

// -----

mono.launch @gap attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @s scratch : f32 [1, 64]
  mono.region @y output : f32 [1, 64]
  mono.stage @half tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<32, f32>
    mono.store %v, @s[%t, %c0] : !mono.tile<32, f32>
  }
  mono.stage @all tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{task 0 of stage 'all' reads row 0 columns [32, 64) of region 's', which no task of stage 'half' writes}}
    %v = mono.load @s[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
}
