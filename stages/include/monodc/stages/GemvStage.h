//===- GemvStage.h - a GEMV stage over weight row blocks and token groups -===//
//
// Many stages are one GEMV of the step's tokens against a weight, a task a
// block of weight rows. Where those blocks are few and each token costs its
// own FMAs (the bf16 and f32 GEMVs of the seam mixes and the router), a
// wide step would leave most of the grid idle while a few CTAs stream every
// token, so the tokens split into groups and a task is a (token group, row
// block); the e4m3 GEMVs, on the matrix cores, take every token
// (scaledGemvRowsPerTask). Each token's sums are the same whatever its
// group.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_STAGES_GEMVSTAGE_H
#define MONODC_STAGES_GEMVSTAGE_H

#include "monodc/dsl/Launch.h"

#include <string>

namespace monodc::stages {

/// Tokens a task of a GEMV stage takes: all of a step of up to 6 (one
/// request), else the largest divisor of `rows` not above 6.
int64_t gemvTokenGroup(int64_t rows);

/// Tokens a tile of sm_90's tensor-core products takes (the 8 columns of an
/// m16n8k16 mma, arch_cuda.h; gfx950's scaled MFMA takes 16).
constexpr int64_t kGemvTokenTile = 8;

/// Weight rows a task of an e4m3 GEMV of `weightRows` rows takes, for a
/// launch of `grid` CTAs. A task takes a block of weight rows and every
/// token of the step: on the matrix cores tokens are a tile's columns, so
/// the tokens of a step up to a tile cost what one token costs, and a split
/// into token groups would only read each block again (a step of 8 as two
/// groups of 4 measured slower than one task of 8 on an H100). A stage of
/// `weightGroups` (wo_a's output groups) has that many tasks a block. The
/// block is the smallest of 32, 64 or 128 rows whose
/// tasks cut the weight whole and all start at once (at most `grid`), so
/// that as many CTAs as can stream the weight, each the fewest bytes; where
/// even 128 gives more tasks than CTAs, the largest that cuts it whole (128,
/// 64, 32, else 16: a weight not of whole 16-row tiles is then refused by
/// its stage), so that a CTA's fixed cost a task (staging its tokens, its
/// block reduction, its publish) is paid for the most rows. On 66 CTAs this
/// gives wqkv (1792 rows) 32-row tasks, wo_a (4 groups of 1024) and the
/// shared gate_up (2304) 64, wo_b, the shared down (5120) and wq_b (16384)
/// 128, the sizes at which each stage's busiest CTA measured quickest. A
/// task stages its tokens in shared memory and converts each block of
/// weights once for all of them (sm_90's tensor cores, device-library.md),
/// so small tasks of many tokens would stage more token bytes than weight
/// bytes and read their weights once a pass of a few tokens.
int64_t scaledGemvRowsPerTask(int64_t weightRows, int64_t grid, int64_t weightGroups = 1);

/// Fails the task (naming the weight) when `rows` of it (all its rows, or
/// `what` says which: e.g. "rows a group") are not whole blocks of
/// rowsPerTask: the tasks would leave the rest unwritten.
void requireWholeRowBlocks(dsl::Task &t, const dsl::Region &weight, int64_t rows,
                           int64_t rowsPerTask, const std::string &what = "rows");

/// The tasks that cover `rows` weight rows, rowsPerTask a task, rounded up:
/// a weight smaller than one task still gets a task, whose
/// requireWholeRowBlocks then refuses it by name (a stage of no tasks would
/// be refused without naming the weight).
int64_t rowBlockTasks(int64_t rows, int64_t rowsPerTask);

struct GemvStage {
  std::string name;
  dsl::Region weight;
  dsl::Region weightScales; ///< E8M0 block scales; unset for bf16/f32 weights
  dsl::Region x;            ///< the tokens, [rows, K]
  dsl::Region xScales;      ///< E8M0 per 32 of an MXFP8 x; unset otherwise
  dsl::Region out;          ///< [rows, weight rows]
  int64_t rowsPerTask;
  dsl::DType outType;       ///< the results are rounded to it (f32: kept)
  bool everyToken = false;  ///< one token group: the whole step
  bool dynamic = false;     ///< tasks claimed at run time (Launch::stage)
};

/// out[token][row] = x[token] . weight[row], a task a (token group, block
/// of rowsPerTask rows; with everyToken, the group is every token),
/// group-major: the tasks of one token group are consecutive, so a consumer
/// of a token's whole row waits for one range.
void addGemvStage(dsl::Launch &launch, const GemvStage &stage);

/// How many tasks addGemvStage gives `stage` in `launch`.
int64_t gemvStageTasks(const dsl::Launch &launch, const GemvStage &stage);

} // namespace monodc::stages

#endif
