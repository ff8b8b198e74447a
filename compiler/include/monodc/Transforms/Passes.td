//===- Passes.td - mono passes ----------------------------*- tablegen -*-===//
#ifndef MONODC_TRANSFORMS_PASSES_TD
#define MONODC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrepareEmission : Pass<"mono-prepare-emission", "::mlir::ModuleOp"> {
  let summary = "Checks a launch can be printed as HIP and records what the printer needs";
  let description = [{
    Refuses launches the HIP printer cannot serve (an unknown arch, a tile too
    large for the registers of one thread) and attaches `mono.lds_bytes` to
    every launch: the shared memory its tile building blocks need. After this
    pass the printer only reads the IR.
  }];
  let options = [
    Option<"maxSlotsPerThread", "max-slots-per-thread", "int64_t", "64",
           "largest number of values of one tile a thread may hold">
  ];
}

def PlanShared : Pass<"mono-plan-shared", "::mlir::ModuleOp"> {
  let summary = "Gives each shared-memory user its area and places the barriers between them";
  let description = [{
    Walks each task body in order, as a CTA runs it, and decides how its
    users of shared memory share it. A small rearrangement `via shared` (a
    tile of at most kSmallRearrangementWords values), a small interleave and
    a small library call (usesOneSharedArea) take one of
    kRearrangementAreas areas: the least recently used of those nobody has
    read since the last barrier (after a barrier if every one has been
    read); a rearrangement whose input an area still holds reads it there,
    with no write and no barrier (`mono.reuse`). The area is `mono.area`.
    A `mono.sync` goes before a rearrangement's write where another user has
    touched shared memory since the last barrier (always before a large
    one), and before any other user, a skip and the end of a skip's block
    while small rearrangements' reads are in flight. The barriers inside a
    building block (between a rearrangement's writes and reads, after a
    large one, at a library call's end) and at a task's end are the
    building block's own. Runs after mono-prepare-emission; a rearrangement
    without a `via` is refused.
  }];
}

def Unfuse : Pass<"mono-unfuse", "::mlir::ModuleOp"> {
  let summary = "Turns a prepared fused launch into the unfused baseline: a kernel a stage";
  let description = [{
    The baseline the fused launch is measured against: each stage becomes a
    kernel of its own (`<kernel>_s<i>`, the same arguments, then `_end`,
    which ends the step), and the stream orders them, so nothing inside a
    rank waits for anything. Removes every `mono.wait` and `mono.publish`
    (the mailboxes between CTAs of a rank), the claimed placement
    (`mono.claim`: tasks are placed statically), the once-polled waits and
    the GEMV weights loaded before a poll (`mono.polled_once`,
    `mono.prefetched`: nothing is polled) and the stage functions
    (`mono.stage_calls`), and marks the launch `mono.unfused`, which the
    printer prints as that sequence of kernels. The peer mailboxes between
    ranks (`mono.wait_peer`, `mono.publish_peer`) stay, and so do the
    memory plan and the epoch, so the baseline takes the fused launch's
    buffers. Runs after mono-prepare-emission; a launch that has not been
    through it is refused.
  }];
}

def PlanWaits : Pass<"mono-plan-waits", "::mlir::ModuleOp"> {
  let summary = "Marks the waits polled once and the GEMVs loaded before their polls";
  let description = [{
    Sets `mono.polled_once` on every `mono.wait` whose first flag and count
    are constants (a whole producer stage, or one fixed flag): a CTA polls it
    for its first task of the stage only, since the flags keep this step's
    tag from then on and that first wait's acquire orders the CTA's later
    reads. Sets `mono.prefetched` on a `mono.gemv_rows` that directly follows
    a run of waits when its weight row and count are known before the first
    of them and its weights (and their scales) are read-only (weight or
    input regions): its weights are loaded before the poll. Weights in a
    region the launch writes are a hand-off that mono-materialize-sync waits
    for, so they are read after the poll. An attribute already set where its
    condition does not hold is refused. The printer and the
    simulator follow the attributes.
  }];
}

def LowerTiles : Pass<"mono-lower-tiles", "::mlir::ModuleOp"> {
  let summary = "Chooses each GEMV's and attention chunk's building block on the launch's target";
  let description = [{
    Sets `lowering` on every `mono.gemv_rows` from the target description
    (monodc/runtime/Target.h): `scaled_mfma` where the target has the
    16x16x128 scaled MFMA and the GEMV is MX data on both sides (e2m1 or
    e4m3 weights with E8M0 scales, MXFP8 tokens) whose rows are whole
    16-row tiles and whose k is whole 128-wide steps; `fp8_mfma` for the
    same GEMVs where the target has instead the 16x16x32 FNUZ fp8 MFMA
    (gfx942: the scales applied in software); `bf16_mfma` where it
    has the 16x16x32 bf16 MFMA and the GEMV is bf16 weights over bf16
    tokens, without scales, in whole 16-row tiles and 32-wide steps
    (gemv_shape.h, mono_gemv_mfma_fits); `warp_mma` where the
    target has the 16x8x16 f16 warp mma and the device's rule chooses it
    (gemv_shape.h, mono_gemv_mma_chosen); `fma_chains` otherwise. A lowering
    already set is kept if the target can run it and refused otherwise.

    Sets `lowering` on every `mono.attend_chunk` the same way: `bf16_mfma`
    where the target has the 16x16x32 bf16 MFMA and the chunk's shape fits
    it (attend_shape.h, mono_attend_mfma_fits), `warp_mma` where it has the
    16x8x16 bf16 warp mma and the shape fits that (mono_attend_mma_fits),
    `fma_chains` otherwise.

    The printer and the simulator follow the attribute; they decide nothing.
  }];
}

def CheckHandoffs : Pass<"mono-check-handoffs", "::mlir::ModuleOp"> {
  let summary = "Refuses a launch whose stages read what no earlier stage writes";
  let description = [{
    Every read of scratch, output or peer memory (loads, attention's query
    and cache, a GEMV's activations and, where the launch writes them, its
    weights and their scales) must have its writer in an
    earlier stage of the same launch, and every word it reads must be written
    by some task of that stage; a region has one writer stage and a word one
    writer task per step. A violating plan is refused with the stage, the
    region and the reason, since it could deadlock or race.
  }];
}

def PlaceTasks : Pass<"mono-place-tasks", "::mlir::ModuleOp"> {
  let summary = "Places task t of a stage on CTA (base + t) mod G";
  let description = [{
    Attaches `mono.base` to every stage. Bases rotate: a stage starts on the
    CTA after the last one its predecessor used, so consecutive small stages
    spread over the grid instead of piling onto CTA 0. G is the launch's grid.
  }];
}

def PlanMemory : Pass<"mono-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Lays out the scratch buffer and declares the sync regions";
  let description = [{
    Declares one flags region per stage (an 8-byte (value, tag) pair per
    task) and the epoch buffer (epoch word, arrival counter, per-CTA marks,
    a 256-slot ring of task counters), then gives every scratch and flags
    region a 256-byte aligned `mono.offset` in the launch's scratch buffer
    (`mono.scratch_bytes`). Each step width has its own launch and so its own
    scratch: a word polled as a tag never holds another width's data.
  }];
}

