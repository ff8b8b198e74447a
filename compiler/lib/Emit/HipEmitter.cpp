//===- HipEmitter.cpp - print a launch as HIP -----------------------------===//
//
// A read-only printer: every decision that changes the IR was made by
// mono-prepare-emission. Tiles become per-thread f32 arrays (value i of a tile
// in thread i % MONO_BLOCK, slot i / MONO_BLOCK); heavy ops call building
// blocks of the device library.
//
//===----------------------------------------------------------------------===//
#include "monodc/Emit/HipEmitter.h"

#include "monodc/Transforms/Passes.h"
#include "monodc/device/DeviceLibrary.h"
#include "monodc/runtime/LaunchInterface.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace monodc;
using namespace monodc::mono;

namespace {

/// The device library names its per-format functions after the formats
/// (mono_load_bf16, mono_round_e4m3, ...).
std::string storageSuffix(Type type) { return formatName(type); }

class LaunchPrinter {
public:
  LaunchPrinter(LaunchOp launch, llvm::raw_ostream &sink, const emit::HipPrintOptions &options)
      : launch(launch), sink(sink), options(options), block(launch.getBlock()),
        unfused(launch->hasAttr(MonoDialect::UnfusedAttrHelper::getNameStr())) {}

  LogicalResult print();

private:
  LogicalResult printStage(StageOp stage, int index);
  LogicalResult printStageFunction(StageOp stage, int index, std::string &call);
  LogicalResult printOp(Operation &op);
  /// The regions that are kernel arguments, in their order.
  SmallVector<RegionOp> argumentRegions();
  /// The kernel's parameters, or a stage function's: the argument regions
  /// that `passes`, then the scratch, epoch and peer buffers.
  void printKernelParameters(llvm::function_ref<bool(RegionOp)> passes);
  void declareSharedState(bool claims, bool inKernel);

  std::string nameOf(Value value) { return names.lookup(value); }
  std::string define(Value value, llvm::StringRef prefix) {
    std::string name = (prefix + llvm::Twine(nextId++)).str();
    names[value] = name;
    return name;
  }
  int64_t sizeOf(Value v) { return tileSize(v); }
  void printLoad(Value res, const std::string &pointer, RegionOp region, Value row, Value col) {
    std::string name = define(res, "t");
    declareTile(res, name);
    os << "    {\n    const mono_i64 base = " << nameOf(row) << " * " << region.getCols() << " + "
       << nameOf(col) << ";\n";
    openSlotLoop(res);
    // A byte region is addressed in bytes and holds the tile's own format.
    const bool bytes = region.holdsBytes();
    Type format = bytes ? cast<TileType>(res.getType()).getElementType() : region.getElementType();
    std::string fn = "mono_load_" + storageSuffix(format);
    std::string target = bytes ? "((const mono_u8 *)" + pointer + " + base)" : pointer;
    std::string first = bytes ? "0" : "base";
    if (sizeOf(res) == 1)
      os << "      " << name << "[0] = " << fn << "(" << target << ", " << first
         << ");\n    }\n    }\n";
    else
      os << "      if (i < " << sizeOf(res) << ") " << name << "[s] = " << fn << "(" << target
         << ", " << first << " + i);\n    }\n    }\n";
  }
  void printStore(Value v, const std::string &pointer, RegionOp region, Value row, Value col,
                  int64_t rows, Value skipWhenNegative = Value(), Value rowCount = Value()) {
    const bool bytes = region.holdsBytes();
    Type format = bytes ? cast<TileType>(v.getType()).getElementType() : region.getElementType();
    std::string fn = "mono_store_" + storageSuffix(format);
    os << "    if (" << (skipWhenNegative ? nameOf(skipWhenNegative) + " >= 0" : "1")
       << ") {\n    const mono_i64 base = " << nameOf(row) << " * " << region.getCols()
       << " + " << nameOf(col) << ";\n";
    openSlotLoop(v);
    std::string guard = sizeOf(v) == 1 ? "mono_t == 0" : ("i < " + std::to_string(sizeOf(v)));
    // A counted store leaves the rows from `rowCount` on alone.
    if (rowCount)
      guard += " && i < " + std::to_string(sizeOf(v) / rows) + " * " + nameOf(rowCount);
    // Row r of a multi-row store starts `cols` further on; a byte region is
    // addressed in bytes and holds the tile's own format.
    std::string target = bytes ? "((mono_u8 *)" + pointer + " + base)" : pointer;
    std::string offset = (bytes ? "" : "base + ") + std::string(sizeOf(v) == 1 ? "0" : "i");
    if (rows > 1) {
      int64_t width = sizeOf(v) / rows;
      offset = "base + (i / " + std::to_string(width) + ") * " + std::to_string(region.getCols()) +
               " + i % " + std::to_string(width);
    }
    os << "      if (" << guard << ") " << fn << "(" << target << ", " << offset << ", "
       << slot(v) << ");\n    }\n    }\n";
  }
  /// A gemv_rows' template arguments after the output slots, its weight
  /// arguments (pointer, scales, scale columns, first row), and the weight
  /// slice type that holds what a prefetch loads.
  struct GemvRowsShape {
    std::string args, weightArgs, sliceType;
    std::string run, whole;  // the device functions: after a prefetch, or all of it
  };
  GemvRowsShape gemvRowsShape(GemvRowsOp g) {
    RegionOp weight = lookupRegion(g, g.getWeightAttr()), x = lookupRegion(g, g.getXAttr());
    const int64_t k = weight.getCols();
    const bool scaled = static_cast<bool>(g.getWeightScales());
    RegionOp ws = scaled ? lookupRegion(g, g.getWeightScalesAttr()) : RegionOp();
    const int64_t wkind = gemvRowsWeightKind(g);
    GemvRowsShape shape;
    shape.weightArgs = "(const mono_u8 *)" + regionPointer(weight.getSymName()) + ", " +
                       (scaled ? "(const mono_u8 *)" + regionPointer(ws.getSymName()) : "nullptr") +
                       ", " + std::to_string(scaled ? ws.getCols() : 0) + ", " + nameOf(g.getRow());
    const std::string rowsAndK = std::to_string(g.getOutputs()) + ", " + std::to_string(k);
    if (g.getLowering() == GemvLowering::ScaledMfma || g.getLowering() == GemvLowering::Bf16Mfma ||
        g.getLowering() == GemvLowering::Fp8Mfma) {
      // gfx950's matrix cores (gemv_mfma.h; gfx942's form of it for
      // fp8_mfma): rows, k, tokens, kind.
      shape.args = rowsAndK + ", " + std::to_string(g.getTokens()) + ", " + std::to_string(wkind);
      shape.sliceType = "mono_gemv_mfma_weights<" + shape.args + ">";
      shape.run = "mono_gemv_mfma_run";
      shape.whole = "mono_gemv_mfma";
      return shape;
    }
    if (g.getLowering() == GemvLowering::WarpMma) {
      // Tensor cores (gemv_mma.h): rows, k, tokens, tokens a pass, kind.
      shape.args = rowsAndK + ", " + std::to_string(g.getTokens()) + ", " +
                   std::to_string(gemvRowsMmaPassTokens(g, block)) + ", " + std::to_string(wkind);
      shape.sliceType = "mono_gemv_mma_weights<" + rowsAndK + ", " + std::to_string(wkind) + ">";
      shape.run = "mono_gemv_mma_run";
      shape.whole = "mono_gemv_mma";
      return shape;
    }
    shape.run = "mono_gemv_rows_run";
    shape.whole = "mono_gemv_rows";
    auto ringAttr = g->getAttrOfType<IntegerAttr>("mono.ring_bytes");
    const std::string ring = std::to_string(ringAttr ? ringAttr.getInt() : 0);
    // The trailing RING and X32 template arguments, left to their defaults
    // (0) where they are.
    std::string ringAndX32;
    if (g.getLowering() == GemvLowering::FmaChainsF32)
      ringAndX32 = ", " + ring + ", 1";
    else if (ringAttr)
      ringAndX32 = ", " + ring;
    // Tokens a pass: mono-prepare-emission's choice (the GemvRowsOp case
    // refuses a gemv without it).
    auto chunk =
        g->getAttrOfType<IntegerAttr>(MonoDialect::ChunkTokensAttrHelper::getNameStr());
    shape.args = rowsAndK + ", " + std::to_string(g.getTokens()) + ", " +
                 std::to_string(chunk ? chunk.getInt() : 0) + ", " +
                 std::to_string(wkind) + ", " + (x.getElementType().isF32() ? "1" : "0") +
                 ringAndX32;
    shape.sliceType = "mono_gemv_weights<" + rowsAndK + ", " + std::to_string(wkind) + ">";
    return shape;
  }
  /// Before the first of a run of waits that a gemv_rows marked
  /// `mono.prefetched` (mono-plan-waits) follows: its weights are loaded
  /// before the poll.
  void prefetchBefore(Operation &wait, Value skipCount) {
    if (wait.getPrevNode() && isa<WaitOp, WaitPeerOp>(wait.getPrevNode()))
      return;
    Operation *next = wait.getNextNode();
    while (next && isa<WaitOp, WaitPeerOp, SyncOp>(next))
      next = next->getNextNode();
    auto g = dyn_cast_or_null<GemvRowsOp>(next);
    if (!g || !g->hasAttr("mono.prefetched"))
      return;
    std::string slice = "w" + std::to_string(nextId++);
    GemvRowsShape shape = gemvRowsShape(g);
    // A counted gemv of no tokens reads no weights, not even these (inside
    // a skip on the same count, the skip's block already says so).
    const std::string guard = g.getCount() && g.getCount() != skipCount
                                  ? "if (" + nameOf(g.getCount()) + " > 0) "
                                  : "";
    os << "    " << shape.sliceType << " " << slice << ";  // loaded before the poll\n"
       << "    " << guard << slice << ".prefetch(" << shape.weightArgs << ");\n";
    prefetched[g] = slice;
  }

