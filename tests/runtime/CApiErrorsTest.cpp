// Bad input through the C ABI (monodc.h), one test per class of
// docs/reliability.md's table: null pointers, requests and keys that do not
// parse or match, a missing HIP runtime, and wrong buffers given to a
// launcher (unknown region, null pointer, a launcher-owned buffer, the rank
// as memory, an unbound region, a rank the kernel does not have). Each gets
// an error whose exact text is checked; none crashes. The launcher runs
// over the stand-in HIP runtime (FakeHip.c), chosen with MONODC_HIP_LIBRARY.
#include "monodc/runtime/monodc.h"

#include "support/TestSupport.h"

#include "monodc/runtime/CodeObjectCache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>

using namespace monodc::testing;

namespace {

/// Whether `text` starts with `start` and contains every one of `parts`.
::testing::AssertionResult saysAll(const std::string &text, const std::string &start,
                                   std::initializer_list<std::string> parts = {}) {
  if (text.rfind(start, 0) != 0)
    return ::testing::AssertionFailure() << "'" << text << "' does not start with '" << start << "'";
  for (const std::string &part : parts)
    if (text.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "'" << text << "' does not say '" << part << "'";
  return ::testing::AssertionSuccess();
}

/// The message of `error` (freed), or "(no error)".
std::string take(monodc_error *error) {
  if (!error)
    return "(no error)";
  std::string message = monodc_error_message(error);
  monodc_error_free(error);
  return message;
}

struct ScopedEnv {
  ScopedEnv(const char *n, const char *value) : name(n) {
    if (const char *old = std::getenv(n))
      saved = old, had = true;
    setenv(n, value, 1);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name, saved.c_str(), 1);
    else
      unsetenv(name);
  }
  const char *name;
  std::string saved;
  bool had = false;
};

/// A session over a cache holding sampleEntry(sampleKey()) (dsv41
/// attention_front, gfx950, TP 2, rows 6; regions u, w, y), and its kernel.
struct CApiErrors : ::testing::Test {
  void SetUp() override {
    monodc::runtime::CodeObjectCache cache({dir.path(), nullptr});
    cache.store(sampleEntry(sampleKey()));
    ASSERT_TRUE(cache.writesToDisk());
    ASSERT_EQ(take(monodc_session_open(dir.path().c_str(), &session)), "(no error)");
    ASSERT_EQ(take(monodc_session_kernel(session, "rows=6", &kernel)), "(no error)");
  }
  void TearDown() override { monodc_session_close(session); }

  /// A launcher of the kernel over the stand-in HIP runtime.
  monodc_launcher *launcher() {
    ScopedEnv hip("MONODC_HIP_LIBRARY", MONODC_FAKE_HIP_PATH);
    monodc_launcher *made = nullptr;
    EXPECT_EQ(take(monodc_launcher_create(kernel, 0, &made)), "(no error)");
    return made;
  }

