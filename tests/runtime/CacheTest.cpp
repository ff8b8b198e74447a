// The code-object cache: memory and disk hits, every corruption case of an
// entry (rebuilt and replaced, never loaded), foreign entries, the default
// directory, an unwritable directory (memory and one warning line), listing,
// verifying and clearing.
#include "monodc/runtime/CacheDirectory.h"
#include "monodc/runtime/CodeObjectCache.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace monodc::runtime;
using namespace monodc::testing;

namespace {

/// A builder that counts its calls.
struct CountingBuilder {
  CacheEntry entry;
  int calls = 0;
  std::function<Result<CacheEntry>()> function() {
    return [this]() -> Result<CacheEntry> {
      ++calls;
      return entry;
    };
  }
};

CodeObjectCache diskCache(const std::string &dir, std::vector<std::string> *warnings = nullptr) {
  return CodeObjectCache({dir, [warnings](const std::string &line) {
                            if (warnings)
                              warnings->push_back(line);
                          }});
}

TEST(CodeObjectCache, HitsInMemoryThenOnDiskInAFreshCache) {
  TempDir dir;
  BuildKey key = sampleKey();
  CountingBuilder builder{sampleEntry(key)};
  {
    CodeObjectCache cache = diskCache(dir.path());
    auto first = cache.getOrBuild(key.text(), builder.function());
    ASSERT_TRUE(first.ok()) << first.message();
    auto second = cache.getOrBuild(key.text(), builder.function());
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(first->get(), second->get()); // the same object, from memory
    EXPECT_EQ(builder.calls, 1);
  }
  CodeObjectCache fresh = diskCache(dir.path());
  CodeObjectCache::Lookup lookup = fresh.find(key.text());
  ASSERT_TRUE(lookup.entry);
  EXPECT_TRUE(lookup.fromDisk);
  EXPECT_EQ(lookup.entry->codeObject, builder.entry.codeObject);
  EXPECT_EQ(lookup.entry->metadata, builder.entry.metadata);
  EXPECT_EQ(fresh.find(sampleKey(7).text()).entry, nullptr);
}

TEST(CodeObjectCache, ABuildErrorComesBackAndIsNotCached) {
  TempDir dir;
  CodeObjectCache cache = diskCache(dir.path());
  int calls = 0;
  auto failing = [&]() -> Result<CacheEntry> {
    ++calls;
    return makeError("the backend said no");
  };
  auto result = cache.getOrBuild(sampleKey().text(), failing);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.message(), "the backend said no");
  EXPECT_FALSE(cache.getOrBuild(sampleKey().text(), failing).ok());
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(listCacheFiles(dir.path(), true)->empty());
}

struct Corruption {
  const char *name;
  std::function<std::string(const std::string &good, const std::string &foreign)> damage;
  const char *reason;
};

std::string flipAt(std::string bytes, size_t at) {
  bytes[at] = static_cast<char>(bytes[at] ^ 0x20);
  return bytes;
}

const Corruption kCorruptions[] = {
    {"TruncatedByOneByte", [](auto &g, auto &) { return g.substr(0, g.size() - 1); },
     "truncated"},
    {"TruncatedInsideTheHeader", [](auto &g, auto &) { return g.substr(0, 10); }, "truncated"},
    {"ZeroLength", [](auto &, auto &) { return std::string(); }, "empty file"},
    {"ByteFlippedInTheCodeObject", [](auto &g, auto &) { return flipAt(g, g.size() - 5); },
     "checksum mismatch"},
    {"ByteFlippedInTheKeyText", [](auto &g, auto &) { return flipAt(g, 64 + 20); },
     "checksum mismatch"},
    {"ByteFlippedInTheChecksum", [](auto &g, auto &) { return flipAt(g, 40); },
     "checksum mismatch"},
    {"SizeFieldChanged", [](auto &g, auto &) { return flipAt(g, 24); }, "the header says"},
    {"TrailingBytes", [](auto &g, auto &) { return g + "junk"; }, "trailing bytes"},
    {"NotAnEntry", [](auto &, auto &) { return std::string(200, 'x'); }, "bad magic"},
    {"AnotherFormatVersion", [](auto &g, auto &) { return flipAt(g, 9); }, "format version"},
    {"ReservedHeaderFieldSet", [](auto &g, auto &) { return flipAt(g, 20); }, "reserved field"},
    {"WrongKeyText", [](auto &, auto &f) { return f; }, "foreign entry"},
};

void PrintTo(const Corruption &corruption, std::ostream *os) { *os << corruption.name; }

