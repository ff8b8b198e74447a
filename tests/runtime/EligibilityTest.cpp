// When the fused decode path runs a layer of a step (Eligibility.h), table by
// table: each row changes one fact of a deployment or a step that runs and
// says what must come of it.
#include "monodc/runtime/Eligibility.h"

#include <gtest/gtest.h>

#include <functional>

using namespace monodc::runtime;

namespace {

/// DSV41 at TP 2 on a whole MI355X with gfx950 kernels: runs every layer.
Deployment mi355x() {
  Deployment d;
  d.model = "dsv41";
  d.arch = "gfx950";
  d.builtArchs = {"gfx950"};
  d.tp = 2;
  d.computeUnits = 256;
  return d;
}

StepFacts decode(int64_t rows) {
  StepFacts s;
  s.rows = rows;
  return s;
}

} // namespace

TEST(Eligibility, ADeploymentThatCannotRunIsAnErrorNamingWhy) {
  struct Row {
    const char *what;
    std::function<void(Deployment &)> change;
    const char *message;  ///< nullptr: the deployment is fine
  };
  const Row rows[] = {
      {"as built", [](Deployment &) {}, nullptr},
      {"TP 4", [](Deployment &d) { d.tp = 4; }, nullptr},
      {"sm_90 built and present",
       [](Deployment &d) {
         d.arch = "sm_90";
         d.builtArchs = {"gfx950", "sm_90"};
         d.computeUnits = 132;
       },
       nullptr},
      {"no built list: every target", [](Deployment &d) { d.builtArchs.clear(); }, nullptr},
      {"a grid of its own",
       [](Deployment &d) {
         d.grid = 128;
         d.computeUnits = 128;
       },
       nullptr},
      {"unknown arch", [](Deployment &d) { d.arch = "gfx1100"; },
       "arch 'gfx1100' is not a target (known: "},
      {"arch not built", [](Deployment &d) { d.arch = "gfx942"; },
       "arch 'gfx942' has no kernels in this deployment (built: gfx950)"},
      {"TP 1", [](Deployment &d) { d.tp = 1; },
       "TP 1 is not served (the kernels take 2 or 4)"},
      {"TP 8", [](Deployment &d) { d.tp = 8; },
       "TP 8 is not served (the kernels take 2 or 4)"},
      {"expert parallelism", [](Deployment &d) { d.expertParallel = 2; },
       "expert parallelism 2 is not served"},
      {"data parallelism", [](Deployment &d) { d.dataParallel = 2; },
       "data parallelism 2 is not served"},
      {"bf16 experts", [](Deployment &d) { d.routedWeights = "bf16"; },
       "routed expert weights 'bf16' are not served"},
      {"a partitioned GPU", [](Deployment &d) { d.computeUnits = 64; },
       "the device offers 64 compute units and the kernels need 256"},
      {"the largest KV cache", [](Deployment &d) { d.kvCachePages = 524288; }, nullptr},
      {"a KV cache past 2^24 slots", [](Deployment &d) { d.kvCachePages = 524289; },
       "KV caches of 524289 pages are not served (the kernels address at most 524288 pages of "
       "32 tokens: 2^24 slots)"},
      {"2^24 positions", [](Deployment &d) { d.maxPositions = int64_t(1) << 24; }, nullptr},
      {"more positions than f32 counts", [](Deployment &d) { d.maxPositions = (int64_t(1) << 24) + 1; },
       "16777217 positions are not served (the kernels take a RoPE table of at most 16777216 rows"},
      {"another model", [](Deployment &d) { d.model = "llama"; },
       "no layer map for model 'llama'"},
  };
  for (const Row &row : rows) {
    SCOPED_TRACE(row.what);
    Deployment d = mi355x();
    row.change(d);
    const Status status = checkDeployment(d);
    if (!row.message) {
      EXPECT_TRUE(status.ok()) << status.message();
      continue;
    }
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.message().rfind(row.message, 0), 0u) << status.message();
    // The step-level call refuses it the same way: an error, not a fallback.
    const Result<Eligibility> e = eligibility(d, 3, decode(6));
    ASSERT_FALSE(e);
    EXPECT_EQ(e.message(), status.message());
  }
}