  TempDir dir;
  monodc_session *session = nullptr;
  const monodc_kernel *kernel = nullptr;
};

TEST_F(CApiErrors, NullOutPointers) {
  EXPECT_EQ(take(monodc_session_open(dir.path().c_str(), nullptr)),
            "monodc_session_open: session is null");
  const monodc_kernel *k = nullptr;
  EXPECT_EQ(take(monodc_session_kernel(session, nullptr, &k)),
            "monodc_session_kernel: a null argument");
  EXPECT_EQ(take(monodc_session_kernel(nullptr, "rows=6", &k)),
            "monodc_session_kernel: a null argument");
  EXPECT_EQ(take(monodc_session_kernel_by_key(session, nullptr, &k)),
            "monodc_session_kernel_by_key: a null argument");
  EXPECT_EQ(take(monodc_kernel_argument_get(kernel, 0, nullptr)),
            "monodc_kernel_argument_get: a null argument");
  EXPECT_EQ(take(monodc_kernel_resources_get(kernel, nullptr)),
            "monodc_kernel_resources_get: a null argument");
  monodc_launcher *l = nullptr;
  EXPECT_EQ(take(monodc_launcher_create(nullptr, 0, &l)),
            "monodc_launcher_create: a null argument");
  EXPECT_EQ(take(monodc_launcher_create(kernel, 0, nullptr)),
            "monodc_launcher_create: a null argument");
  EXPECT_EQ(take(monodc_launcher_bind(nullptr, "u", this)), "monodc_launcher_bind: a null argument");
  EXPECT_EQ(take(monodc_launcher_bind_buffer(nullptr, "u", this, 64)),
            "monodc_launcher_bind_buffer: a null argument");
  EXPECT_EQ(take(monodc_launcher_launch(nullptr, nullptr)),
            "monodc_launcher_launch: a null launcher");
  EXPECT_EQ(l, nullptr);
}

TEST_F(CApiErrors, PeerGroupsAndWaitChecksRefuseWhatTheyCannotUse) {
  monodc_peer_group *g = nullptr;
  EXPECT_EQ(take(monodc_peer_group_create(nullptr, 0, 0, &g)),
            "monodc_peer_group_create: a null argument");
  EXPECT_EQ(take(monodc_peer_group_create(kernel, 0, 0, nullptr)),
            "monodc_peer_group_create: a null argument");
  EXPECT_EQ(take(monodc_peer_group_create(kernel, 0, 0, &g)),
            "monodc_peer_group_create: kernel mono_attention_front uses no peer memory");
  EXPECT_EQ(g, nullptr);
  const int devices[] = {0, 1};
  monodc_peer_group *local[2] = {nullptr, nullptr};
  EXPECT_EQ(take(monodc_peer_groups_create_local(kernel, nullptr, 2, local)),
            "monodc_peer_groups_create_local: a null argument or no ranks");
  EXPECT_EQ(take(monodc_peer_groups_create_local(kernel, devices, 2, local)),
            "monodc_peer_groups_create_local: kernel mono_attention_front uses no peer memory");
  EXPECT_EQ(local[0], nullptr);
  EXPECT_EQ(take(monodc_peer_group_connect(nullptr, nullptr, nullptr, 0)),
            "monodc_peer_group_connect: a null argument or a negative count");
  EXPECT_EQ(take(monodc_peer_group_exchange(nullptr, "/tmp", 0)),
            "monodc_peer_group_exchange: a null argument");
  const uint8_t *bytes = nullptr;
  EXPECT_EQ(monodc_peer_group_handle(nullptr, &bytes), 0u);
  EXPECT_EQ(monodc_peer_group_table(nullptr), nullptr);
  EXPECT_EQ(take(monodc_launcher_check_waits(nullptr, nullptr)),
            "monodc_launcher_check_waits: a null launcher");
  EXPECT_EQ(take(monodc_launcher_set_wait_budget(nullptr, 1)),
            "monodc_launcher_set_wait_budget: a null launcher");
  EXPECT_EQ(take(monodc_launcher_reset_scratch(nullptr)),
            "monodc_launcher_reset_scratch: a null launcher");
}

TEST_F(CApiErrors, LayerStepsRefuseWhatCannotFormAStep) {
  ScopedEnv hip("MONODC_HIP_LIBRARY", MONODC_FAKE_HIP_PATH);
  monodc_layer_step *step = nullptr;
  const monodc_kernel *kernels[] = {kernel, nullptr};
  const size_t one[] = {1}, two[] = {2};
  EXPECT_EQ(take(monodc_layer_step_create(nullptr, one, 1, 0, 1, nullptr, &step)),
            "monodc_layer_step_create: a null argument");
  EXPECT_EQ(take(monodc_layer_step_create(kernels, one, 1, 0, 1, nullptr, nullptr)),
            "monodc_layer_step_create: a null argument");
  EXPECT_EQ(take(monodc_layer_step_create(kernels, one, 0, 0, 1, nullptr, &step)),
            "monodc_layer_step_create: a layer step needs at least one step width");
  EXPECT_EQ(take(monodc_layer_step_create(kernels, one, 1, 0, 0, nullptr, &step)),
            "monodc_layer_step_create: ranks_on_device must be at least 1, got 0");
  EXPECT_EQ(take(monodc_layer_step_create(kernels, two, 1, 0, 1, nullptr, &step)),
            "monodc_layer_step_create: kernel 1 is null");
  // The attention front alone hands nothing on: not a layer's launch.
  EXPECT_EQ(take(monodc_layer_step_create(kernels, one, 1, 0, 1, nullptr, &step)),
            "kernel mono_attention_front declares no step result: it is not a launch of a layer "
            "step (K1 then K2, or the FFN launch)");
  EXPECT_EQ(step, nullptr);
  EXPECT_EQ(take(monodc_layer_step_bind(nullptr, "x", this)), "monodc_layer_step_bind: a null argument");
  EXPECT_EQ(take(monodc_layer_step_bind_buffer(nullptr, "x", this, 64)),
            "monodc_layer_step_bind_buffer: a null argument");
  EXPECT_EQ(take(monodc_layer_step_bind_rank(nullptr, 0)),
            "monodc_layer_step_bind_rank: a null layer step");
  EXPECT_EQ(take(monodc_layer_step_run(nullptr, 6, nullptr)), "monodc_layer_step_run: a null layer step");
  EXPECT_EQ(take(monodc_layer_step_set_wait_budget(nullptr, 1)),
            "monodc_layer_step_set_wait_budget: a null layer step");
  EXPECT_EQ(take(monodc_layer_step_check_waits(nullptr, nullptr)),
            "monodc_layer_step_check_waits: a null layer step");
  EXPECT_EQ(take(monodc_layer_step_reset(nullptr)), "monodc_layer_step_reset: a null layer step");
  monodc_layer_step_destroy(nullptr);
}

TEST_F(CApiErrors, ANullKernelReadsAsEmpty) {
  // What a caller gets from the accessors after a failed lookup left its
  // kernel NULL: empty values, not a crash.
  size_t size = 1;
  EXPECT_STREQ(monodc_kernel_key(nullptr), "");
  EXPECT_STREQ(monodc_kernel_symbol(nullptr), "");
  EXPECT_EQ(monodc_kernel_code_object(nullptr, &size), nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(monodc_kernel_grid(nullptr), 0);
  EXPECT_EQ(monodc_kernel_block(nullptr), 0);
  EXPECT_EQ(monodc_kernel_ranks(nullptr), 0);
  EXPECT_EQ(monodc_kernel_peer_buffer_bytes(nullptr), 0);
  EXPECT_EQ(monodc_kernel_argument_count(nullptr), 0u);
  EXPECT_EQ(monodc_kernel_kernarg_bytes(nullptr), 0);
  monodc_kernel_argument argument;
  EXPECT_EQ(take(monodc_kernel_argument_get(nullptr, 0, &argument)),
            "monodc_kernel_argument_get: a null argument");
  monodc_kernel_resources resources;
  EXPECT_EQ(take(monodc_kernel_resources_get(nullptr, &resources)),
            "monodc_kernel_resources_get: a null argument");
  // Destroying and closing NULL handles is a no-op.
  monodc_launcher_destroy(nullptr);
  monodc_session_close(nullptr);
  monodc_error_free(nullptr);
  EXPECT_STREQ(monodc_error_message(nullptr), "");
}

TEST_F(CApiErrors, RequestsThatDoNotParse) {
  const monodc_kernel *k = nullptr;
  const std::string names = "with a name of model, launch, tp, rows, ratio, grid, block, arch, "
                            "features, backend, options";
  EXPECT_EQ(take(monodc_session_kernel(session, "rows=six", &k)),
            "bad kernel request 'rows=six': build key field 'rows' needs a decimal integer, "
            "got 'six'");
  EXPECT_EQ(take(monodc_session_kernel(session, "colour=red", &k)),
            "bad kernel request 'colour=red': 'colour=red' is not name=value " + names);
  EXPECT_EQ(take(monodc_session_kernel(session, "rows", &k)),
            "bad kernel request 'rows': 'rows' is not name=value " + names);
  // The rank is the launcher's (bind_rank), not part of a kernel.
  EXPECT_EQ(take(monodc_session_kernel(session, "rank=0", &k)),
            "bad kernel request 'rank=0': 'rank=0' is not name=value " + names);
  EXPECT_EQ(take(monodc_session_kernel_by_key(session, "not a key", &k)),
            "not a build key (it must start with monodc-key/1): 'not a key'");
  EXPECT_EQ(k, nullptr);
}

TEST_F(CApiErrors, RequestsThatMatchNothing) {
  const monodc_kernel *k = nullptr;
  const std::string advice = "this library has no compiler: prebuild it with `monodc matrix "
                             "--cache DIR`";
  const std::string holds = "; for model=dsv41 launch=attention_front it holds: tp=2 rows=6 "
                            "ratio=0 grid=256 arch=gfx950 backend=clang options=-O3";
  // A request: the message names what is missing and what the cache holds.
  std::string message = take(monodc_session_kernel(session, "rows=47 tp=4", &k));
  EXPECT_TRUE(saysAll(message,
                      "no code object for model=dsv41 launch=attention_front tp=4 rows=47 ratio=0 "
                      "grid=0 block=256 arch=gfx950 features= backend=clang options=-O3 (compiler ",
                      {"in cache " + dir.path() + "; " + advice + holds}));
  message = take(monodc_session_kernel(session, "arch=gfx1100", &k));
  EXPECT_TRUE(saysAll(message, "no code object for model=dsv41 launch=attention_front tp=2 rows=6 "
                               "ratio=0 grid=0 block=256 arch=gfx1100 ",
                      {"in cache " + dir.path() + "; " + advice + holds}));
  // A whole key that is not in the cache.
  std::string key = monodc_kernel_key(kernel);
  key.replace(key.find("rows=6"), 6, "rows=7");
  EXPECT_EQ(take(monodc_session_kernel_by_key(session, key.c_str(), &k)),
            "no code object for key " + key + " in cache " + dir.path() + "; " + advice);
  EXPECT_EQ(k, nullptr);
}

TEST_F(CApiErrors, AnArgumentIndexOutOfRange) {
  monodc_kernel_argument argument;
  const size_t count = monodc_kernel_argument_count(kernel);
  EXPECT_EQ(take(monodc_kernel_argument_get(kernel, count, &argument)),
            "argument " + std::to_string(count) + " out of range (the kernel has " +
                std::to_string(count) + ")");
  EXPECT_EQ(take(monodc_kernel_argument_get(kernel, SIZE_MAX, &argument)),
            "argument 18446744073709551615 out of range (the kernel has " + std::to_string(count) +
                ")");
}

TEST_F(CApiErrors, AMissingHipRuntime) {
  ScopedEnv hip("MONODC_HIP_LIBRARY", "/nonexistent/libamdhip64.so");
  monodc_launcher *l = nullptr;
  EXPECT_EQ(take(monodc_launcher_create(kernel, 0, &l)),
            "cannot load the HIP runtime (tried /nonexistent/libamdhip64.so): "
            "/nonexistent/libamdhip64.so: cannot open shared object file: No such file or "
            "directory");
  EXPECT_EQ(l, nullptr);
}

TEST_F(CApiErrors, ZeroRanksOnADevice) {
  monodc_launcher *l = nullptr;
  EXPECT_EQ(take(monodc_launcher_create_shared(kernel, 0, 0, &l)),
            "monodc_launcher_create_shared: ranks_on_device must be at least 1, got 0");
  EXPECT_EQ(take(monodc_launcher_create_shared(kernel, 0, -3, &l)),
            "monodc_launcher_create_shared: ranks_on_device must be at least 1, got -3");
  EXPECT_EQ(l, nullptr);
}

TEST_F(CApiErrors, WrongBuffersForALauncher) {
  monodc_launcher *l = launcher();
  ASSERT_NE(l, nullptr);
  char buffer[64];
  EXPECT_EQ(take(monodc_launcher_bind(l, "v", buffer)),
            "kernel mono_attention_front has no region 'v'");
  EXPECT_EQ(take(monodc_launcher_bind(l, "", buffer)), "kernel mono_attention_front has no region ''");
  EXPECT_EQ(take(monodc_launcher_bind(l, "u", nullptr)),
            "region 'u' cannot be bound to a null pointer");
  EXPECT_EQ(take(monodc_launcher_bind(l, "mono_scratch", buffer)),
            "the mono_scratch buffer belongs to the launcher and cannot be bound");
  // This kernel has no peer memory, so no rank argument either.
  EXPECT_EQ(take(monodc_launcher_bind(l, "mono_rank", buffer)),
            "kernel mono_attention_front has no region 'mono_rank'");
  // Nothing bound yet: the first region is named, with its size.
  EXPECT_EQ(take(monodc_launcher_launch(l, nullptr)), "region 'u' (input, 64 bytes) is not bound");
  EXPECT_EQ(take(monodc_launcher_bind_rank(l, 1)),
            "kernel mono_attention_front uses no peer memory and takes no rank");
  EXPECT_EQ(take(monodc_launcher_bind_rank(l, -1)),
            "kernel mono_attention_front uses no peer memory and takes no rank");
  // A buffer whose size the caller gives is checked against the argument;
  // a refused one stays unbound.
  EXPECT_EQ(take(monodc_launcher_bind_buffer(l, "u", buffer, 63)),
            "region 'u' of kernel mono_attention_front needs 64 bytes; a buffer of 63 bytes is "
            "too small");
  EXPECT_EQ(take(monodc_launcher_bind_buffer(l, "u", nullptr, 64)),
            "region 'u' cannot be bound to a null pointer");
  EXPECT_EQ(take(monodc_launcher_launch(l, nullptr)), "region 'u' (input, 64 bytes) is not bound");
  // A launch once every caller-bound region has a pointer.
  char buffers[4][64];
  EXPECT_EQ(take(monodc_launcher_bind_buffer(l, "u", buffers[0], 64)), "(no error)");
  EXPECT_EQ(take(monodc_launcher_bind(l, "w", buffers[1])), "(no error)");
  EXPECT_EQ(take(monodc_launcher_bind(l, "y", buffers[2])), "(no error)");
  EXPECT_EQ(take(monodc_launcher_launch(l, nullptr)),
            "region 'mono_epoch' (epoch, 1080 bytes) is not bound");
  EXPECT_EQ(take(monodc_launcher_bind(l, "mono_epoch", buffers[3])), "(no error)");
  EXPECT_EQ(take(monodc_launcher_launch(l, nullptr)), "(no error)");
  monodc_launcher_destroy(l);
}

} // namespace
