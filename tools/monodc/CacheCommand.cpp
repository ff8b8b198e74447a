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

#include <iostream>

namespace {

using monodc::cli::fail;
using namespace monodc::runtime;

std::string directoryOf(const std::string &option) {
  return option.empty() ? defaultCacheDirectory() : option;
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
  auto dir = std::make_shared<std::string>();
  CLI::App *cache = app.add_subcommand("cache", "list, verify or clear the code-object cache");
  cache->require_subcommand(1);
  auto addAction = [&](const char *name, const char *help, std::function<int()> run) {
    CLI::App *sub = cache->add_subcommand(name, help);
    sub->add_option("--dir", *dir,
                    "cache directory (default: $MONODC_CACHE_DIR, else $XDG_CACHE_HOME/monodc, "
                    "else ~/.cache/monodc)");
    sub->callback([run] { std::exit(run()); });
  };
  addAction("ls", "list entries with their sizes and keys",
            [dir] { return listEntries(directoryOf(*dir), /*verify=*/false); });
  addAction("verify", "read every entry whole and check its checksum and key",
            [dir] { return listEntries(directoryOf(*dir), /*verify=*/true); });
  addAction("clear", "remove every entry (and leftover temporary files)",
            [dir] { return clearEntries(directoryOf(*dir)); });
}
