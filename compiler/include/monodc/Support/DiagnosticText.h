//===- DiagnosticText.h - a context's diagnostics as text -------*- C++ -*-===//
#ifndef MONODC_SUPPORT_DIAGNOSTICTEXT_H
#define MONODC_SUPPORT_DIAGNOSTICTEXT_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace monodc {

/// While alive, collects every diagnostic of `context` into one line of text,
/// for errors that must be reported as values (a CLI line, an Error).
class DiagnosticText {
public:
  explicit DiagnosticText(mlir::MLIRContext &context)
      : handler(&context, [this](mlir::Diagnostic &d) {
          llvm::raw_string_ostream os(text);
          os << d << " ";
          return mlir::success();
        }) {}

  const std::string &str() const { return text; }

private:
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace monodc

#endif