  /// The arguments after the tag of a bounded wait: the epoch buffer (its
  /// wait-fault record), the rank and the wait's site.
  std::string waitSiteArguments(Operation *wait) {
    return "mono_epoch, " + std::string(peerSlotBytes() > 0 ? "mono_rank" : "0") + ", " +
           std::to_string(siteOfWait.lookup(wait));
  }

  /// A wait marked `mono.polled_once` (mono-plan-waits: its flags do not
  /// depend on the task) is polled by a CTA's first task of the stage only.
  /// Declares the CTA's "seen" flag.
  void declareOnceWaits(StageOp stage) {
    for (Operation &op : stage.getBodyBlock()) {
      auto wait = dyn_cast<WaitOp>(op);
      if (!wait || !wait->hasAttr("mono.polled_once"))
        continue;
      std::string seen = "mono_waited" + std::to_string(nextId++);
      os << "  bool " << seen << " = false;  // a task-independent wait, polled once\n";
      onceWaits[wait] = seen;
    }
  }

  /// Stage timers (emit::StageTimers): the counter into which `op`'s call
  /// is timed with StageTimers::Calls (mailbox polls, GEMVs, flag publishes,
  /// block-wide library calls), or null where it is not timed.
  const char *timedCounter(Operation &op) {
    if (options.stageTimers != emit::StageTimers::Calls)
      return nullptr;
    if (isa<WaitOp, WaitPeerOp>(op))
      return "mono_prof_wait";
    if (isa<GemvRowsOp, GemvOp>(op))
      return "mono_prof_gemv";
    if (isa<PublishOp, PublishPeerOp>(op))
      return "mono_prof_publish";
    if (auto r = dyn_cast<ReduceOp>(op))
      return !r.getShape() ? "mono_prof_block" : nullptr;
    if (isa<QuantizeMxfp8Op, TopKOp, ExpertGroupsOp>(op))
      return "mono_prof_block";
    return nullptr;
  }
  bool stageTimers() const { return options.stageTimers != emit::StageTimers::Off; }
  /// The stage timers' array (emit::StageTimers), after the device library,
  /// whose arch layer has the clock (mono_clock_ns).
  void declareStageTimers(int64_t stages) {
    const bool nvidia = targetOf(launch.getArch()).isNvidia();
    os << "// Stage timers (monodc build --stage-timers): CTA c's record of stage s is\n"
       << "// mono_prof[(c * " << stages << " + s) * " << emit::kStageTimerWords
       << " ...]: enter, leave (ns), ns in polls, GEMVs, publishes and\n"
       << "// block-wide library calls, tasks run, the task + 1 at which it left the rest.\n"
       << (nvidia ? "__device__" : "__attribute__((device))") << " mono_u64 mono_prof[MONO_GRID * "
       << stages << " * " << emit::kStageTimerWords << "];\n";
  }

  int64_t peerSlotBytes() {
    auto slot = launch->getAttrOfType<IntegerAttr>("mono.peer_slot_bytes");
    return slot ? slot.getInt() : 0;
  }
  int64_t peerParityBytes() { return launch.getRanks() * peerSlotBytes(); }
  int64_t peerOffset(RegionOp region) {
    return region->getAttrOfType<IntegerAttr>("mono.peer_offset").getInt();
  }
  /// Region `region` in rank `owner`'s peer buffer, in the slot of rank
  /// `source`, in this step's parity half.
  std::string peerPointer(const std::string &owner, const std::string &source, RegionOp region) {
    return "(mono_peers[" + owner + "] + (mono_e & 1u) * " + std::to_string(peerParityBytes()) +
           " + (mono_i64)(" + source + ") * " + std::to_string(peerSlotBytes()) + " + " +
           std::to_string(peerOffset(region)) + ")";
  }

