//===- monodc.cpp - the monodc command line -------------------------------===//
//
// Every error is one line on stderr and a non-zero exit: 2 when the inputs
// are refused before any work, 1 when the work fails. No exception leaves
// main: whatever a command throws becomes such a line.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "monodc/Dialect/Mono/MonoDialect.h"
#include "monodc/runtime/CodeObject.h"
#include "monodc/stages/ModelConfig.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <new>
#include <unistd.h>

[[noreturn]] void monodc::cli::fail(const std::string &message, int status) {
  std::string line = message;
  for (char &c : line)
    if (c == '\n')
      c = ' ';
  std::cerr << "monodc: error: " << line << "\n";
  std::cout.flush();
  std::exit(status);
}

std::string monodc::cli::plural(int64_t count, const std::string &noun,
                                const std::string &nouns) {
  return fmt::format("{} {}", count, count == 1 ? noun : nouns.empty() ? noun + "s" : nouns);
}

std::optional<std::string> monodc::cli::gridProblem(const std::string &arch, int64_t grid) {
  // The epoch buffer keeps a mark per CTA; 65536 is far past any part's
  // compute units, so a larger value is a typo, not a configuration.
  constexpr int64_t kMaxGrid = monodc::mono::LaunchOp::kMaxGrid;
  if (grid >= 1 && grid <= kMaxGrid)
    return std::nullopt;
  int64_t units = monodc::stages::defaultGrid(arch);
  return fmt::format("--grid: Value {} not in range 1 to {} (CTAs; default: the arch's compute "
                     "units{})",
                     grid, kMaxGrid, units ? fmt::format(", {} for {}", units, arch) : "");
}

std::optional<std::string> monodc::cli::jobsProblem(int64_t jobs) {
  if (jobs >= 1 && jobs <= kMaxJobs)
    return std::nullopt;
  return fmt::format("-j must be in 1..{}, got {}", kMaxJobs, jobs);
}

std::optional<std::string> monodc::cli::persistentProblem(const std::string &where,
                                                          const runtime::KernelInfo &kernel) {
  // The runtime's rule, the one the JIT compiler applies to every key, so
  // that build, matrix and a serving session refuse the same kernels.
  runtime::Status persistent = runtime::checkPersistentKernel(kernel);
  if (persistent)
    return std::nullopt;
  return where.empty() ? persistent.message() : where + ": " + persistent.message();
}

std::optional<int> monodc::cli::clangOptLevel(const std::string &options,
                                              std::string &problem) {
  if (options.size() == 3 && options.rfind("-O", 0) == 0 && options[2] >= '0' &&
      options[2] <= '3')
    return options[2] - '0';
  problem = "--options: the clang backend takes -O0..-O3, not '" + options + "'";
  return std::nullopt;
}

std::optional<std::string> monodc::cli::writeFile(const std::string &path,
                                                  const std::string &bytes) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return "cannot write " + path + ": " + std::strerror(errno);
  size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file);
  int writeErrno = errno;
  if (std::fclose(file) != 0 && written == bytes.size())
    return "cannot write " + path + ": " + std::strerror(errno);
  if (written != bytes.size())
    return "cannot write " + path + ": " + std::strerror(writeErrno);
  return std::nullopt;
}

std::optional<std::string> monodc::cli::readFile(const std::string &path, std::string &bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return "cannot read " + path + ": it is a directory";
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return "cannot read " + path + ": " + std::strerror(errno);
  bytes.clear();
  char buffer[1 << 16];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), file)) > 0;)
    bytes.append(buffer, n);
  bool failed = std::ferror(file);
  int readErrno = errno;
  std::fclose(file);
  if (failed)
    return "cannot read " + path + ": " + std::strerror(readErrno);
  return std::nullopt;
}

std::optional<std::string> monodc::cli::checkWritableDirectory(const std::string &directory) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec)
    return "cannot create directory " + directory + ": " + ec.message();
  if (!std::filesystem::is_directory(directory, ec))
    return "cannot create directory " + directory + ": Not a directory";
  // Creating a directory can succeed where files cannot (a read-only
  // mount, a directory without write permission): ask the system.
  if (::access(directory.c_str(), W_OK | X_OK) != 0)
    return "cannot write " + directory + ": " + std::strerror(errno);
  return std::nullopt;
}

namespace {

int run(int argc, char **argv) {
  CLI::App app{"monodc: fused persistent decode-layer kernels"};
  app.require_subcommand(1);
  monodc::cli::addBuildCommand(app);
  monodc::cli::addSimulateCommand(app);
  monodc::cli::addCacheCommand(app);
  monodc::cli::addInspectCommand(app);
  monodc::cli::addMatrixCommand(app);
  monodc::cli::addReportCommand(app);
  monodc::cli::addLayersCommand(app);
  if (argc <= 1)
    monodc::cli::fail("no command given; `monodc --help` lists the commands",
                      monodc::cli::kUsageError);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    monodc::cli::fail(e.what(), monodc::cli::kUsageError);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // The commands run inside app.parse() (their callbacks); whatever they
  // throw ends here as one line instead of std::terminate.
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    monodc::cli::fail("out of memory (std::bad_alloc)");
  } catch (const std::exception &e) {
    monodc::cli::fail(e.what());
  } catch (...) {
    monodc::cli::fail("an unknown exception");
  }
}
