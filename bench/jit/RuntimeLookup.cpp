//===- RuntimeLookup.cpp - a runtime-only process serving one kernel ------===//
//
// Linked against the runtime library alone (no LLVM, clang or MLIR), as a
// serving process would be: opens a session over a prebuilt cache, asks for
// one kernel by request and prints how long that took. monodc-bench-jit runs
// it as a new process. Usage: monodc-bench-lookup CACHE_DIR REQUEST FIELDS...
//
//===----------------------------------------------------------------------===//
#include "monodc/runtime/Session.h"

#include <chrono>
#include <iostream>

int main(int argc, char **argv) {
  auto start = std::chrono::steady_clock::now();
  if (argc < 2) {
    std::cerr << "usage: monodc-bench-lookup CACHE_DIR [name=value ...]\n";
    return 2;
  }
  std::string text;
  for (int i = 2; i < argc; ++i)
    text += std::string(argv[i]) + " ";
  auto request = monodc::KernelRequest::parse(text);
  if (!request) {
    std::cerr << request.message() << "\n";
    return 1;
  }
  monodc::SessionOptions options;
  options.cacheDirectory = argv[1];
  monodc::Session session(options);
  auto kernel = session.kernel(*request);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  if (!kernel) {
    std::cerr << kernel.message() << "\n";
    return 1;
  }
  std::cout << "lookup_ms " << ms << "\nbytes " << (*kernel)->codeObject().size() << "\n";
  return 0;
}