def MaterializeSync : Pass<"mono-materialize-sync", "::mlir::ModuleOp"> {
  let summary = "Turns hand-offs into tagged publishes and batched polls";
  let description = [{
    Every producer task ends with `mono.publish` of its flag; every consumer
    task waits, before its first read of a hand-off, on the contiguous run of
    producer flags it needs (one `mono.wait` per producer stage, expressed as
    first = (task / d) * a + b, or the whole producer when no such form fits).
    Tags are 2e + `tag-offset` (1 for K1, 2 for K2 and the FFN launch); the
    launch that ends a step advances e. No host action happens between steps.
  }];
  let options = [
    Option<"tagOffset", "tag-offset", "int64_t", "1", "1 for K1, 2 for K2/FFN">,
    Option<"advanceEpoch", "advance-epoch", "bool", "true",
           "this launch ends the step and moves the epoch on">,
    Option<"testOmitPublish", "test-omit-publish", "std::string", "\"\"",
           "test only: the stage whose publishes are left out">
  ];
}

def HoistLoads : Pass<"mono-hoist-loads", "::mlir::ModuleOp"> {
  let summary = "Issues each task's loads before the tile operations that do not need them";
  let description = [{
    In every stage body, a `mono.load` moves up to just after the last
    operation it must follow: a definition of one of its operands, or an
    operation with effects beyond reading memory (a store, a wait, a
    publish, a GEMV or attention building block, a peer access); a load of
    an input or a weight, which nothing in the launch writes, follows only
    its operands' definitions. Scalar index arithmetic and `mono.to_index`
    move the same way, so that the address a load needs is ready early too.
    Nothing else moves: waits stay just before the reads they guard (and a
    GEMV's weights are still prefetched before its poll).
    Why: the HIP printer keeps the order of the operations, every tile
    operation that goes through shared memory ends with a block barrier, and
    a global load placed after a barrier cannot start before it; a task
    whose loads were spread between such operations paid one memory latency
    for each.
  }];
}

#endif // MONODC_TRANSFORMS_PASSES_TD