class CacheCorruption : public ::testing::TestWithParam<Corruption> {};

TEST_P(CacheCorruption, IsRebuiltAndReplacedNeverLoaded) {
  TempDir dir;
  BuildKey key = sampleKey(), other = sampleKey(9);
  CacheEntry good = sampleEntry(key);
  std::string goodBytes, foreignBytes;
  {
    auto encoded = encodeCacheEntry(good);
    goodBytes.assign(encoded.begin(), encoded.end());
    auto foreign = encodeCacheEntry(sampleEntry(other));
    foreignBytes.assign(foreign.begin(), foreign.end());
  }
  std::string path = dir.file(key.fileName());
  writeBytes(path, GetParam().damage(goodBytes, foreignBytes));

  CodeObjectCache cache = diskCache(dir.path());
  CodeObjectCache::Lookup lookup = cache.find(key.text());
  EXPECT_EQ(lookup.entry, nullptr) << "a damaged entry was loaded";
  EXPECT_NE(lookup.refused.find(GetParam().reason), std::string::npos) << lookup.refused;

  CountingBuilder builder{good};
  auto rebuilt = cache.getOrBuild(key.text(), builder.function());
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.message();
  EXPECT_EQ(builder.calls, 1);
  EXPECT_EQ((*rebuilt)->codeObject, good.codeObject);

  // The file was replaced by a good entry, which a fresh cache loads.
  EXPECT_EQ(readBytes(path), goodBytes);
  auto files = listCacheFiles(dir.path(), /*verify=*/true);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].problem, "");
  CodeObjectCache fresh = diskCache(dir.path());
  EXPECT_TRUE(fresh.find(key.text()).fromDisk);
}

INSTANTIATE_TEST_SUITE_P(AllCases, CacheCorruption, ::testing::ValuesIn(kCorruptions),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(CacheEntry, DecodeNamesEachProblem) {
  CacheEntry entry = sampleEntry(sampleKey());
  auto bytes = encodeCacheEntry(entry);
  std::string text(bytes.begin(), bytes.end());
  auto decoded = decodeCacheEntry(text);
  ASSERT_TRUE(decoded.ok()) << decoded.message();
  EXPECT_EQ(decoded->keyText, entry.keyText);
  EXPECT_EQ(decoded->metadata, entry.metadata);
  EXPECT_EQ(decoded->codeObject, entry.codeObject);
  // Every single-byte change anywhere is caught.
  for (size_t at = 0; at < text.size(); at += 7)
    EXPECT_FALSE(decodeCacheEntry(flipAt(text, at)).ok()) << "byte " << at;
}

TEST(CodeObjectCache, DefaultDirectoryFollowsTheEnvironment) {
  std::string saved[3];
  const char *vars[3] = {"MONODC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i)
    saved[i] = getenv(vars[i]) ? getenv(vars[i]) : "";
  setenv("MONODC_CACHE_DIR", "/a/monodc", 1);
  setenv("XDG_CACHE_HOME", "/b", 1);
  setenv("HOME", "/c", 1);
  EXPECT_EQ(defaultCacheDirectory(), "/a/monodc");
  unsetenv("MONODC_CACHE_DIR");
  EXPECT_EQ(defaultCacheDirectory(), "/b/monodc");
  setenv("XDG_CACHE_HOME", "", 1);
  EXPECT_EQ(defaultCacheDirectory(), "/c/.cache/monodc");
  for (int i = 0; i < 3; ++i)
    if (saved[i].empty())
      unsetenv(vars[i]);
    else
      setenv(vars[i], saved[i].c_str(), 1);
}

TEST(CodeObjectCache, ADirectoryThatCannotBeCreatedFallsBackToMemory) {
  TempDir dir;
  writeBytes(dir.file("file"), "not a directory");
  std::vector<std::string> warnings;
  CodeObjectCache cache = diskCache(dir.file("file/cache"), &warnings);
  CountingBuilder builder{sampleEntry(sampleKey())};
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(cache.getOrBuild(sampleKey().text(), builder.function()).ok());
  cache.store(sampleEntry(sampleKey(7)));
  EXPECT_EQ(builder.calls, 1); // served from memory afterwards
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("monodc: warning: cache directory " + dir.file("file/cache") +
                                  " is not writable (",
                              0),
            0u)
      << warnings[0];
  EXPECT_EQ(warnings[0].find('\n'), std::string::npos);
  EXPECT_FALSE(cache.writesToDisk());
}

// As root a read-only mode bit does not stop writes, so the check runs in a
// child that drops to an unprivileged user first.
TEST(CodeObjectCache, AReadOnlyDirectoryServesItsEntriesAndWarnsOnce) {
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
  std::string cacheDir = dir.file("cache");
  BuildKey stored = sampleKey(), fresh = sampleKey(8);
  {
    CodeObjectCache writer = diskCache(cacheDir);
    writer.store(sampleEntry(stored));
  }
  ASSERT_EQ(::chmod(cacheDir.c_str(), 0555), 0);
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipeFds[0]);
    std::string report;
    auto expect = [&](bool ok, const std::string &what) {
      if (!ok)
        report += what + "; ";
    };
    if (::geteuid() == 0)
      expect(::setgid(65534) == 0 && ::setuid(65534) == 0, "cannot drop root");
    std::vector<std::string> warnings;
    CodeObjectCache cache = diskCache(cacheDir, &warnings);
    expect(cache.find(stored.text()).fromDisk, "the stored entry was not read");
    CountingBuilder builder{sampleEntry(fresh)};
    for (int i = 0; i < 3; ++i)
      expect(cache.getOrBuild(fresh.text(), builder.function()).ok(), "a build failed");
    cache.store(sampleEntry(sampleKey(10)));
    expect(builder.calls == 1, "built " + std::to_string(builder.calls) + " times");
    expect(warnings.size() == 1, std::to_string(warnings.size()) + " warnings");
    expect(!warnings.empty() && warnings[0].find("is not writable (") != std::string::npos &&
               warnings[0].find("Permission denied") != std::string::npos,
           "warning: " + (warnings.empty() ? std::string() : warnings[0]));
    expect(!cache.writesToDisk(), "still writing to disk");
    ::write(pipeFds[1], report.data(), report.size());
    ::_exit(0);
  }
  ::close(pipeFds[1]);
  std::string report;
  char buffer[256];
  for (ssize_t n; (n = ::read(pipeFds[0], buffer, sizeof buffer)) > 0;)
    report.append(buffer, static_cast<size_t>(n));
  ::close(pipeFds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(report, "");
  auto files = listCacheFiles(cacheDir, true);
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), 1u); // nothing was written
}