  /// The expression of the value at `index` (an expression) of the tile a
  /// rearrangement put in shared memory: its area is the rearrangement's.
  using SharedElement = llvm::function_ref<std::string(const std::string &index)>;
  /// A rearrangement `op` (a slice, expand, gather or small axis reduction):
  /// `in` goes to shared memory, then value i of the result is the
  /// expression of i that `source` builds from the tile's elements. As
  /// mono-plan-shared planned it: a small one (kSmallRearrangementWords)
  /// writes `in` to its area (`mono.area`), or reads it where the area still
  /// holds it (`mono.reuse`), then a barrier, then its reads; a large one
  /// uses shared memory from word 0 and keeps a barrier after its reads too.
  /// The barriers before its writes are the plan's `mono.sync` ops. `via
  /// shuffle` reads the values by warp shuffles instead, with no shared
  /// memory and no barrier.
  LogicalResult throughShared(Operation *op, Value in, Value out,
                              llvm::function_ref<std::string(SharedElement)> source) {
    std::string name = define(out, "t");
    declareTile(out, name);
    if (rearrangementOf(op) == Rearrangement::Shuffle) {
      // Every lane takes part in the shuffles, those past the result's end
      // too (their values go unused; a lane index is taken modulo the warp).
      const std::string read = source([&](const std::string &index) {
        return "mono_shfl_idx_f32(" + nameOf(in) + "[0], " + index + ")";
      });
      openSlotLoop(out);
      os << "      " << name << "[s] = " << read << ";\n    }\n";
      return success();
    }
    FailureOr<int64_t> area = plannedArea(op);
    if (failed(area))
      return failure();
    const bool small = sizeOf(in) <= kSmallRearrangementWords;
    if (!op->hasAttr(MonoDialect::ReuseAttrHelper::getNameStr()))
      writeToShared(in, *area);
    const std::string read = source([&](const std::string &index) {
      return "mono_lds[" + sharedAreaBase(*area) + index + "]";
    });
    openSlotLoop(out);
    if (sizeOf(out) == 1)
      os << "      { const int i = 0; " << name << "[0] = " << read << "; }\n    }\n";
    else
      os << "      if (i < " << sizeOf(out) << ") " << name << "[s] = " << read << ";\n    }\n";
    if (!small)
      barrier();
    return success();
  }
  /// The area of shared memory mono-plan-shared gave `op`.
  FailureOr<int64_t> plannedArea(Operation *op) {
    auto area = op->getAttrOfType<IntegerAttr>(MonoDialect::AreaAttrHelper::getNameStr());
    if (!area)
      return op->emitOpError() << "has no mono.area; run mono-plan-shared first";
    return area.getInt();
  }
  /// The offset of area `area` in mono_lds, as the start of an index.
  static std::string sharedAreaBase(int64_t area) {
    return area ? std::to_string(area * kSmallRearrangementWords) + " + " : "";
  }
  /// `in` into shared memory at area `area`, and the barrier after it.
  void writeToShared(Value in, int64_t area) {
    const std::string base = sharedAreaBase(area);
    if (sizeOf(in) == 1) {
      os << "    if (mono_t == 0) mono_lds[" << base << "0] = " << nameOf(in) << "[0];\n";
    } else {
      openSlotLoop(in);
      os << "      if (i < " << sizeOf(in) << ") mono_lds[" << base << "i] = " << nameOf(in)
         << "[s];\n    }\n";
    }
    barrier();
  }
  /// A block barrier inside a building block.
  void barrier() { os << "    mono_block_sync();\n"; }
  /// Reduction `r` (a small axis reduction) of row or column `line` (an
  /// expression of i) of the tile in shared memory, as an expression: the
  /// values in index order.
  static std::string axisReduction(ReduceOp r, const std::string &line, SharedElement element) {
    const int64_t rows = (*r.getShape())[0], cols = (*r.getShape())[1];
    const bool alongRows = *r.getAxis() == 1;
    const std::string index = alongRows ? "(" + line + ") * " + std::to_string(cols) + " + j"
                                        : "j * " + std::to_string(cols) + " + (" + line + ")";
    return reductionOverJ(r.getKind(), alongRows ? cols : rows, element(index), "");
  }
  /// `value` (an expression of j) folded for j = 0 .. extent - 1 in order,
  /// from the kind's identity, as an expression.
  static std::string reductionOverJ(ReduceKind kind, int64_t extent, std::string value,
                                    llvm::StringRef loopPragma) {
    if (kind == ReduceKind::AbsMax)
      value = "mono_fabs(" + value + ")";
    const std::string combine =
        kind == ReduceKind::Sum ? "acc + " + value : "mono_fmax(acc, " + value + ")";
    const std::string init = kind == ReduceKind::Sum ? "0.0f" : "mono_as_float(0xFF800000u)";
    return "[&] { float acc = " + init + "; " + loopPragma.str() + "for (int j = 0; j < " +
           std::to_string(extent) + "; ++j) acc = " + combine + "; return acc; }()";
  }
  /// An axis-0 reduction or expand whose values stay in their threads
  /// (`via in_thread`): the input's slot for output slot s is
  /// j * (cols / block) + s for the reduction's j, s % (cols / block) for
  /// the expand's. The reduction folds in index order, as through shared
  /// memory.
  LogicalResult inThread(Operation *op) {
    Value in = op->getOperand(0), out = op->getResult(0);
    auto reduce = dyn_cast<ReduceOp>(op);
    const int64_t rows = reduce ? (*reduce.getShape())[0] : cast<ExpandOp>(op).getShape()[0];
    const int64_t cols = reduce ? (*reduce.getShape())[1] : cast<ExpandOp>(op).getShape()[1];
    const std::string perRow = std::to_string(cols / block), name = define(out, "t");
    declareTile(out, name);
    openSlotLoop(out);
    const std::string value =
        reduce ? reductionOverJ(reduce.getKind(), rows, nameOf(in) + "[j * " + perRow + " + s]",
                                "_Pragma(\"unroll\") ")
               : nameOf(in) + "[s % " + perRow + "]";
    os << "      " << name << "[s] = " << value << ";\n    }\n";
    return success();
  }
  /// Shared memory as the library call being printed is to use it: its
  /// planned area for a call that uses one (usesOneSharedArea), else from
  /// word 0.
  FailureOr<std::string> callShared(Operation *op) {
    if (!usesOneSharedArea(op))
      return std::string("mono_lds");
    FailureOr<int64_t> area = plannedArea(op);
    if (failed(area))
      return failure();
    return *area ? "mono_lds + " + std::to_string(*area * kSmallRearrangementWords)
                 : std::string("mono_lds");
  }
  int64_t slotsOf(Value v) { return slotsPerThread(sizeOf(v), block); }
  /// Slot `s` of a tile, or its single value when the tile is uniform.
  std::string slot(Value v) {
    return nameOf(v) + (sizeOf(v) == 1 ? "[0]" : "[s]");
  }
  /// A pointer to a region: a kernel argument, or a place in the scratch
  /// buffer that plan-memory chose.
  std::string regionPointer(llvm::StringRef name) {
    RegionOp region = dyn_cast_or_null<RegionOp>(SymbolTable::lookupSymbolIn(launch, name));
    if (auto offset = region ? region->getAttrOfType<IntegerAttr>("mono.offset") : nullptr)
      return "(mono_scratch + " + std::to_string(offset.getInt()) + ")";
    usedArguments.insert(name);
    return argumentName(name);
  }
  static std::string argumentName(llvm::StringRef name) {
    std::string id = "r_";
    for (char c : name)
      id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return id;
  }
  /// The row count of a region sized at launch: an argument after its pointer.
  static std::string rowsArgumentName(llvm::StringRef name) {
    return argumentName(name) + "_rows";
  }
  /// The column count of a region whose columns are given at launch: an
  /// argument after its pointer (and row count).
  static std::string colsArgumentName(llvm::StringRef name) {
    return argumentName(name) + "_cols";
  }
  void declareTile(Value v, llvm::StringRef name) {
    os << "    float " << name << "[" << slotsOf(v) << "] = {};\n";
  }
  /// Opens a loop over the slots of `v`, with `i` the value's tile index.
  void openSlotLoop(Value v) {
    os << "    _Pragma(\"unroll\") for (int s = 0; s < " << slotsOf(v) << "; ++s) {\n"
       << "      const int i = s * MONO_BLOCK + mono_t; (void)i;\n";
  }

