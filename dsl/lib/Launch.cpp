//===- Launch.cpp - declare a launch, its regions and its stages ----------===//
#include "monodc/dsl/Launch.h"

#include "monodc/Dialect/Mono/MonoDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace monodc;
using namespace monodc::dsl;

Launch::Launch(MLIRContext &context, const std::string &name, LaunchOptions options)
    : mlirContext(&context), launchName(name), launchOptions(std::move(options)) {
  context.loadDialect<mono::MonoDialect, arith::ArithDialect>();
  OpBuilder builder(&context);
  Location loc = NameLoc::get(builder.getStringAttr(name));
  module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto launch = mono::LaunchOp::create(
      builder, loc, builder.getStringAttr(name), builder.getStringAttr(launchOptions.arch),
      builder.getI64IntegerAttr(launchOptions.grid),
      builder.getI64IntegerAttr(launchOptions.block),
      builder.getI64IntegerAttr(launchOptions.rows),
      builder.getI64IntegerAttr(launchOptions.ranks));
  launch.getBody().emplaceBlock();
  launch->setAttr("mono.step_tag", builder.getI64IntegerAttr(launchOptions.stepTag));
  launch->setAttr("mono.ends_step", builder.getBoolAttr(launchOptions.endsStep));
  launchOp = launch;
}

void Launch::report(const std::string &stage, const std::string &message) {
  diagnostics.push_back("launch '" + launchName + "', stage '" + stage + "': " + message);
}

dsl::Region Launch::declare(const std::string &name, int kind, DType type,
                       std::vector<int64_t> shape, int64_t indexBound, Rows rows, Cols cols) {
  dsl::Region region;
  region.owner = this;
  region.regionName = name;
  region.type = type;
  region.extents = shape;
  region.bound = indexBound;
  region.launchRows = rows == Rows::AtLaunch;
  region.launchCols = cols == Cols::AtLaunch;
  auto regionKind = static_cast<mono::MemoryKind>(kind);
  region.isWritable = regionKind != mono::MemoryKind::Input &&
                      regionKind != mono::MemoryKind::Weight;
  if (sawStage) {
    diagnostics.push_back("launch '" + launchName + "': region '" + name +
                          "' is declared after a stage; declare regions first");
    return region;
  }
  if (llvm::is_contained(regionNames, name)) {
    diagnostics.push_back("launch '" + launchName + "': region '" + name +
                          "' is declared twice");
    return region;
  }
  if (shape.empty() || shape.size() > 2 ||
      llvm::any_of(shape, [](int64_t e) { return e <= 0; })) {
    diagnostics.push_back("launch '" + launchName + "': region '" + name +
                          "' needs one or two positive extents");
    return region;
  }
  if (region.launchRows && shape.size() != 2) {
    diagnostics.push_back("launch '" + launchName + "': region '" + name +
                          "' is sized at launch, which needs two extents (rows, columns)");
    return region;
  }
  if (region.launchCols && (shape.size() != 2 || indexBound == 0 || region.launchRows)) {
    diagnostics.push_back("launch '" + launchName + "': region '" + name +
                          "' has its columns given at launch, which only a 2-D index input with "
                          "fixed rows may have");
    return region;
  }
  regionNames.push_back(name);
  auto launch = cast<mono::LaunchOp>(launchOp);
  OpBuilder builder = OpBuilder::atBlockEnd(&launch.getBodyBlock());
  auto op = mono::RegionOp::create(
      builder, NameLoc::get(builder.getStringAttr(name)), name, regionKind,
      toMlirType(type, *mlirContext), shape,
      indexBound > 0 ? builder.getI64IntegerAttr(indexBound) : IntegerAttr(), FlatSymbolRefAttr(),
      SymbolRefAttr());
  op.setRowsAtLaunch(region.launchRows);
  op.setColsAtLaunch(region.launchCols);
  return region;
}

dsl::Region Launch::input(const std::string &name, DType type, std::vector<int64_t> shape,
                          Rows rows) {
  return declare(name, static_cast<int>(mono::MemoryKind::Input), type, std::move(shape), 0,
                 rows);
}
dsl::Region Launch::indexInput(const std::string &name, std::vector<int64_t> shape,
                               int64_t bound, DType type, Cols cols) {
  if (bound < 1 || bound > mono::kMaxIndexBound) {
    diagnostics.push_back("launch '" + launchName + "': index input '" + name +
                          "' needs a bound in [1, 2^24] (its values load as f32), got " +
                          std::to_string(bound));
    return {};
  }
  if (type != DType::F32 && type != DType::I32 && type != DType::I64) {
    diagnostics.push_back("launch '" + launchName + "': index input '" + name +
                          "' holds " + dtypeName(type) + "; an index input holds f32, i32 or i64");
    return {};
  }
  return declare(name, static_cast<int>(mono::MemoryKind::Input), type, std::move(shape), bound,
                 Rows::Fixed, cols);
}
dsl::Region Launch::output(const std::string &name, DType type, std::vector<int64_t> shape,
                           Rows rows) {
  return declare(name, static_cast<int>(mono::MemoryKind::Output), type, std::move(shape), 0,
                 rows);
}
dsl::Region Launch::weight(const std::string &name, DType type, std::vector<int64_t> shape,
                           Rows rows) {
  return declare(name, static_cast<int>(mono::MemoryKind::Weight), type, std::move(shape), 0,
                 rows);
}
dsl::Region Launch::peer(const std::string &name, DType type, std::vector<int64_t> shape) {
  return declare(name, static_cast<int>(mono::MemoryKind::Peer), type, std::move(shape));
}
dsl::Region Launch::scratch(const std::string &name, DType type, std::vector<int64_t> shape) {
  return declare(name, static_cast<int>(mono::MemoryKind::Scratch), type, std::move(shape));
}

