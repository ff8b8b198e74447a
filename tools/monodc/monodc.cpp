//===- monodc.cpp - the monodc command line -------------------------------===//
//
// Every error is one line on stderr and a non-zero exit.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include <iostream>

[[noreturn]] void monodc::cli::fail(const std::string &message) {
  std::string line = message;
  for (char &c : line)
    if (c == '\n')
      c = ' ';
  std::cerr << "monodc: error: " << line << "\n";
  std::exit(1);
}

int main(int argc, char **argv) {
  CLI::App app{"monodc: fused persistent decode-layer kernels"};
  app.require_subcommand(1);
  monodc::cli::addBuildCommand(app);
  monodc::cli::addSimulateCommand(app);
  monodc::cli::addCacheCommand(app);
  monodc::cli::addInspectCommand(app);
  monodc::cli::addMatrixCommand(app);
  monodc::cli::addReportCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    monodc::cli::fail(e.what());
  }
  return 0;
}