  LaunchOp launch;
  llvm::raw_ostream &sink;
  /// Everything is printed here first, so that a stage's body can become a
  /// function whose parameters are known once the body is printed.
  std::string text;
  llvm::raw_string_ostream os{text};
  emit::HipPrintOptions options;
  llvm::StringSet<> usedArguments; ///< argument regions the printed code reads or writes
  int64_t block;
  /// mono-unfuse's baseline (mono.unfused): a kernel a stage.
  bool unfused;
  llvm::DenseMap<Value, std::string> names;
  llvm::DenseMap<Operation *, std::string> prefetched;
  llvm::DenseMap<Operation *, std::string> onceWaits; ///< wait -> its CTA's "seen" flag
  /// Every wait's site number (waitSites), which a wait that gives up
  /// writes into the wait-fault record.
  llvm::DenseMap<Operation *, int64_t> siteOfWait;
  /// The claim counter of the dynamic stage being printed, where its last
  /// op is a publish that hands the block its next task; else empty.
  std::string handOverCounter;
  int nextId = 0;
  /// Stages the launch has (the stage timers' records a CTA).
  int64_t stageCount = 0;
  /// The stages are printed one after the other in one kernel body (the
  /// fused kernel on AMD), not each in a function or kernel of its own.
  bool inlineStages = false;
};

LogicalResult LaunchPrinter::print() {
  auto lds = launch->getAttrOfType<IntegerAttr>("mono.lds_bytes");
  if (!lds)
    return launch.emitOpError()
           << "has no mono.lds_bytes; run mono-prepare-emission first";
  auto tagOffset = launch->getAttrOfType<IntegerAttr>("mono.tag_offset");
  auto advance = launch->getAttrOfType<BoolAttr>("mono.advance_epoch");
  if (!tagOffset || !advance)
    return launch.emitOpError()
           << "is not synchronized; run the fusion passes (mono-materialize-sync) first";
  os << "// Generated by monodc from launch @" << launch.getSymName()
     << " (arch " << launch.getArch() << ", grid " << launch.getGrid()
     << ", rows " << launch.getRows() << "). Do not edit.\n";
  os << "#define MONO_BLOCK " << block << "\n";
  os << "#define MONO_GRID " << launch.getGrid() << "\n";
  os << deviceLibrarySource() << "\n";

  for (auto [site, wait] : llvm::enumerate(mono::waitSites(launch)))
    siteOfWait[wait] = static_cast<int64_t>(site);
  auto stages = llvm::to_vector(launch.getBodyBlock().getOps<StageOp>());
  stageCount = static_cast<int64_t>(stages.size());
  if (stageTimers())
    declareStageTimers(stageCount);
  const bool claims =
      llvm::any_of(stages, [](StageOp s) { return s->hasAttr("mono.claim"); });
  // Fused stages as functions of their own where mono-prepare-emission says
  // so (mono.stage_calls).
  const bool stageFunctions =
      launch->hasAttr(MonoDialect::StageCallsAttrHelper::getNameStr());
  inlineStages = !unfused && !stageFunctions;
  auto openKernel = [&](const std::string &name) {
    os << "MONO_KERNEL void " << name << "(";
    printKernelParameters([](RegionOp) { return true; });
    os << ") {\n";
    if (!stageFunctions)
      declareSharedState(claims, /*inKernel=*/true);
    // Stages in one body read it per task instead (printStage).
    if (!inlineStages)
      os << "  const int mono_t = mono_tid();\n";
  };
  auto readEpoch = [&] {
    os << "  // The step's tag: 2e+1 in K1, 2e+2 in K2 and the FFN launch.\n";
    os << "  const mono_u32 mono_e = mono_load_acquire_device(mono_epoch + "
       << epoch::kEpochWord << ");\n";
    os << "  const mono_u32 mono_tag = 2u * mono_e + " << tagOffset.getInt() << "u;\n"
       << "  (void)mono_tag;\n";
  };
  if (unfused) {
    // The baseline: one kernel per stage, ordered by the stream instead of
    // by mailboxes; only the peer mailboxes between ranks remain, so each
    // kernel knows the step's tag, and a last kernel (_end) ends the step.
    for (auto [index, stage] : llvm::enumerate(stages)) {
      openKernel(emit::kernelName(launch) + "_s" + std::to_string(index));
      readEpoch();
      if (failed(printStage(stage, index)))
        return failure();
      os << "}\n";
    }
    openKernel(emit::kernelName(launch) + "_end");
    readEpoch();
    os << "  mono_epoch_end(mono_epoch, mono_e, " << (advance.getValue() ? 1 : 0) << ");\n}\n";
    sink << text;
    return success();
  }
  std::vector<std::string> calls;
  if (stageFunctions) {
    // File scope, so that every stage function addresses the same shared
    // memory as shared memory.
    declareSharedState(claims, /*inKernel=*/false);
    for (auto [index, stage] : llvm::enumerate(stages))
      if (failed(printStageFunction(stage, index, calls.emplace_back())))
        return failure();
  }
  openKernel(emit::kernelName(launch));
  readEpoch();
  if (stageFunctions) {
    for (const std::string &call : calls)
      os << "  " << call << "\n";
  } else {
    for (auto [index, stage] : llvm::enumerate(stages))
      if (failed(printStage(stage, index)))
        return failure();
  }
  os << "  mono_epoch_end(mono_epoch, mono_e, " << (advance.getValue() ? 1 : 0) << ");\n";
  os << "}\n";
  sink << text;
  return success();
}

SmallVector<RegionOp> LaunchPrinter::argumentRegions() {
  SmallVector<RegionOp> regions;
  for (auto region : launch.getBodyBlock().getOps<RegionOp>())
    if (!region->hasAttr("mono.offset") && region.getKind() != MemoryKind::Epoch &&
        region.getKind() != MemoryKind::Peer && !region->hasAttr("mono.peer"))
      regions.push_back(region);
  return regions;
}

void LaunchPrinter::printKernelParameters(llvm::function_ref<bool(RegionOp)> passes) {
  for (RegionOp region : argumentRegions()) {
    if (!passes(region))
      continue;
    os << (region.isWritable() ? "void *" : "const void *") << "__restrict__ "
       << argumentName(region.getSymName()) << ", ";
    if (region.getRowsAtLaunch())
      os << "const mono_i64 " << rowsArgumentName(region.getSymName()) << ", ";
    if (region.getColsAtLaunch())
      os << "const mono_i64 " << colsArgumentName(region.getSymName()) << ", ";
  }
  os << "mono_u8 *mono_scratch, mono_u32 *mono_epoch";
  if (peerSlotBytes() > 0)
    os << ", mono_u8 *const *mono_peers, int mono_rank";
}

void LaunchPrinter::declareSharedState(bool claims, bool inKernel) {
  const int64_t lds = launch->getAttrOfType<IntegerAttr>("mono.lds_bytes").getInt();
  const char *indent = inKernel ? "  " : "";
  if (usesDynamicShared(launch.getArch(), lds))
    os << indent << "MONO_DYNAMIC_LDS(mono_lds);  // " << lds << " bytes\n";
  else
    os << indent << "MONO_SHARED float mono_lds[" << (lds + 3) / 4 << "];\n";
  // Only where a stage claims its tasks: nvcc warns about unused ones.
  if (!claims)
    return;
  os << indent << "MONO_SHARED mono_u32 mono_claim;  // a dynamic stage's claimed task\n";
  if (inKernel)
    os << "  mono_u32 mono_ahead = 0;  // thread 0's claim of the task after it\n";
}

LogicalResult LaunchPrinter::printStageFunction(StageOp stage, int index, std::string &call) {
  const std::string name = emit::kernelName(launch) + "_stage" + std::to_string(index);
  usedArguments.clear();
  const size_t start = text.size();
  if (failed(printStage(stage, index)))
    return failure();
  std::string body = text.substr(start);
  text.resize(start);
  auto used = [&](RegionOp region) { return usedArguments.contains(region.getSymName()); };
  os << "MONO_STAGE void " << name << "(";
  printKernelParameters(used);
  os << ", const int mono_t, const mono_u32 mono_e, const mono_u32 mono_tag) {\n"
     << "  (void)mono_t; (void)mono_e; (void)mono_tag;\n";
  if (stage->hasAttr("mono.claim"))
    os << "  mono_u32 mono_ahead = 0;  // thread 0's claim of the task after it\n";
  os << body << "}\n";
  llvm::raw_string_ostream args(call);
  args << name << "(";
  for (RegionOp region : argumentRegions()) {
    if (!used(region))
      continue;
    args << argumentName(region.getSymName()) << ", ";
    if (region.getRowsAtLaunch())
      args << rowsArgumentName(region.getSymName()) << ", ";
    if (region.getColsAtLaunch())
      args << colsArgumentName(region.getSymName()) << ", ";
  }
  args << "mono_scratch, mono_epoch";
  if (peerSlotBytes() > 0)
    args << ", mono_peers, mono_rank";
  args << ", mono_t, mono_e, mono_tag);";
  return success();
}

LogicalResult LaunchPrinter::printStage(StageOp stage, int index) {
  os << "  // stage " << index << ": " << stage.getSymName() << ", "
     << stage.getTasks() << " tasks\n";
  auto base = stage->getAttrOfType<IntegerAttr>("mono.base");
  if (!base)
    return stage.emitOpError() << "has no mono.base; run mono-place-tasks first";
  auto claim = stage->getAttrOfType<IntegerAttr>("mono.claim");
  if (stageTimers()) {
    // The stage's own scope where stages share a kernel body.
    if (inlineStages)
      os << "  {\n";
    os << "  mono_u64 mono_prof_enter = mono_clock_ns(), "
       << (options.stageTimers == emit::StageTimers::Calls ? "mono_prof_t0 = 0, " : "")
       << "mono_prof_wait = 0, mono_prof_gemv = 0, mono_prof_publish = 0, mono_prof_block = 0, "
          "mono_prof_tasks = 0, mono_prof_rest = 0;\n";
  }
  declareOnceWaits(stage);
  // A task whose last op is a publish ends behind the publish's barrier,
  // which also orders the next task's reuse of shared memory (the unfused
  // baseline has no local publishes: mono-unfuse removed them).
  Operation *last = stage.getBodyBlock().empty() ? nullptr : &stage.getBodyBlock().back();
  const bool endsWithPublish =
      last && isa<PublishPeerOp, PublishOp>(last);
  handOverCounter.clear();
  if (claim) {
    // A dynamic stage: the block claims its tasks from the step's counter.
    // With mono.hand_over (materialize-sync: a publish ends the task) the
    // publish hands over the next task too (mono_publish_and_claim), so
    // that thread 0's release overlaps it.
    auto tagOffset = launch->getAttrOfType<IntegerAttr>("mono.tag_offset").getInt();
    std::string counter = "mono_epoch + " + std::to_string(epoch::countersWord(launch.getGrid())) +
                          " + ((" + std::to_string(epoch::kClaimsPerStep) + "u * mono_e + " +
                          std::to_string(epoch::claimInStep(tagOffset, claim.getInt())) +
                          "u) & " + std::to_string(epoch::kCounterSlots - 1) + "u)";
    os << "  for (mono_i64 task = mono_claim_task(" << counter
       << ", &mono_claim, mono_ahead, 1); task < " << stage.getTasks() << ";";
    if (stage->hasAttr(MonoDialect::HandOverAttrHelper::getNameStr()))
      handOverCounter = counter;
    else
      os << " task = mono_claim_task(" << counter << ", &mono_claim, mono_ahead, 0)";
    os << ") {\n";
  } else {
    // Task t runs on CTA (base + t) mod G.
    os << "  for (mono_i64 task = (mono_cta() + MONO_GRID - " << base.getInt()
       << ") % MONO_GRID; task < " << stage.getTasks() << "; task += MONO_GRID) {\n";
  }
  // Where every stage shares one body, each task reads the thread id afresh
  // (on AMD mono_tid is opaque to the optimizer): what a stage derives from
  // it is then not computed once for all stages and kept live through them.
  if (inlineStages)
    os << "    const int mono_t = mono_tid();\n";
  if (stageTimers())
    os << "    ++mono_prof_tasks;\n";
  names[stage.getTaskIndex()] = "task";
  // A mono.skip_unless opens a block that its task's publish (or the body's
  // end) closes: a skipping task still publishes.
  bool skipOpen = false, restSkip = false;
  Value skipCount;  // the count of the open skip, if one is open
  // Where a skip's block closes (its reads settled inside by
  // mono-plan-shared's mono.sync), the task may or may not have run it.
  auto closeSkip = [&] {
    os << (restSkip ? "    }  // (a task that skips has left the stage)\n"
                    : "    }  // a task that skips comes here\n");
  };
  for (Operation &op : stage.getBodyBlock()) {
    if (isa<PublishOp>(op) && skipOpen) {
      closeSkip();
      skipOpen = false;
      skipCount = {};
    }
    if (isa<WaitOp, WaitPeerOp>(op))
      prefetchBefore(op, skipCount);
    const bool rearrangement = bool(rearrangedTile(&op)) || isa<InterleaveOp>(op);
    const bool otherSharedUser =
        !rearrangement && sharedBytesFor(&op, block, launch.getArch()) > 0;
    const size_t printedFrom = text.size();
    const char *timed = timedCounter(op);
    if (timed)
      os << "    mono_prof_t0 = mono_clock_ns();\n";
    if (failed(printOp(op)))
      return failure();
    if (timed)
      os << "    " << timed << " += mono_clock_ns() - mono_prof_t0;\n";
    // mono-plan-shared knows shared memory's users from sharedBytesFor: an
    // op that used it unannounced could race with a rearrangement's reads.
    if (!otherSharedUser && !rearrangement &&
        llvm::StringRef(text).drop_front(printedFrom).contains("mono_lds"))
      return op.emitOpError() << "uses shared memory that sharedBytesFor does not count "
                                 "(an emitter bug: its barriers would not order it)";
    skipOpen = skipOpen || isa<SkipUnlessOp>(op);
    if (auto skip = dyn_cast<SkipUnlessOp>(op)) {
      skipCount = skip.getCount();
      restSkip = skip.getRest();
    }
  }
  if (skipOpen)
    closeSkip();
  if (!endsWithPublish)
    os << "    mono_block_sync();  // shared memory is reused by the next task\n";
  os << "  }\n";
  if (stageTimers()) {
    os << "  if (" << (inlineStages ? "mono_tid()" : "mono_t") << " == 0) {\n"
       << "    mono_u64 *p = mono_prof + (mono_cta() * " << stageCount << " + " << index << ") * "
       << emit::kStageTimerWords << ";\n"
       << "    p[0] = mono_prof_enter; p[1] = mono_clock_ns(); p[2] = mono_prof_wait; "
          "p[3] = mono_prof_gemv; p[4] = mono_prof_publish; p[5] = mono_prof_block; "
          "p[6] = mono_prof_tasks; p[7] = mono_prof_rest;\n"
       << "  }\n";
    if (inlineStages)
      os << "  }\n";
  }
  return success();
}

LogicalResult LaunchPrinter::printOp(Operation &op) {
  auto binary = [&](Operation *o, llvm::StringRef pattern) {
    Value lhs = o->getOperand(0), rhs = o->getOperand(1), res = o->getResult(0);
    std::string name = define(res, "t");
    declareTile(res, name);
    openSlotLoop(res);
    os << "      " << name << "[s] = "
       << llvm::formatv(pattern.data(), slot(lhs), slot(rhs)) << ";\n    }\n";
    return success();
  };
  auto unary = [&](Operation *o, llvm::StringRef pattern) {
    Value in = o->getOperand(0), res = o->getResult(0);
    std::string name = define(res, "t");
    declareTile(res, name);
    openSlotLoop(res);
    os << "      " << name << "[s] = " << llvm::formatv(pattern.data(), slot(in))
       << ";\n    }\n";
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) -> LogicalResult {
        auto value = dyn_cast<IntegerAttr>(c.getValue());
        if (!value || !c.getType().isIndex())
          return c.emitOpError() << "only index constants are printable";
        os << "    const mono_i64 " << define(c.getResult(), "v") << " = "
           << value.getInt() << ";\n";
        return success();
      })
      .Case<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivUIOp,
            arith::RemUIOp, arith::DivSIOp, arith::RemSIOp>([&](Operation *o) {
        llvm::StringRef symbol = llvm::TypeSwitch<Operation *, llvm::StringRef>(o)
                                     .Case<arith::AddIOp>([](auto) { return "+"; })
                                     .Case<arith::SubIOp>([](auto) { return "-"; })
                                     .Case<arith::MulIOp>([](auto) { return "*"; })
                                     .Case<arith::DivUIOp, arith::DivSIOp>(
                                         [](auto) { return "/"; })
                                     .Default([](auto) { return "%"; });
        std::string lhs = nameOf(o->getOperand(0)), rhs = nameOf(o->getOperand(1));
        os << "    const mono_i64 " << define(o->getResult(0), "v") << " = " << lhs
           << " " << symbol << " " << rhs << ";\n";
        return success();
      })
      .Case<ConstantOp>([&](ConstantOp c) {
        std::string name = define(c.getResult(), "t");
        declareTile(c.getResult(), name);
        openSlotLoop(c.getResult());
        os << "      " << name << "[s] = "
           << llvm::formatv("{0:e9}", c.getValue().convertToFloat()) << "f;\n    }\n";
        return success();
      })
      .Case<RegionRowsOp>([&](RegionRowsOp rows) {
        std::string name = define(rows.getResult(), "t");
        declareTile(rows.getResult(), name);
        openSlotLoop(rows.getResult());
        usedArguments.insert(rows.getRegion());
        os << "      " << name << "[s] = (float)" << rowsArgumentName(rows.getRegion())
           << ";\n    }\n";
        return success();
      })
      .Case<RegionColsOp>([&](RegionColsOp cols) {
        std::string name = define(cols.getResult(), "t");
        declareTile(cols.getResult(), name);
        openSlotLoop(cols.getResult());
        usedArguments.insert(cols.getRegion());
        os << "      " << name << "[s] = (float)" << colsArgumentName(cols.getRegion())
           << ";\n    }\n";
        return success();
      })
      .Case<LoadAtOp>([&](LoadAtOp load) {
        RegionOp region = lookupRegion(load, load.getRegionAttr());
        // The row stride: the columns given at launch, or the region's own.
        const std::string cols = region.getColsAtLaunch()
                                     ? colsArgumentName(region.getSymName())
                                     : std::to_string(region.getCols()) + "LL";
        const std::string pointer = regionPointer(region.getSymName());
        std::string name = define(load.getResult(), "t");
        declareTile(load.getResult(), name);
        openSlotLoop(load.getResult());
        os << "      if (i < " << sizeOf(load.getResult()) << ") {\n"
           << "        mono_i64 c = (mono_i64)" << slot(load.getCols()) << ";\n"
           << "        c = c < 0 ? 0 : (c >= " << cols << " ? " << cols << " - 1 : c);\n"
           << "        " << name << "[s] = mono_load_" << storageSuffix(region.getElementType())
           << "(" << pointer << ", " << nameOf(load.getRow()) << " * " << cols << " + c);\n"
           << "      }\n    }\n";
        return success();
      })
      .Case<IotaOp>([&](IotaOp iota) {
        std::string name = define(iota.getResult(), "t");
        declareTile(iota.getResult(), name);
        openSlotLoop(iota.getResult());
        os << "      " << name << "[s] = (float)(" << nameOf(iota.getStart()) << " + i);\n    }\n";
        return success();
      })
      .Case<LoadOp>([&](LoadOp load) {
        RegionOp region = lookupRegion(load, load.getRegionAttr());
        printLoad(load.getResult(), regionPointer(region.getSymName()), region, load.getRow(),
                  load.getCol());
        return success();
      })
      .Case<LoadPeerOp>([&](LoadPeerOp load) {
        RegionOp region = lookupRegion(load, load.getRegionAttr());
        printLoad(load.getResult(),
                  peerPointer("mono_rank", std::to_string(load.getRank()), region), region,
                  load.getRow(), load.getCol());
        return success();
      })
      .Case<StoreOp>([&](StoreOp store) {
        RegionOp region = lookupRegion(store, store.getRegionAttr());
        printStore(store.getValue(), regionPointer(region.getSymName()), region, store.getRow(),
                   store.getCol(), store.getRows(), store.getGuard(), store.getCount());
        return success();
      })
      .Case<StorePeerOp>([&](StorePeerOp store) {
        RegionOp region = lookupRegion(store, store.getRegionAttr());
        printStore(store.getValue(),
                   peerPointer(std::to_string(store.getRank()), "mono_rank", region), region,
                   store.getRow(), store.getCol(), 1);
        return success();
      })
      .Case<PublishPeerOp>([&](PublishPeerOp p) {
        RegionOp flags = lookupRegion(p, p.getFlagsAttr());
        os << "    mono_publish_peer_flag(mono_peers, " << launch.getRanks()
           << ", (mono_e & 1u) * " << peerParityBytes() << ", (mono_i64)mono_rank * "
           << peerSlotBytes() << " + " << peerOffset(flags) << ", " << nameOf(p.getTask())
           << ", mono_tag);\n";
        return success();
      })
      .Case<WaitPeerOp>([&](WaitPeerOp w) {
        RegionOp flags = lookupRegion(w, w.getFlagsAttr());
        os << "    mono_wait_peer_flags((const mono_u64 *)"
           << peerPointer("mono_rank", std::to_string(w.getRank()), flags) << ", "
           << nameOf(w.getFirst()) << ", " << nameOf(w.getCount()) << ", mono_tag, "
           << waitSiteArguments(w) << ");\n";
        return success();
      })
      .Case<CastOp>([&](CastOp castOp) {
        Type to = cast<TileType>(castOp.getResult().getType()).getElementType();
        if (to.isF32())
          return unary(castOp, "{0}");
        std::string pattern = "mono_round_" + storageSuffix(to) + "({0})";
        return unary(castOp, pattern);
      })
      .Case<AddOp>([&](Operation *o) { return binary(o, "{0} + {1}"); })
      .Case<SubOp>([&](Operation *o) { return binary(o, "{0} - {1}"); })
      .Case<MulOp>([&](Operation *o) { return binary(o, "{0} * {1}"); })
      .Case<DivOp>([&](Operation *o) { return binary(o, "{0} / {1}"); })
      .Case<MaxOp>([&](Operation *o) { return binary(o, "mono_fmax({0}, {1})"); })
      .Case<MinOp>([&](Operation *o) { return binary(o, "mono_fmin({0}, {1})"); })
      .Case<RsqrtOp>([&](Operation *o) { return unary(o, "1.0f / mono_sqrt({0})"); })
      .Case<ExpOp>([&](Operation *o) { return unary(o, "mono_exp({0})"); })
      .Case<LogOp>([&](Operation *o) { return unary(o, "mono_log({0})"); })
      .Case<SelectOp>([&](SelectOp op) {
        std::string name = define(op.getResult(), "t");
        declareTile(op.getResult(), name);
        openSlotLoop(op.getResult());
        std::string a = slot(op.getA()), b = slot(op.getB());
        std::string condition = op.getPredicate() == Predicate::Gt   ? a + " > " + b
                                : op.getPredicate() == Predicate::Lt ? a + " < " + b
                                                                     : a + " != " + a;
        os << "      " << name << "[s] = (" << condition << ") ? " << slot(op.getX()) << " : "
           << slot(op.getY()) << ";\n    }\n";
        return success();
      })
      .Case<GatherOp>([&](GatherOp op) {
        const std::string index = "(int)" + slot(op.getIndices());
        return throughShared(op, op.getTable(), op.getResult(),
                             [&](SharedElement element) { return element(index); });
      })
      .Case<TopKOp>([&](TopKOp op) {
        std::string values = define(op.getValues(), "t");
        std::string indices = define(op.getIndices(), "t");
        declareTile(op.getValues(), values);
        declareTile(op.getIndices(), indices);
        os << "    mono_topk<" << slotsOf(op.getInput()) << ", " << sizeOf(op.getInput()) << ", "
           << op.getK() << ", " << slotsOf(op.getValues()) << ">(" << nameOf(op.getInput())
           << ", " << values << ", " << indices << ", mono_lds);\n";
        return success();
      })
      .Case<ExpertGroupsOp>([&](ExpertGroupsOp op) {
        std::string names[4];
        Value results[4] = {op.getSlotExpert(), op.getSlotFirst(), op.getSlotCount(),
                            op.getPlaceRow()};
        for (int i = 0; i < 4; ++i) {
          names[i] = define(results[i], "t");
          declareTile(results[i], names[i]);
        }
        os << "    mono_expert_groups<" << slotsOf(op.getExperts()) << ", "
           << sizeOf(op.getExperts()) << ", " << op.getGroup() << ">("
           << nameOf(op.getExperts()) << ", " << names[0] << ", " << names[1] << ", " << names[2]
           << ", " << names[3] << ", mono_lds);\n";
        return success();
      })
      .Case<FmaOp>([&](FmaOp f) {
        std::string name = define(f.getResult(), "t");
        declareTile(f.getResult(), name);
        openSlotLoop(f.getResult());
        os << "      " << name << "[s] = mono_fma(" << slot(f.getA()) << ", " << slot(f.getB())
           << ", " << slot(f.getC()) << ");\n    }\n";
        return success();
      })
      .Case<SliceOp>([&](SliceOp op) {
        const std::string offset = std::to_string(op.getOffset()),
                          stride = std::to_string(op.getStride()),
                          run = std::to_string(op.getBlock());
        const std::string index =
            op.getBlock() == 1
                ? offset + " + i * " + stride
                : offset + " + i / " + run + " * " + stride + " + i % " + run;
        return throughShared(op, op.getInput(), op.getResult(),
                             [&](SharedElement element) { return element(index); });
      })
      .Case<InterleaveOp>([&](InterleaveOp op) {
        // a then b in shared memory; value i comes from a[i / 2] or b[i / 2].
        // A small pair goes to its planned area (mono-plan-shared) as a small
        // rearrangement does; a large one keeps a barrier after its reads too.
        std::string name = define(op.getResult(), "t");
        declareTile(op.getResult(), name);
        const int64_t n = sizeOf(op.getA());
        const bool small = 2 * n <= kSmallRearrangementWords;
        FailureOr<int64_t> area = plannedArea(op);
        if (failed(area))
          return failure();
        const std::string base = sharedAreaBase(*area);
        for (auto [source, offset] : {std::pair<Value, int64_t>{op.getA(), 0}, {op.getB(), n}}) {
          openSlotLoop(source);
          os << "      if (i < " << n << ") mono_lds[" << base << offset << " + i] = "
             << nameOf(source) << "[s];\n    }\n";
        }
        barrier();
        openSlotLoop(op.getResult());
        os << "      if (i < " << 2 * n << ") " << name << "[s] = mono_lds[" << base << "(i % 2) * "
           << n << " + i / 2];\n    }\n";
        if (!small)
          barrier();
        return success();
      })
      .Case<ToIndexOp>([&](ToIndexOp op) {
        os << "    const mono_i64 " << define(op.getResult(), "v") << " = (mono_i64)"
           << nameOf(op.getInput()) << "[0];\n";
        return success();
      })
      .Case<ExpandOp>([&](ExpandOp op) {
        if (op.getVia() == Rearrangement::InThread)
          return inThread(op);
        std::string cols = std::to_string(op.getShape()[1]);
        auto reduce = op.getInput().getDefiningOp<ReduceOp>();
        const std::string line = op.getAxis() == 1 ? "i / " + cols : "i % " + cols;
        if (reduce && expandOfReduction(reduce) == op)
          return throughShared(op, reduce.getInput(), op.getResult(), [&](SharedElement element) {
            return axisReduction(reduce, line, element);
          });
        return throughShared(op, op.getInput(), op.getResult(),
                             [&](SharedElement element) { return element(line); });
      })
      .Case<SqrtOp>([&](Operation *o) { return unary(o, "mono_sqrt({0})"); })
      .Case<Exp2Op>([&](Operation *o) { return unary(o, "mono_exp2({0})"); })
      .Case<SigmoidOp>(
          [&](Operation *o) { return unary(o, "1.0f / (1.0f + mono_exp(-{0}))"); })
      .Case<NegOp>([&](Operation *o) { return unary(o, "-{0}"); })
      .Case<AbsOp>([&](Operation *o) { return unary(o, "mono_fabs({0})"); })
      .Case<FloorOp>([&](Operation *o) { return unary(o, "mono_floor({0})"); })
      .Case<ReduceOp>([&](ReduceOp r) -> LogicalResult {
        if (r.getVia() == Rearrangement::InThread)
          return inThread(r);
        if (r.getShape()) {
          // Small axis reductions: through shared memory, each result summed
          // in index order by one thread; one that an expand takes whole is
          // printed there.
          if (expandOfReduction(r))
            return success();
          return throughShared(r, r.getInput(), r.getResult(), [&](SharedElement element) {
            return axisReduction(r, "i", element);
          });
        }
        FailureOr<std::string> shared = callShared(r);
        if (failed(shared))
          return failure();
        std::string name = define(r.getResult(), "t");
        os << "    float " << name << "[1];\n    " << name
           << "[0] = mono_block_reduce<" << slotsOf(r.getInput()) << ", "
           << sizeOf(r.getInput()) << ", " << static_cast<int>(r.getKind()) << ">("
           << nameOf(r.getInput()) << ", " << *shared << ");\n";
        return success();
      })
      .Case<QuantizeMxfp8Op>([&](QuantizeMxfp8Op q) -> LogicalResult {
        FailureOr<std::string> shared = callShared(q);
        if (failed(shared))
          return failure();
        std::string codes = define(q.getCodes(), "t");
        std::string scales = define(q.getScales(), "t");
        declareTile(q.getCodes(), codes);
        declareTile(q.getScales(), scales);
        os << "    mono_quantize_mxfp8<" << slotsOf(q.getInput()) << ", "
           << slotsOf(q.getScales()) << ", " << sizeOf(q.getInput()) << ", "
           << q.getGroup() << ">(" << nameOf(q.getInput()) << ", " << codes << ", " << scales
           << ", " << static_cast<int>(q.getVariant()) << ", " << *shared << ");\n";
        return success();
      })
      .Case<AttendChunkOp>([&](AttendChunkOp a) {
        RegionOp q = lookupRegion(a, a.getQAttr()), cache = lookupRegion(a, a.getCacheAttr());
        std::string m = define(a.getM(), "t"), l = define(a.getL(), "t"), p = define(a.getP(), "t");
        declareTile(a.getM(), m);
        declareTile(a.getL(), l);
        declareTile(a.getP(), p);
        // The matrix-core forms (attend_batch.h) take the whole chunk as one batch.
        const AttendLowering lowering = a.getLowering().value_or(AttendLowering::FmaChains);
        const bool mma = lowering != AttendLowering::FmaChains;
        os << "    "
           << (lowering == AttendLowering::Bf16Mfma  ? "mono_attend_chunk_mfma<"
               : lowering == AttendLowering::WarpMma ? "mono_attend_chunk_mma<"
                                                     : "mono_attend_chunk<")
           << a.getHeads()
           << ", " << a.getHeadDim() << ", " << a.getNope() << ", " << a.getKeys() << ", ";
        if (!mma)
          os << AttendChunkOp::kKeyBatch << ", ";
        os << a.getPageTokens() << ", " << a.getDataBytes() << ", " << slotsOf(a.getSlots())
           << ", " << slotsOf(a.getM()) << ", " << slotsOf(a.getP());
        if (!mma)
          os << ", " << a.scoreParts(block);
        os << ">((const mono_u16 *)"
           << regionPointer(q.getSymName()) << " + " << nameOf(a.getRow()) << " * "
           << q.getCols() << " + " << nameOf(a.getCol()) << ", (const mono_u8 *)"
           << regionPointer(cache.getSymName()) << ", " << cache.getCols() << ", "
           << llvm::formatv("{0:e9}", a.getScoreScale()) << "f, "
           << nameOf(a.getSlots()) << ", " << m << ", " << l << ", " << p << ", mono_lds);\n";
        return success();
      })
      .Case<GemvRowsOp>([&](GemvRowsOp g) -> LogicalResult {
        if ((g.getLowering() == GemvLowering::FmaChains ||
             g.getLowering() == GemvLowering::FmaChainsF32) &&
            !g->hasAttr(MonoDialect::ChunkTokensAttrHelper::getNameStr()))
          return g.emitOpError() << "has no mono.chunk_tokens; run mono-prepare-emission first";
        RegionOp x = lookupRegion(g, g.getXAttr());
        Value res = g.getResult();
        std::string name = define(res, "t");
        declareTile(res, name);
        GemvRowsShape shape = gemvRowsShape(g);
        const bool scaled = static_cast<bool>(g.getWeightScales());
        RegionOp xs = scaled ? lookupRegion(g, g.getXScalesAttr()) : RegionOp();
        auto slice = prefetched.find(g);
        if (slice != prefetched.end())
          os << "    " << shape.run << "<" << slotsOf(res) << ", " << shape.args << ">("
             << slice->second << ", ";
        else
          os << "    " << shape.whole << "<" << slotsOf(res) << ", " << shape.args << ">(";
        os << shape.weightArgs << ", (const void *)" << regionPointer(x.getSymName()) << ", "
           << (scaled ? "(const mono_u8 *)" + regionPointer(xs.getSymName()) : "nullptr")
           << ", " << nameOf(g.getFirstToken()) << ", " << name << ", mono_lds"
           << (g.getCount() ? ", (int)" + nameOf(g.getCount()) : std::string()) << ");\n";
        return success();
      })
      .Case<GemvOp>([&](GemvOp g) {
        RegionOp weight = lookupRegion(g, g.getWeightAttr());
        Value res = g.getResult();
        std::string name = define(res, "t");
        declareTile(res, name);
        int64_t n = sizeOf(res), k = weight.getCols();
        if (weight.getElementType().isBF16()) {
          os << "    mono_gemv_bf16<" << slotsOf(g.getX()) << ", " << slotsOf(res)
             << ", " << n << ", " << k << ">(" << nameOf(g.getX())
             << ", (const mono_u16 *)" << regionPointer(weight.getSymName()) << ", "
             << nameOf(g.getRow()) << ", " << name << ", mono_lds);\n";
          return success();
        }
        RegionOp scales = lookupRegion(g, g.getWeightScalesAttr());
        os << "    mono_gemv_e4m3<" << slotsOf(g.getX()) << ", "
           << slotsOf(g.getXScales()) << ", " << slotsOf(res) << ", " << n << ", "
           << k << ">(" << nameOf(g.getX()) << ", " << nameOf(g.getXScales())
           << ", (const mono_u8 *)" << regionPointer(weight.getSymName())
           << ", (const mono_u8 *)" << regionPointer(scales.getSymName()) << ", "
           << scales.getCols() << ", " << nameOf(g.getRow()) << ", " << name
           << ", mono_lds);\n";
        return success();
      })
      .Case<SyncOp>([&](SyncOp sync) {
        os << "    mono_block_sync();";
        if (!sync.getNote().empty())
          os << "  // " << sync.getNote();
        os << "\n";
        return success();
      })
      .Case<WaitOp>([&](WaitOp w) {
        auto once = onceWaits.find(w);
        if (once != onceWaits.end())
          os << "    if (!" << once->second << ") {\n  ";
        os << "    mono_wait_flags((const mono_u64 *)" << regionPointer(w.getFlags()) << ", "
           << nameOf(w.getFirst()) << ", " << nameOf(w.getCount()) << ", mono_tag, "
           << waitSiteArguments(w) << ");\n";
        if (once != onceWaits.end())
          os << "      " << once->second << " = true;\n    }\n";
        return success();
      })
      .Case<SkipUnlessOp>([&](SkipUnlessOp skip) {
        if (!skip.getRest()) {
          os << "    if (" << nameOf(skip.getCount())
             << " > 0) {  // else the task has nothing to do\n";
          return success();
        }
        // No later task has anything to do either: this CTA publishes the
        // flags of those it would have run (every later one where tasks are
        // claimed) and leaves the stage. The count is the same in every
        // thread, so the whole block leaves.
        auto stage = skip->getParentOfType<StageOp>();
        auto publishes = stage.getBodyBlock().getOps<PublishOp>();
        os << "    if (" << nameOf(skip.getCount())
           << " <= 0) {  // neither this task nor any later one has anything to do\n";
        const bool calls = options.stageTimers == emit::StageTimers::Calls;
        if (!publishes.empty()) {
          if (calls)
            os << "      mono_prof_t0 = mono_clock_ns();\n";
          os << "      mono_publish_rest((mono_u64 *)"
             << regionPointer((*publishes.begin()).getFlags()) << ", task, "
             << stage.getTasks() << ", "
             << (stage->hasAttr("mono.claim") ? "1" : "MONO_GRID") << ", mono_tag);\n";
          if (calls)
            os << "      mono_prof_publish += mono_clock_ns() - mono_prof_t0;\n";
        }
        if (stageTimers())
          os << "      mono_prof_rest = task + 1;\n";
        os << "      break;  // the stage's later tasks skip too\n    }\n    {\n";
        return success();
      })
      .Case<PublishOp>([&](PublishOp p) {
        if (!handOverCounter.empty() && p.getOperation() == &p->getBlock()->back()) {
          os << "    task = mono_publish_and_claim((mono_u64 *)" << regionPointer(p.getFlags())
             << ", " << nameOf(p.getTask()) << ", mono_tag, " << handOverCounter
             << ", &mono_claim, mono_ahead);\n";
          return success();
        }
        os << "    mono_publish_flag((mono_u64 *)" << regionPointer(p.getFlags()) << ", "
           << nameOf(p.getTask()) << ", mono_tag);\n";
        return success();
      })
      .Default([&](Operation *o) -> LogicalResult {
        return o->emitOpError() << "has no HIP printing";
      });
}

} // namespace