TEST(CacheDirectory, ListsVerifiesAndClears) {
  TempDir dir;
  CodeObjectCache cache = diskCache(dir.path());
  cache.store(sampleEntry(sampleKey(1)));
  cache.store(sampleEntry(sampleKey(2)));
  std::string damaged = dir.file(sampleKey(2).fileName());
  std::string bytes = readBytes(damaged);
  writeBytes(damaged, flipAt(bytes, bytes.size() - 1));
  writeBytes(dir.file("." + sampleKey(3).fileName() + ".Ab12Cd"), "left by a dead writer");
  writeBytes(dir.file("notes.txt"), "not ours");

  auto quick = listCacheFiles(dir.path(), /*verify=*/false);
  ASSERT_TRUE(quick.ok());
  ASSERT_EQ(quick->size(), 2u);
  for (const CacheFile &file : *quick) {
    EXPECT_EQ(file.problem, "") << file.fileName;
    EXPECT_EQ(file.bytes, bytes.size());
  }
  auto verified = listCacheFiles(dir.path(), /*verify=*/true);
  ASSERT_TRUE(verified.ok());
  int damagedCount = 0;
  for (const CacheFile &file : *verified)
    damagedCount += file.problem.find("checksum mismatch") != std::string::npos;
  EXPECT_EQ(damagedCount, 1);

  auto cleared = clearCacheFiles(dir.path());
  ASSERT_TRUE(cleared.ok()) << cleared.message();
  EXPECT_EQ(cleared->files, 3u);
  EXPECT_EQ(cleared->bytes, 2 * bytes.size() + std::strlen("left by a dead writer"));
  EXPECT_TRUE(listCacheFiles(dir.path(), true)->empty());
  EXPECT_EQ(readBytes(dir.file("notes.txt")), "not ours");
  EXPECT_TRUE(listCacheFiles(dir.file("missing"), true)->empty());
}

TEST(CacheDirectory, AnEntryUnderAnotherNameIsForeign) {
  TempDir dir;
  auto bytes = encodeCacheEntry(sampleEntry(sampleKey(1)));
  writeBytes(dir.file(sampleKey(2).fileName()), std::string(bytes.begin(), bytes.end()));
  auto files = listCacheFiles(dir.path(), false);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);
  EXPECT_NE((*files)[0].problem.find("foreign entry"), std::string::npos);
}

} // namespace
