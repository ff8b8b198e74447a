//===- HipEmitter.h - print a launch as HIP ---------------------*- C++ -*-===//
//
// The printer alone: this header includes no pass. EmitPipeline.h runs the
// fusion pipeline and then prints.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_EMIT_HIPEMITTER_H
#define MONODC_EMIT_HIPEMITTER_H

#include "monodc/Dialect/Mono/MonoDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace monodc::emit {

/// The kernel symbol of a launch in the emitted source and the code object.
std::string kernelName(mono::LaunchOp launch);
/// The same for the launch named `launchName` (a hand-over's producer).
std::string kernelName(llvm::StringRef launchName);

/// Stage timers, a diagnostic (`monodc build --stage-timers`), never part
/// of a product build: each CTA keeps, for every stage, a record of
/// kStageTimerWords 64-bit words in the device array `mono_prof`
/// ([grid][stages][kStageTimerWords], record of CTA c and stage s at
/// (c * stages + s) * kStageTimerWords), written by thread 0 as it leaves
/// the stage: 0 enter and 1 leave (ns of the device's global clock), 2-5 ns
/// in mailbox polls, GEMVs, flag publishes and block-wide library calls
/// (quantizer, block reduction, top-k, expert groups; Calls only, else 0),
/// 6 the tasks it ran, 7 the task plus one at which it left the stage
/// skipping the rest (0: it did not). The unfused baseline's stage kernels
/// keep the same records (its `_end` kernel none).
enum class StageTimers { Off, Spans, Calls };
constexpr int64_t kStageTimerWords = 8;

struct HipPrintOptions {
  StageTimers stageTimers = StageTimers::Off;
};

/// Prints one self-contained HIP translation unit for `launch`, which must
/// have been through mono-prepare-emission. The IR is only read. A launch
/// marked `mono.unfused` (mono-unfuse, printUnfusedHip) prints as a kernel
/// a stage (`<kernel>_s<i>`, the same arguments) and `<kernel>_end`.
/// Kernel arguments: one pointer per input, weight and output region in
/// declaration order, then the scratch buffer (mono.scratch_bytes, planned
/// by mono-plan-memory) and the epoch buffer (epochWords(grid) words, zeroed
/// once when allocated; never cleared between steps).
mlir::LogicalResult printHip(mono::LaunchOp launch, llvm::raw_ostream &os,
                             const HipPrintOptions &options = {});

/// A plain-text description of a synchronized launch's kernel for hosts that
/// launch the emitted source without the compiler (the GPU harness): name,
/// grid, block, rows, scratch and epoch sizes, stages, then one line per
/// kernel argument ("arg name kind format rows cols bytes", in order) and per
/// scratch region ("scratch ... offset") and per wait site ("wait SITE STAGE
/// FLAGS [RANK]": the waiting stage, the flags region and, for peer flags, the
/// rank it polls), sites numbered by waitSites.
std::string kernelManifest(mono::LaunchOp launch);

/// For a bench that times stages (StageTimers): one line "reads S REGION"
/// for every kernel-argument region (input, weight, output) that stage S
/// reads (loads, GEMV and attention operands; flags and stores left out),
/// stages in manifest order, regions in declaration order.
std::string stageReads(mono::LaunchOp launch);

} // namespace monodc::emit

#endif // MONODC_EMIT_HIPEMITTER_H