std::string emit::kernelName(LaunchOp launch) { return kernelName(launch.getSymName()); }

std::string emit::kernelName(llvm::StringRef launchName) {
  std::string name = "mono_";
  for (char c : launchName)
    name += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return name;
}

LogicalResult emit::printHip(LaunchOp launch, llvm::raw_ostream &os,
                             const HipPrintOptions &options) {
  return LaunchPrinter(launch, os, options).print();
}

std::string emit::stageReads(LaunchOp launch) {
  std::string text;
  llvm::raw_string_ostream os(text);
  int64_t index = 0;
  for (auto stage : launch.getBodyBlock().getOps<StageOp>()) {
    llvm::StringSet<> read;
    stage.walk([&](Operation *op) {
      if (isa<StoreOp, StorePeerOp, PublishOp, PublishPeerOp, WaitOp, WaitPeerOp>(op))
        return;
      for (NamedAttribute attr : op->getAttrs())
        if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
          if (RegionOp region = lookupRegion(op, ref))
            read.insert(region.getSymName());
    });
    for (auto region : launch.getBodyBlock().getOps<RegionOp>())
      if (read.contains(region.getSymName()) && !region->hasAttr("mono.offset") &&
          region.getKind() != MemoryKind::Epoch && region.getKind() != MemoryKind::Peer &&
          !region->hasAttr("mono.peer"))
        os << "reads " << index << " " << region.getSymName() << "\n";
    ++index;
  }
  return text;
}

