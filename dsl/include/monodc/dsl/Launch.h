//===- Launch.h - declare a launch, its regions and its stages --*- C++ -*-===//
#ifndef MONODC_DSL_LAUNCH_H
#define MONODC_DSL_LAUNCH_H

#include "monodc/runtime/Target.h"
#include "monodc/dsl/DType.h"
#include "monodc/dsl/Task.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace monodc::dsl {

struct LaunchOptions {
  std::string arch = std::string(runtime::kDefaultTarget);
  int64_t grid = 256;  ///< CTAs: the device's compute units
  int64_t block = 256; ///< threads per CTA
  int64_t rows = 1;    ///< tokens in the step
  int64_t ranks = 1;   ///< tensor-parallel ranks running the launch
  /// Its place in a decode step: K1 tags 2e+1 and leaves e alone; K2 and the
  /// FFN launch tag 2e+2 and end the step (move e on). Standalone launches
  /// keep the defaults.
  int64_t stepTag = 1;
  bool endsStep = true;
};

/// Whether a region's row count is fixed when the launch is built or given
/// by the caller at each launch (a KV cache's pages, sized by the engine).
enum class Rows { Fixed, AtLaunch };
/// An index input whose column count (its row stride) the caller gives at
/// each launch, as a serving engine sizes a block table by the longest
/// sequence it serves (read with Task::loadAt, counted with Task::colsOf).
enum class Cols { Fixed, AtLaunch };

/// Builds one mono.launch. Mistakes (dtype or shape mismatch, writing a
/// weight, reading a region this launch does not declare) are collected as
/// diagnostics naming the stage and region; finish() then fails with all of
/// them instead of returning a kernel.
class Launch {
public:
  Launch(mlir::MLIRContext &context, const std::string &name, LaunchOptions options);
  Launch(const Launch &) = delete;
  Launch &operator=(const Launch &) = delete;

  /// With Rows::AtLaunch (a 2-D input or output), `shape`'s rows are only
  /// what a simulation allocates unless told otherwise.
  Region input(const std::string &name, DType type, std::vector<int64_t> shape,
               Rows rows = Rows::Fixed);
  /// An input of whole numbers in [0, bound), or -1 for a pad row or a
  /// masked entry: a position into a table, a slot of a cache, a page of a
  /// block table. It holds them as `type` (f32, or i32 or i64 as a serving
  /// engine does); loads give them as f32 tiles, exactly (bound <= 2^24).
  Region indexInput(const std::string &name, std::vector<int64_t> shape, int64_t bound,
                    DType type = DType::F32, Cols cols = Cols::Fixed);
  Region output(const std::string &name, DType type, std::vector<int64_t> shape,
                Rows rows = Rows::Fixed);
  /// With Rows::AtLaunch, a table the caller sizes (the RoPE table's
  /// positions), as for an input.
  Region weight(const std::string &name, DType type, std::vector<int64_t> shape,
                Rows rows = Rows::Fixed);
  Region scratch(const std::string &name, DType type, std::vector<int64_t> shape);
  /// Memory every rank writes into for every other: one slot of `shape` per
  /// source rank in each rank's peer buffer.
  Region peer(const std::string &name, DType type, std::vector<int64_t> shape);

  /// `index` (an index input) counts rows of `target`, a region sized at
  /// launch: `index`'s bound is per `target.rows()` nominal rows and grows
  /// with the rows given at launch (a block table's pages, a slot mapping's
  /// slots of a KV cache).
  void indexesRowsOf(const Region &index, const Region &target);

  /// A launch of a decode step: `input` holds what the step's earlier launch
  /// `producer` wrote into its output `producerRegion` (the runtime binds the
  /// two to one buffer).
  void handOver(const Region &input, const std::string &producer,
                const std::string &producerRegion);
  /// A launch of a decode step: the step's caller reads `output` after the
  /// step (the layer's streams, a cache written in place); the step's other
  /// outputs live only inside it.
  void stepResult(const Region &output);

  /// Adds a stage of `tasks` tasks; `body` builds one task's program. The
  /// tasks of a `dynamic` stage are claimed at run time by whichever CTA is
  /// free (work whose cost depends on data); at most two a launch.
  void stage(const std::string &name, int64_t tasks,
             const std::function<void(Task &)> &body, bool dynamic = false);

  const LaunchOptions &options() const { return launchOptions; }
  const std::string &name() const { return launchName; }

  /// The module holding the launch, verified; or every diagnostic.
  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> finish();

  // Used by Task and Tile.
  void report(const std::string &stage, const std::string &message);
  bool owns(const Region &region) const { return region.owner == this; }
  mlir::MLIRContext &context() { return *mlirContext; }

private:
  Region declare(const std::string &name, int kind, DType type,
                 std::vector<int64_t> shape, int64_t indexBound = 0, Rows rows = Rows::Fixed,
                 Cols cols = Cols::Fixed);
  /// The region op this launch declared for `region`, or null with a diagnostic.
  mlir::Operation *declaredRegion(const Region &region, const char *what);

  mlir::MLIRContext *mlirContext;
  std::string launchName;
  LaunchOptions launchOptions;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Operation *launchOp = nullptr;
  std::vector<std::string> regionNames;
  bool sawStage = false;
  std::vector<std::string> diagnostics;
};

} // namespace monodc::dsl

#endif // MONODC_DSL_LAUNCH_H
