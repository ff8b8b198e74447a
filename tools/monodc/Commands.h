//===- Commands.h - the monodc subcommands ----------------------*- C++ -*-===//
//
// Each subcommand lives in its own file and registers itself on the app; its
// callback runs the command and exits with its status. The helpers below are
// the rules every subcommand shares, so that they refuse the same things with
// the same words.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_TOOLS_COMMANDS_H
#define MONODC_TOOLS_COMMANDS_H

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace monodc::runtime {
struct KernelInfo;
}

namespace monodc::cli {

/// Exit status of a command whose inputs are wrong (nothing was built).
inline constexpr int kUsageError = 2;

/// Prints `monodc: error: <message>` as one line on stderr and exits with
/// `status` (1: the work failed; kUsageError: the inputs were refused).
[[noreturn]] void fail(const std::string &message, int status = 1);

/// "1 key", "2 keys"; "1 launch", "2 launches" with the plural given.
std::string plural(int64_t count, const std::string &noun, const std::string &nouns = "");

/// The grid rule of build, matrix and simulate: a grid given on the command
/// line is 1..65536 CTAs, the launch verifier's bound (mono::LaunchOp::
/// kMaxGrid; 0 is refused, never read as "the default"). Returns why `grid`
/// is refused, or nothing; `arch` names the default.
std::optional<std::string> gridProblem(const std::string &arch, int64_t grid);

/// The -j rule of build, matrix and simulate: 1..kMaxJobs threads (each
/// build or schedule holds its own memory, so a larger value is a typo, not a
/// machine). Returns why `jobs` is refused, or nothing.
inline constexpr int kMaxJobs = 256;
std::optional<std::string> jobsProblem(int64_t jobs);

/// The persistent-launch rule of build and matrix: a kernel that needs
/// scratch memory (spills, a private segment, a dynamic stack) is refused.
/// Returns the refusal, naming the kernel and what it needs (scratch bytes,
/// VGPR spills, a dynamic stack), after `where` when that is not empty.
std::optional<std::string> persistentProblem(const std::string &where,
                                             const runtime::KernelInfo &kernel);

/// The options the in-process clang backend takes (-O0..-O3), as the JIT's
/// clang backend reads them; returns the level, or the refusal.
std::optional<int> clangOptLevel(const std::string &options, std::string &problem);

/// Writes a whole file; the error names the path and the system's reason.
std::optional<std::string> writeFile(const std::string &path, const std::string &bytes);
/// Reads a whole file into `bytes`; refuses directories by name.
std::optional<std::string> readFile(const std::string &path, std::string &bytes);
/// Checks that `directory` exists (creating it) and takes new files: the
/// error names the directory and the system's reason.
std::optional<std::string> checkWritableDirectory(const std::string &directory);

void addBuildCommand(CLI::App &app);
void addSimulateCommand(CLI::App &app);
void addCacheCommand(CLI::App &app);
void addInspectCommand(CLI::App &app);
void addMatrixCommand(CLI::App &app);
void addReportCommand(CLI::App &app);
void addLayersCommand(CLI::App &app);

} // namespace monodc::cli

#endif
