//===- Commands.h - the monodc subcommands ----------------------*- C++ -*-===//
//
// Each subcommand lives in its own file and registers itself on the app; its
// callback runs the command and exits with its status.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_TOOLS_COMMANDS_H
#define MONODC_TOOLS_COMMANDS_H

#include <CLI/CLI.hpp>

#include <string>

namespace monodc::cli {

/// Prints `monodc: error: <message>` as one line on stderr and exits 1.
[[noreturn]] void fail(const std::string &message);

void addBuildCommand(CLI::App &app);
void addSimulateCommand(CLI::App &app);
void addCacheCommand(CLI::App &app);
void addInspectCommand(CLI::App &app);
void addMatrixCommand(CLI::App &app);
void addReportCommand(CLI::App &app);

} // namespace monodc::cli

#endif
