// Many processes building and reading one key at once: every read sees a
// whole entry (or none), and every process ends with a good entry. Processes
// and threads missing one key through getOrBuild() build it exactly once (the
// key's lock file); a waiter times out with a clear error; a holder that dies
// or fails lets the next one build.
#include "monodc/runtime/CacheDirectory.h"
#include "monodc/runtime/CodeObjectCache.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
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

/// Reads until the writers close; what they wrote.
std::string drain(int fd) {
  std::string text;
  char buffer[512];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<size_t>(n));
  return text;
}

/// Nonzero exit or a signal, for a child's status.
bool exitedCleanly(pid_t child) {
  int status = 0;
  return ::waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string fileText(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 ? readBytes(path) : std::string();
}

constexpr int kBuilders = 10;

// The acceptance test of the lock: >= 8 processes miss one key at the same
// moment; the build (slow on purpose, so all of them are waiting) runs once,
// and every process gets the same good entry.
TEST(CacheRace, TenProcessesMissingOneKeyBuildItExactlyOnce) {
  TempDir dir, counts;
  BuildKey key = sampleKey();
  CacheEntry expected = bigEntry(key);
  std::string countFile = counts.file("builds");
  int start[2], results[2];
  ASSERT_EQ(::pipe(start), 0);
  ASSERT_EQ(::pipe(results), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < kBuilders; ++i) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(start[1]);
      ::close(results[0]);
      char go;
      (void)!::read(start[0], &go, 1);
      CodeObjectCache cache({dir.path(), [](const std::string &) {}});
      auto build = [&]() -> Result<CacheEntry> {
        // One byte per build, appended atomically to the shared count file.
        int fd = ::open(countFile.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        (void)!::write(fd, "b", 1);
        ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return expected;
      };
      auto got = cache.getOrBuild(key.text(), build);
      std::string problem;
      if (!got)
        problem = got.message();
      else if ((*got)->codeObject != expected.codeObject || (*got)->metadata != expected.metadata)
        problem = "other bytes";
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
  std::string problems = drain(results[0]);
  ::close(results[0]);
  int failed = 0;
  for (pid_t child : children)
    failed += !exitedCleanly(child);
  EXPECT_EQ(failed, 0) << problems;
  EXPECT_EQ(fileText(countFile), "b") << "builds counted: " << fileText(countFile).size();
  auto files = listCacheFiles(dir.path(), /*verify=*/true);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].problem, "");
}

// The same within one process: threads of one cache, and threads each with a
// cache of their own (as two libraries in one server would have).
TEST(CacheRace, EightThreadsMissingOneKeyBuildItExactlyOnce) {
  for (bool shared : {true, false}) {
    TempDir dir;
    BuildKey key = sampleKey();
    CacheEntry expected = sampleEntry(key);
    std::atomic<int> builds{0}, good{0};
    CodeObjectCache one({dir.path(), [](const std::string &) {}});
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i)
      threads.emplace_back([&] {
        CodeObjectCache own({dir.path(), [](const std::string &) {}});
        CodeObjectCache &cache = shared ? one : own;
        auto got = cache.getOrBuild(key.text(), [&]() -> Result<CacheEntry> {
          ++builds;
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          return expected;
        });
        good += got.ok() && (*got)->codeObject == expected.codeObject;
      });
    for (std::thread &thread : threads)
      thread.join();
    EXPECT_EQ(builds.load(), 1) << (shared ? "one cache" : "a cache per thread");
    EXPECT_EQ(good.load(), 8);
  }
}

/// A child that takes the key's lock through getOrBuild() and builds until
/// the parent closes `release`; it tells the parent once it is building.
struct BlockedBuilder {
  pid_t pid = -1;
  int release = -1; ///< the parent's end: close it to let the build finish

  BlockedBuilder(const std::string &dir, const CacheEntry &entry) {
    int building[2], gate[2];
    if (::pipe(building) != 0 || ::pipe(gate) != 0)
      return;
    pid = ::fork();
    if (pid == 0) {
      ::close(building[0]);
      ::close(gate[1]);
      CodeObjectCache cache({dir, [](const std::string &) {}});
      auto got = cache.getOrBuild(entry.keyText, [&]() -> Result<CacheEntry> {
        (void)!::write(building[1], "x", 1);
        char byte;
        (void)!::read(gate[0], &byte, 1);
        return entry;
      });
      ::_exit(got.ok() ? 0 : 1);
    }
    ::close(building[1]);
    ::close(gate[0]);
    char byte;
    if (::read(building[0], &byte, 1) != 1)
      pid = -1;
    ::close(building[0]);
    release = gate[1];
  }
};

