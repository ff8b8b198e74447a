//===- monodc-opt.cpp - run mono passes on .mlir files --------------------===//
#include "monodc/Dialect/Mono/MonoDialect.h"
#include "monodc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<monodc::mono::MonoDialect, mlir::arith::ArithDialect>();
  monodc::mono::registerMonoPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "monodc pass driver\n", registry));
}