Operation *Launch::declaredRegion(const dsl::Region &region, const char *what) {
  if (!owns(region)) {
    diagnostics.push_back("launch '" + launchName + "': " + what + " '" + region.name() +
                          "' is not a region of this launch");
    return nullptr;
  }
  auto launch = cast<mono::LaunchOp>(launchOp);
  for (auto op : launch.getBodyBlock().getOps<mono::RegionOp>())
    if (op.getSymName() == region.name())
      return op;
  return nullptr; // declare() refused it and said why
}

void Launch::handOver(const dsl::Region &input, const std::string &producer,
                      const std::string &producerRegion) {
  auto op = dyn_cast_or_null<mono::RegionOp>(declaredRegion(input, "handed-over input"));
  if (!op)
    return;
  if (op.getKind() != mono::MemoryKind::Input) {
    diagnostics.push_back("launch '" + launchName + "': region '" + input.name() +
                          "' is handed from launch '" + producer +
                          "', which only an input may be");
    return;
  }
  MLIRContext *context = mlirContext;
  op.setHandedFromAttr(SymbolRefAttr::get(
      StringAttr::get(context, producer),
      {FlatSymbolRefAttr::get(StringAttr::get(context, producerRegion))}));
}

void Launch::indexesRowsOf(const dsl::Region &index, const dsl::Region &target) {
  auto op = dyn_cast_or_null<mono::RegionOp>(declaredRegion(index, "index input"));
  if (!op || !declaredRegion(target, "indexed region"))
    return;
  if (!index.indexBound() || !target.rowsAtLaunch() || index.indexBound() % target.rows() != 0) {
    diagnostics.push_back("launch '" + launchName + "': index input '" + index.name() +
                          "' cannot count rows of '" + target.name() +
                          "': it needs an index bound that is a multiple of the rows of a "
                          "region sized at launch");
    return;
  }
  op.setIndexesAttr(FlatSymbolRefAttr::get(mlirContext, target.name()));
}

void Launch::stepResult(const dsl::Region &output) {
  auto op = dyn_cast_or_null<mono::RegionOp>(declaredRegion(output, "step result"));
  if (!op)
    return;
  if (op.getKind() != mono::MemoryKind::Output) {
    diagnostics.push_back("launch '" + launchName + "': region '" + output.name() +
                          "' is a step result, which only an output may be");
    return;
  }
  op.setStepResult(true);
}

void Launch::stage(const std::string &name, int64_t tasks,
                   const std::function<void(Task &)> &body, bool dynamic) {
  sawStage = true;
  if (tasks <= 0) {
    report(name, "needs at least one task, got " + std::to_string(tasks));
    return;
  }
  auto launch = cast<mono::LaunchOp>(launchOp);
  OpBuilder builder = OpBuilder::atBlockEnd(&launch.getBodyBlock());
  Location loc = NameLoc::get(builder.getStringAttr(name));
  auto stage = mono::StageOp::create(builder, loc, builder.getStringAttr(name),
                                     builder.getI64IntegerAttr(tasks),
                                     dynamic ? builder.getUnitAttr() : UnitAttr());
  Block &block = stage.getBody().emplaceBlock();
  Value id = block.addArgument(builder.getIndexType(), loc);
  builder.setInsertionPointToStart(&block);
  Task task(*this, name, builder, id);
  body(task);
}

llvm::Expected<OwningOpRef<ModuleOp>> Launch::finish() {
  if (diagnostics.empty()) {
    // The verifier is the backstop: whatever the DSL let through must still
    // be a well-formed launch.
    std::string text;
    ScopedDiagnosticHandler handler(mlirContext, [&](Diagnostic &diag) {
      llvm::raw_string_ostream os(text);
      os << diag << "\n";
      return success();
    });
    if (failed(verify(*module)))
      diagnostics.push_back("launch '" + launchName + "' failed verification: " + text);
  }
  if (!diagnostics.empty()) {
    std::string all;
    for (const std::string &d : diagnostics)
      all += (all.empty() ? "" : "\n") + d;
    return llvm::createStringError(all);
  }
  return std::move(module);
}