// The manifest is the runtime's LaunchInterface of the launch, printed by
// the runtime's own writer, so that the two never disagree on a line.
std::string emit::kernelManifest(LaunchOp launch) {
  runtime::LaunchInterface m;
  m.kernelName = kernelName(launch);
  m.grid = launch.getGrid();
  m.block = launch.getBlock();
  m.rows = launch.getRows();
  if (auto scratch = launch->getAttrOfType<IntegerAttr>("mono.scratch_bytes"))
    m.scratchBytes = scratch.getInt();
  m.epochWords = epochWords(launch.getGrid());
  if (auto tag = launch->getAttrOfType<IntegerAttr>("mono.tag_offset"))
    m.stepTag = tag.getInt();
  auto ends = launch->getAttrOfType<BoolAttr>("mono.advance_epoch");
  m.endsStep = !ends || ends.getValue();
  if (auto lds = launch->getAttrOfType<IntegerAttr>("mono.lds_bytes");
      lds && usesDynamicShared(launch.getArch(), lds.getInt()))
    m.dynamicSharedBytes = lds.getInt();
  int64_t index = 0;
  for (auto stage : launch.getBodyBlock().getOps<StageOp>())
    m.stages.push_back({index++, stage.getSymName().str(), int64_t(stage.getTasks())});
  for (auto [site, op] : llvm::enumerate(waitSites(launch))) {
    auto peer = dyn_cast<WaitPeerOp>(op);
    m.waits.push_back({int64_t(site), op->getParentOfType<StageOp>().getSymName().str(),
                       (peer ? peer.getFlags() : cast<WaitOp>(op).getFlags()).str(),
                       peer ? int64_t(peer.getRank()) : -1});
  }
  if (auto slot = launch->getAttrOfType<IntegerAttr>("mono.peer_slot_bytes")) {
    m.ranks = launch.getRanks();
    m.peerSlotBytes = slot.getInt();
  }
  for (auto region : launch.getBodyBlock().getOps<RegionOp>()) {
    if (region.getKind() == MemoryKind::Epoch || region.getKind() == MemoryKind::Peer ||
        region->hasAttr("mono.peer"))
      continue;
    runtime::RegionSpec spec;
    spec.name = region.getSymName().str();
    spec.kind = stringifyMemoryKind(region.getKind()).str();
    spec.format = formatName(region.getElementType());
    spec.rows = region.getRows();
    spec.cols = region.getCols();
    spec.bytes = regionBytes(region);
    if (auto offset = region->getAttrOfType<IntegerAttr>("mono.offset")) {
      spec.offset = offset.getInt();
      m.scratch.push_back(std::move(spec));
      continue;
    }
    if (auto bound = region.getIndexBound())
      m.indexBounds.push_back({spec.name, static_cast<int64_t>(*bound),
                               region.getIndexes() ? region.getIndexes()->str() : ""});
    if (auto from = region.getHandedFromAttr()) {
      spec.handedFromKernel = kernelName(from.getRootReference());
      spec.handedFromRegion = from.getLeafReference().str();
    }
    spec.stepResult = region.getStepResult();
    spec.rowsAtLaunch = region.getRowsAtLaunch();
    spec.colsAtLaunch = region.getColsAtLaunch();
    m.arguments.push_back(std::move(spec));
  }
  return m.text();
}
