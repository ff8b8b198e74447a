//===- GemvStage.cpp - a GEMV stage over weight row blocks and token groups ===//
#include "monodc/stages/GemvStage.h"

#include <algorithm>
#include <string>

using namespace monodc::dsl;

int64_t monodc::stages::gemvTokenGroup(int64_t rows) {
  constexpr int64_t kRequestTokens = 6;
  int64_t group = std::min(rows, kRequestTokens);
  while (group > 1 && rows % group != 0)
    --group;
  return std::max<int64_t>(group, 1);
}

int64_t monodc::stages::scaledGemvRowsPerTask(int64_t weightRows, int64_t grid,
                                              int64_t weightGroups) {
  // The smallest task whose tasks all start at once: more CTAs stream the
  // weight, each fewer bytes.
  for (int64_t rowsPerTask : {32, 64, 128})
    if (weightRows % rowsPerTask == 0 && weightGroups * (weightRows / rowsPerTask) <= grid)
      return rowsPerTask;
  // Too many even at 128: the largest task that cuts the weight into whole
  // tasks, each paying its fixed cost once for the most rows; a weight whose
  // rows are not whole 16-row tiles gets 16, which the stage refuses.
  for (int64_t rowsPerTask : {128, 64, 32})
    if (weightRows % rowsPerTask == 0)
      return rowsPerTask;
  return 16;
}

void monodc::stages::requireWholeRowBlocks(Task &t, const Region &weight, int64_t rows,
                                           int64_t rowsPerTask, const std::string &what) {
  if (rows % rowsPerTask != 0)
    t.fail("weight '" + weight.name() + "' has " + std::to_string(rows) + " " + what +
           ", not a multiple of the " + std::to_string(rowsPerTask) + " a task takes");
}

int64_t monodc::stages::rowBlockTasks(int64_t rows, int64_t rowsPerTask) {
  return (rows + rowsPerTask - 1) / rowsPerTask;
}

int64_t monodc::stages::gemvStageTasks(const Launch &launch, const GemvStage &s) {
  const int64_t rows = launch.options().rows;
  const int64_t group = s.everyToken ? rows : gemvTokenGroup(rows);
  return rows / group * rowBlockTasks(s.weight.rows(), s.rowsPerTask);
}

void monodc::stages::addGemvStage(Launch &launch, const GemvStage &s) {
  const int64_t rows = launch.options().rows;
  const int64_t group = s.everyToken ? rows : gemvTokenGroup(rows);
  const int64_t blocks = rowBlockTasks(s.weight.rows(), s.rowsPerTask);
  const bool scaled = !s.weightScales.name().empty();
  launch.stage(s.name, gemvStageTasks(launch, s), [&](Task &t) {
    requireWholeRowBlocks(t, s.weight, s.weight.rows(), s.rowsPerTask);
    Index firstToken = (t.id() / blocks) * group;
    Index firstRow = (t.id() % blocks) * s.rowsPerTask;
    Tile out = scaled ? t.gemvRows(s.weight, s.weightScales, firstRow, s.rowsPerTask, s.x,
                                   s.xScales, firstToken, group)
                      : t.gemvRows(s.weight, firstRow, s.rowsPerTask, s.x, firstToken, group);
    t.storeRows(s.out, firstToken, firstRow, group,
                s.outType == DType::F32 ? out : out.to(s.outType));
  }, s.dynamic);
}
