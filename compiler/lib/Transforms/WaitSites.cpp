//===- WaitSites.cpp - number a launch's waits ----------------------------===//
//
// A bounded wait that gives up writes its site into the epoch buffer's
// wait-fault record; the HIP printer, the manifest and the simulator number
// the sites here, so they agree.
//
//===----------------------------------------------------------------------===//
#include "monodc/Transforms/Passes.h"

using namespace mlir;
using namespace monodc::mono;

SmallVector<Operation *> monodc::mono::waitSites(LaunchOp launch) {
  SmallVector<Operation *> sites;
  launch.walk([&](Operation *op) {
    if (isa<WaitOp, WaitPeerOp>(op))
      sites.push_back(op);
  });
  return sites;
}
