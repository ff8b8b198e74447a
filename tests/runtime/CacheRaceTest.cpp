// Many processes building and reading one key at once: every read sees a
// whole entry (or none), and every process ends with a good entry.
#include "monodc/runtime/CacheDirectory.h"
#include "monodc/runtime/CodeObjectCache.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

using namespace monodc::runtime;
using namespace monodc::testing;

namespace {

constexpr int kProcesses = 12;
constexpr int kRounds = 8;

/// A large entry, so that writing it takes long enough to overlap readers.
CacheEntry bigEntry(const BuildKey &key) {
  CacheEntry entry = sampleEntry(key);
  entry.codeObject.resize(768 * 1024);
  for (size_t i = 0; i < entry.codeObject.size(); ++i)
    entry.codeObject[i] = static_cast<char>(i * 131 + 7);
  return entry;
}

/// In a child: builds and stores the key every round (as a process that
/// missed the cache would), and reads it back through a fresh cache. Returns
/// what went wrong, or nothing.
std::string raceOnce(const std::string &dir, const BuildKey &key, const CacheEntry &expected) {
  for (int round = 0; round < kRounds; ++round) {
    CodeObjectCache reader({dir, [](const std::string &) {}});
    CodeObjectCache::Lookup lookup = reader.find(key.text());
    if (!lookup.refused.empty())
      return "a reader saw a damaged entry: " + lookup.refused;
    if (lookup.entry && lookup.entry->codeObject != expected.codeObject)
      return "a reader saw other bytes";
    CodeObjectCache builder({dir, [](const std::string &line) { (void)line; }});
    builder.store(expected);
    if (!builder.writesToDisk())
      return "a writer could not write";
    CodeObjectCache after({dir, [](const std::string &) {}});
    CodeObjectCache::Lookup mine = after.find(key.text());
    if (!mine.entry || mine.entry->codeObject != expected.codeObject)
      return "no good entry after a store: " + mine.refused;
  }
  return "";
}

TEST(CacheRace, TwelveProcessesBuildingOneKeyAllEndWithAGoodEntry) {
  TempDir dir;
  BuildKey key = sampleKey();
  CacheEntry expected = bigEntry(key);
  int start[2], results[2];
  ASSERT_EQ(::pipe(start), 0);
  ASSERT_EQ(::pipe(results), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(start[1]);
      ::close(results[0]);
      char go;
      (void)!::read(start[0], &go, 1); // returns once the parent closes its end
      std::string problem = raceOnce(dir.path(), key, expected);
      if (!problem.empty()) {
        problem = "process " + std::to_string(i) + ": " + problem + "\n";
        (void)!::write(results[1], problem.data(), problem.size());
      }
      ::_exit(problem.empty() ? 0 : 1);
    }
    children.push_back(child);
  }
  ::close(start[0]);
  ::close(results[1]);
  ::close(start[1]); // go
  std::string problems;
  char buffer[512];
  for (ssize_t n; (n = ::read(results[0], buffer, sizeof buffer)) > 0;)
    problems.append(buffer, static_cast<size_t>(n));
  ::close(results[0]);
  int failed = 0;
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(failed, 0) << problems;
  auto files = listCacheFiles(dir.path(), /*verify=*/true);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].problem, "");
  // No writer left a temporary file behind.
  auto cleared = clearCacheFiles(dir.path());
  ASSERT_TRUE(cleared.ok());
  EXPECT_EQ(cleared->files, 1u);
}

} // namespace