TEST(Eligibility, StepsThePathDoesNotServeFallBackWithTheReason) {
  struct Row {
    const char *what;
    std::function<void(StepFacts &)> change;
    const char *reason;  ///< nullptr: it runs
    int64_t width;
  };
  const Row rows[] = {
      {"6 rows", [](StepFacts &) {}, nullptr, 8},
      {"1 row", [](StepFacts &s) { s.rows = 1; }, nullptr, 1},
      {"48 rows", [](StepFacts &s) { s.rows = 48; }, nullptr, 48},
      {"17 rows", [](StepFacts &s) { s.rows = 17; }, nullptr, 24},
      {"49 rows", [](StepFacts &s) { s.rows = 49; }, "49 rows (the kernels serve 1..48)", 0},
      {"0 rows", [](StepFacts &s) { s.rows = 0; }, "0 rows (the kernels serve 1..48)", 0},
      {"prefill", [](StepFacts &s) { s.uniformDecode = false; },
       "not a uniform decode step (prefill or mixed)", 0},
      {"piecewise capture", [](StepFacts &s) { s.piecewiseCapture = true; },
       "a piecewise graph capture, which may replay mixed batches", 0},
      {"non-causal", [](StepFacts &s) { s.causal = false; }, "a non-causal attention window", 0},
      {"the last position served", [](StepFacts &s) { s.maxPosition = 131071; }, nullptr, 8},
      {"a position past the deployment's RoPE table",
       [](StepFacts &s) { s.maxPosition = 131072; },
       "position 131072 is past the 131072 positions the deployment serves (the RoPE table and "
       "block tables it binds)",
       0},
      {"a position past 2^24", [](StepFacts &s) { s.maxPosition = int64_t(1) << 24; },
       "position 16777216 is past the 16777216 positions the kernels serve", 0},
      {"no metadata", [](StepFacts &s) { s.metadata = false; },
       "the step's positions, slot mapping, block tables or top-k lists are missing", 0},
  };
  for (const Row &row : rows) {
    SCOPED_TRACE(row.what);
    StepFacts step = decode(6);
    row.change(step);
    Deployment d = mi355x();
    d.maxPositions = 131072; // a 128K context: tables given at launch
    const Result<Eligibility> e = eligibility(d, 3, step);
    ASSERT_TRUE(e) << e.message();
    EXPECT_EQ(e->runs, row.reason == nullptr);
    EXPECT_EQ(e->reason, row.reason ? row.reason : "");
    EXPECT_EQ(e->width, row.width);
  }
}

TEST(Eligibility, EachLayerRunsTheLaunchesAndRatioOfTheLayerMap) {
  struct Row {
    int64_t layer;
    std::vector<std::string> launches;
    int64_t ratio;
  };
  const Row rows[] = {{0, {"ffn"}, 0},        {2, {"ffn"}, 2},         {3, {"k1", "k2"}, 2},
                      {19, {"k1", "k2"}, 2}, {20, {"ffn"}, 1},        {21, {"k1", "k2"}, 1},
                      {36, {"ffn"}, 1},       {39, {"k1", "k2"}, 1}};
  for (const Row &row : rows) {
    SCOPED_TRACE("layer " + std::to_string(row.layer));
    const Result<Eligibility> e = eligibility(mi355x(), row.layer, decode(6));
    ASSERT_TRUE(e) << e.message();
    EXPECT_TRUE(e->runs);
    EXPECT_EQ(e->launches, row.launches);
    EXPECT_EQ(e->ratio, row.ratio);
  }
  for (int64_t layer : {int64_t(-1), int64_t(40)}) {
    const Result<Eligibility> e = eligibility(mi355x(), layer, decode(6));
    ASSERT_FALSE(e);
    EXPECT_EQ(e.message(), "layer " + std::to_string(layer) + " is not a layer of dsv41 (0..39)");
  }
}
