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

#endif // MONODC_TRANSFORMS_PASSES_TD
