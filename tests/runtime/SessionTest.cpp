// A runtime-only session (no compiler): it serves what a cache directory
// holds, finds entries by the fields a request names, and a missing key is an
// error naming it.
#include "monodc/runtime/Session.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

using namespace monodc;
using namespace monodc::runtime;
using namespace monodc::testing;

namespace {

SessionOptions runtimeOnly(const std::string &dir) {
  SessionOptions options;
  options.cacheDirectory = dir;
  options.warn = [](const std::string &) {};
  return options;
}

void storeEntry(const std::string &dir, const CacheEntry &entry) {
  CodeObjectCache({dir, nullptr}).store(entry);
}

TEST(KernelRequest, PrintsAndParses) {
  KernelRequest request;
  request.rows = 12;
  request.options = "-O2 -g";
  EXPECT_EQ(request.text(), "model=dsv41 launch=attention_front tp=2 rows=12 ratio=0 grid=0 "
                            "block=256 arch=gfx950 features= backend=clang options=-O2%20-g");
  auto parsed = KernelRequest::parse(request.text());
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->text(), request.text());
  auto partial = KernelRequest::parse("rows=48 tp=4");
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->rows, 48);
  EXPECT_EQ(partial->tp, 4);
  EXPECT_EQ(partial->model, "dsv41");
  EXPECT_EQ(partial->backend, "clang");
  // An NVIDIA arch without a backend asks for nvrtc's build; a named one stays.
  EXPECT_EQ(KernelRequest::parse("arch=sm_90 rows=6")->backend, "nvrtc");
  EXPECT_EQ(KernelRequest::parse("backend=hiprtc arch=sm_90")->backend, "hiprtc");
  EXPECT_NE(KernelRequest::parse("rank=1").message().find("'rank=1' is not name=value"),
            std::string::npos);
  EXPECT_NE(KernelRequest::parse("compiler=abc").message().find("is not name=value"),
            std::string::npos);
  EXPECT_NE(KernelRequest::parse("rows=six").message().find("decimal integer"),
            std::string::npos);
}

TEST(KernelRequest, MatchesKeysOnEveryFieldItNames) {
  BuildKey key = sampleKey();
  KernelRequest request;
  EXPECT_TRUE(request.matches(key)); // grid 0 matches any grid
  request.grid = 256;
  EXPECT_TRUE(request.matches(key));
  request.grid = 128;
  EXPECT_FALSE(request.matches(key));
  request = KernelRequest();
  request.backend = "hiprtc";
  EXPECT_FALSE(request.matches(key));
}

TEST(KernelRequest, AsksTheRatioOnlyOfLaunchesThatReadCompressedKeys) {
  // A layer's K1 serves both ratios from one key (ratio 0); its K2 is a key
  // a ratio. A serving engine asks for both launches with the layer's ratio.
  BuildKey k1 = sampleKey(), k2 = sampleKey();
  k1.launch = "k1";
  k1.ratio = 0;
  k2.launch = "k2";
  k2.ratio = 2;
  KernelRequest request;
  request.ratio = 2;
  request.launch = "k1";
  EXPECT_TRUE(request.matches(k1));
  request.launch = "k2";
  EXPECT_TRUE(request.matches(k2));
  request.ratio = 1;
  EXPECT_FALSE(request.matches(k2));
  request.launch = "k1";
  EXPECT_TRUE(request.matches(k1));
}

TEST(RuntimeOnlySession, ServesPrebuiltEntriesByRequest) {
  TempDir dir;
  storeEntry(dir.path(), sampleEntry(sampleKey(6)));
  storeEntry(dir.path(), sampleEntry(sampleKey(12)));
  Session session(runtimeOnly(dir.path()));
  EXPECT_FALSE(session.canCompile());
  KernelRequest request;
  auto kernel = session.kernel(request);
  ASSERT_TRUE(kernel.ok()) << kernel.message();
  EXPECT_EQ((*kernel)->key, sampleKey(6));
  EXPECT_EQ((*kernel)->symbol(), "mono_attention_front");
  ASSERT_TRUE((*kernel)->resources.has_value());
  EXPECT_EQ((*kernel)->resources->vgprs, 40);
  EXPECT_EQ((*kernel)->arguments.slots.size(), 5u);
  EXPECT_EQ((*kernel)->arguments.kernargBytes, 40);
  auto again = session.kernel(request);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), kernel->get()); // an in-process hit

  request.rows = 12;
  auto twelve = session.kernel(request);
  ASSERT_TRUE(twelve.ok()) << twelve.message();
  EXPECT_EQ((*twelve)->key.rows, 12);
  auto byKey = session.kernel(sampleKey(12));
  ASSERT_TRUE(byKey.ok());
  EXPECT_EQ(byKey->get(), twelve->get());
}

