//===- CacheCommand.cpp - monodc cache ls | verify | clear ----------------===//
//
// What a code-object cache directory holds, whether each entry is whole, and
// removing them. The directory defaults as the library's does.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "monodc/runtime/CacheDirectory.h"
#include "monodc/runtime/CodeObjectCache.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using monodc::cli::fail;
using namespace monodc::runtime;

/// The directory of a cache action: --dir, else the library's default.
/// Refused (exit 2, naming it) when it is not a directory the action can
/// use: it does not exist, it is a file, or it cannot be read (or, to
/// clear it, written). The default directory alone may not exist yet, as
/// before the library's first write: it is then an empty cache, not an
/// error; a --dir that does not exist is a mistyped path.
std::string directoryOf(const std::optional<std::string> &option, bool write) {
  using monodc::cli::kUsageError;
  const std::string dir = option ? *option : defaultCacheDirectory();
  if (dir.empty())
    fail("--dir: the cache directory is an empty path", kUsageError);
  const std::string what = write ? "cannot clear cache directory " : "cannot read cache directory ";
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0) {
    if (errno == ENOENT && !option)
      return dir;
    fail(what + dir + ": " + std::strerror(errno), kUsageError);
  }
  if (!S_ISDIR(info.st_mode))
    fail(what + dir + ": " + std::strerror(ENOTDIR), kUsageError);
  if (::access(dir.c_str(), R_OK | X_OK | (write ? W_OK : 0)) != 0)
    fail(what + dir + ": " + std::strerror(errno), kUsageError);
  return dir;
}

/// `ls` and `verify`: one line per entry, then a total. Exit 1 when an entry
/// is damaged.
int listEntries(const std::string &dir, bool verify) {
  auto files = listCacheFiles(dir, verify);
  if (!files)
    fail(files.message());
  std::cout << fmt::format("cache {}\n", dir);
  uint64_t total = 0;
  int damaged = 0;
  for (const CacheFile &file : *files) {
    total += file.bytes;
    damaged += !file.problem.empty();
    std::string status = file.problem.empty() ? (verify ? "ok  " : "") : "DAMAGED: " + file.problem;
    std::cout << fmt::format("{:>10}  {}  {}{}\n", file.bytes, file.fileName, status,
                             file.problem.empty() ? file.keyText : "");
  }
  std::cout << fmt::format("{} entries, {} bytes", files->size(), total);
  if (verify)
    std::cout << fmt::format(": {} good, {} damaged", files->size() - damaged, damaged);
  std::cout << "\n";
  if (verify && damaged)
    fail(fmt::format("{} damaged entries in {} (the library rebuilds them when asked; "
                     "`monodc cache clear` removes them)",
                     damaged, dir));
  return 0;
}

int clearEntries(const std::string &dir) {
  auto cleared = clearCacheFiles(dir);
  if (!cleared)
    fail(cleared.message());
  std::cout << fmt::format("removed {} files, {} bytes from {}\n", cleared->files,
                           cleared->bytes, dir);
  return 0;
}

} // namespace

void monodc::cli::addCacheCommand(CLI::App &app) {
  CLI::App *cache = app.add_subcommand("cache", "list, verify or clear the code-object cache");
  // An action runs in its own callback and exits; cache's callback runs only
  // when none was named, and names what was given instead.
  cache->require_subcommand(0, 1);
  cache->allow_extras();
  cache->callback([cache] {
    std::vector<std::string> rest = cache->remaining();
    fail(rest.empty() ? std::string("cache: no action given (actions: ls, verify, clear)")
                      : "cache: unknown action '" + rest.front() +
                            "' (actions: ls, verify, clear)",
         monodc::cli::kUsageError);
  });
  // run(directory): the action on --dir, or on the default when not given.
  using Action = std::function<int(const std::optional<std::string> &)>;
  auto addAction = [&](const char *name, const char *help, Action run) {
    CLI::App *sub = cache->add_subcommand(name, help);
    sub->allow_extras(false); // not inherited from cache: an action takes --dir only
    auto dir = std::make_shared<std::string>();
    CLI::Option *dirOption =
        sub->add_option("--dir", *dir,
                        "cache directory, which must exist (default: $MONODC_CACHE_DIR, else "
                        "$XDG_CACHE_HOME/monodc, else ~/.cache/monodc)");
    sub->callback([run, dir, dirOption] {
      std::exit(run(dirOption->count() ? std::optional<std::string>(*dir) : std::nullopt));
    });
  };
  addAction("ls", "list entries with their sizes and keys", [](const auto &dir) {
    return listEntries(directoryOf(dir, /*write=*/false), /*verify=*/false);
  });
  addAction("verify", "read every entry whole and check its checksum and key",
            [](const auto &dir) {
              return listEntries(directoryOf(dir, /*write=*/false), /*verify=*/true);
            });
  addAction("clear", "remove every entry (and leftover temporary files)",
            [](const auto &dir) { return clearEntries(directoryOf(dir, /*write=*/true)); });
}