TEST(CacheRace, AWaiterTimesOutWithAClearErrorThenLoadsTheHoldersEntry) {
  TempDir dir;
  BuildKey key = sampleKey();
  CacheEntry expected = sampleEntry(key);
  BlockedBuilder holder(dir.path(), expected);
  ASSERT_GT(holder.pid, 0);

  CacheOptions options{dir.path(), [](const std::string &) {}};
  options.lockTimeout = std::chrono::milliseconds(300);
  CodeObjectCache cache(options);
  int builds = 0;
  auto build = [&]() -> Result<CacheEntry> {
    ++builds;
    return expected;
  };
  auto started = std::chrono::steady_clock::now();
  auto waited = cache.getOrBuild(key.text(), build);
  auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(waited.ok());
  EXPECT_EQ(builds, 0);
  EXPECT_GE(elapsed, std::chrono::milliseconds(300));
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  EXPECT_EQ(waited.message().rfind("timed out after 300 ms waiting for cache lock " +
                                       cache.lockPathFor(key.text()) + " (held by pid " +
                                       std::to_string(holder.pid) + ", building key '" +
                                       key.text() + "')",
                                   0),
            0u)
      << waited.message();
  EXPECT_NE(waited.message().find("MONODC_CACHE_LOCK_TIMEOUT"), std::string::npos);

  ::close(holder.release);
  EXPECT_TRUE(exitedCleanly(holder.pid));
  auto loaded = cache.getOrBuild(key.text(), build);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(builds, 0); // the holder's entry, from disk
  EXPECT_EQ((*loaded)->codeObject, expected.codeObject);
}

TEST(CacheRace, AHolderThatDiesReleasesTheLock) {
  TempDir dir;
  BuildKey key = sampleKey();
  CacheEntry expected = sampleEntry(key);
  BlockedBuilder holder(dir.path(), expected);
  ASSERT_GT(holder.pid, 0);
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::kill(holder.pid, SIGKILL);
  });
  CacheOptions options{dir.path(), [](const std::string &) {}};
  options.lockTimeout = std::chrono::seconds(30);
  CodeObjectCache cache(options);
  int builds = 0;
  auto got = cache.getOrBuild(key.text(), [&]() -> Result<CacheEntry> {
    ++builds;
    return expected;
  });
  killer.join();
  ::close(holder.release);
  int status = 0;
  ::waitpid(holder.pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(readBytes(cache.pathFor(key.text())).size(), encodeCacheEntry(expected).size());
}

TEST(CacheRace, AFailedBuildLetsTheWaiterBuild) {
  TempDir dir;
  BuildKey key = sampleKey();
  CacheEntry expected = sampleEntry(key);
  std::atomic<bool> holding{false};
  std::thread failing([&] {
    CodeObjectCache cache({dir.path(), [](const std::string &) {}});
    auto got = cache.getOrBuild(key.text(), [&]() -> Result<CacheEntry> {
      holding = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      return makeError("the backend said no");
    });
    EXPECT_FALSE(got.ok());
  });
  while (!holding)
    std::this_thread::yield();
  CodeObjectCache cache({dir.path(), [](const std::string &) {}});
  int builds = 0;
  auto got = cache.getOrBuild(key.text(), [&]() -> Result<CacheEntry> {
    ++builds;
    return expected;
  });
  failing.join();
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(builds, 1);
}

TEST(CacheRace, ClearRemovesFreeLockFilesButNotAHeldOne) {
  TempDir dir;
  BuildKey free = sampleKey(1), held = sampleKey(2);
  CodeObjectCache cache({dir.path(), [](const std::string &) {}});
  ASSERT_TRUE(cache.getOrBuild(free.text(), [&]() -> Result<CacheEntry> {
    return sampleEntry(free);
  }).ok());
  struct stat info;
  ASSERT_EQ(::stat(cache.lockPathFor(free.text()).c_str(), &info), 0);
  EXPECT_EQ(info.st_size, 0); // no holder named once released

  BlockedBuilder holder(dir.path(), sampleEntry(held));
  ASSERT_GT(holder.pid, 0);
  EXPECT_EQ(fileText(cache.lockPathFor(held.text())),
            "pid " + std::to_string(holder.pid) + "\n");
  auto cleared = clearCacheFiles(dir.path());
  ASSERT_TRUE(cleared.ok()) << cleared.message();
  EXPECT_EQ(cleared->files, 1u); // the entry of `free`; lock files are not counted
  EXPECT_NE(::stat(cache.lockPathFor(free.text()).c_str(), &info), 0);
  EXPECT_EQ(::stat(cache.lockPathFor(held.text()).c_str(), &info), 0);
  ::close(holder.release);
  EXPECT_TRUE(exitedCleanly(holder.pid));
  EXPECT_EQ(listCacheFiles(dir.path(), true)->size(), 1u);
}

} // namespace