TEST(RuntimeOnlySession, AMissingKeyIsAnErrorNamingIt) {
  TempDir dir;
  storeEntry(dir.path(), sampleEntry(sampleKey(6)));
  BuildKey stale = sampleKey(24);
  stale.compilerId = "0000000000000000";
  storeEntry(dir.path(), sampleEntry(stale));
  Session session(runtimeOnly(dir.path()));

  KernelRequest request;
  request.rows = 48;
  auto missing = session.kernel(request);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("no code object for " + request.text()), std::string::npos)
      << missing.message();
  EXPECT_NE(missing.message().find("in cache " + dir.path()), std::string::npos);
  EXPECT_NE(missing.message().find("monodc matrix --cache"), std::string::npos);
  // ... and lists what the cache holds of this build for the same model
  // and launch (rows 6; not the other revision's rows 24).
  EXPECT_NE(missing.message().find("for model=dsv41 launch=attention_front it holds: tp=2 rows=6 "
                                   "ratio=0 grid=256 arch=gfx950 backend=clang options=-O3"),
            std::string::npos)
      << missing.message();
  EXPECT_EQ(missing.message().find("rows=24"), std::string::npos) << missing.message();

  request.rows = 24;
  auto staleResult = session.kernel(request);
  ASSERT_FALSE(staleResult.ok());
  EXPECT_NE(staleResult.message().find("holds it for compiler 0000000000000000"),
            std::string::npos)
      << staleResult.message();

  auto byKey = session.kernel(sampleKey(48));
  ASSERT_FALSE(byKey.ok());
  EXPECT_NE(byKey.message().find("no code object for key " + sampleKey(48).text()),
            std::string::npos)
      << byKey.message();
}

TEST(RuntimeOnlySession, ADamagedEntryIsRefusedWithTheReason) {
  TempDir dir;
  storeEntry(dir.path(), sampleEntry(sampleKey(6)));
  std::string path = dir.file(sampleKey(6).fileName());
  std::string bytes = readBytes(path);
  writeBytes(path, bytes.substr(0, bytes.size() / 2));
  Session session(runtimeOnly(dir.path()));
  auto kernel = session.kernel(sampleKey(6));
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.message().find("refused " + path + ": truncated"), std::string::npos)
      << kernel.message();
}

TEST(RuntimeOnlySession, AnAmbiguousRequestNamesTheCandidates) {
  TempDir dir;
  BuildKey a = sampleKey(6), b = sampleKey(6);
  b.configDigest = "fedcba9876543210";
  storeEntry(dir.path(), sampleEntry(a));
  storeEntry(dir.path(), sampleEntry(b));
  Session session(runtimeOnly(dir.path()));
  auto kernel = session.kernel(KernelRequest());
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.message().find("2 entries of cache " + dir.path() + " match"),
            std::string::npos)
      << kernel.message();
  EXPECT_NE(kernel.message().find(b.text()), std::string::npos);
}

TEST(RuntimeOnlySession, AnEntryWhoseManifestDisagreesWithItsCodeObjectIsRefused) {
  TempDir dir;
  CacheEntry entry = sampleEntry(sampleKey(6));
  entry.metadata = makeManifest("mono_attention_front", {"u", "w"}); // one argument short
  storeEntry(dir.path(), entry);
  Session session(runtimeOnly(dir.path()));
  auto kernel = session.kernel(sampleKey(6));
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.message().find("takes 5 arguments, its launch interface names 4"),
            std::string::npos)
      << kernel.message();
}

} // namespace
