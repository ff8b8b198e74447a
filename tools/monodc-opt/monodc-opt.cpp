//===- monodc-opt.cpp - run mono passes on .mlir files --------------------===//
//
// mlir-opt with the mono and arith dialects and the mono passes. Problems in
// the input are MLIR diagnostics (`file:line:col: error: ...`), exit 1. What
// would otherwise end the process another way is one line on stderr,
// `monodc-opt: error: ...`, and exit 1 too: an exception that reaches main,
// running out of memory (LLVM's allocation failures included) and LLVM's
// fatal errors.
//
//===----------------------------------------------------------------------===//
#include "monodc/Dialect/Mono/MonoDialect.h"
#include "monodc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Signals.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <unistd.h>

namespace {

/// Writes `monodc-opt: error: <what><detail><end>` as one line with
/// write(2) alone (no allocation: it also runs when memory is gone), removes
/// a partly written output file as LLVM's own error paths do, and exits 1.
[[noreturn]] void failLine(const char *what, const char *detail = "", const char *end = "") {
  auto put = [](const char *text) {
    for (const char *p = text; *p; ++p) {
      char c = *p == '\n' ? ' ' : *p;
      (void)!::write(STDERR_FILENO, &c, 1);
    }
  };
  put("monodc-opt: error: ");
  put(what);
  put(detail);
  put(end);
  (void)!::write(STDERR_FILENO, "\n", 1);
  llvm::sys::RunInterruptHandlers();
  std::_Exit(1);
}

/// LLVM's allocation failures (its new handler, safe_malloc) end here
/// instead of printing "LLVM ERROR: out of memory" and aborting.
void onBadAlloc(void *, const char *reason, bool) {
  failLine("out of memory (", reason ? reason : "", ")");
}

/// report_fatal_error ends here instead of a crash report.
void onFatalError(void *, const char *reason, bool) { failLine(reason ? reason : "fatal error"); }

} // namespace

int main(int argc, char **argv) {
  llvm::install_bad_alloc_error_handler(onBadAlloc);
  llvm::install_fatal_error_handler(onFatalError);
  try {
    mlir::DialectRegistry registry;
    registry.insert<monodc::mono::MonoDialect, mlir::arith::ArithDialect>();
    monodc::mono::registerMonoPasses();
    mlir::registerCanonicalizerPass();
    mlir::registerCSEPass();
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, "monodc pass driver\n", registry));
  } catch (const std::bad_alloc &) {
    failLine("out of memory (std::bad_alloc)");
  } catch (const std::exception &e) {
    failLine(e.what());
  } catch (...) {
    failLine("an unknown exception");
  }
}
