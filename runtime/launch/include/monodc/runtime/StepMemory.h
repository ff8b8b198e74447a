//===- StepMemory.h - what one rank's layer steps share ----------*- C++ -*-===//
//
// Every launch of a rank's decode steps shares one epoch buffer: the peer
// buffers' flags are tagged by its epoch, so two layers counting their
// steps apart would meet each other's stale flags. The outputs that live
// only inside a step (K1's hand-over to K2, each stage's results that no
// caller reads) are dead once the step ends, and the layers' steps run one
// after another on the rank's stream, so every layer can use the same ones;
// so can the launches' scratch buffers, whose flags the one epoch tags.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_STEPMEMORY_H
#define MONODC_RUNTIME_STEPMEMORY_H

#include "monodc/runtime/DeviceRuntime.h"

#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace monodc::runtime {

class StepMemory {
public:
  /// Memory on `device`, allocated as the layer steps ask for it.
  StepMemory(std::shared_ptr<DeviceRuntime> runtime, int device)
      : runtime_(std::move(runtime)), device_(device) {}
  ~StepMemory();
  StepMemory(const StepMemory &) = delete;
  StepMemory &operator=(const StepMemory &) = delete;

  const std::shared_ptr<DeviceRuntime> &runtime() const { return runtime_; }
  int device() const { return device_; }

  /// The epoch buffer of `words` 32-bit words, zeroed when allocated; every
  /// caller must ask the same size (launches of one grid).
  Result<void *> epoch(int64_t words);
  int64_t epochWords() const { return epochWords_; }
  /// Zeroes the epoch buffer (after a wait gave up).
  Status zeroEpoch();

  /// The buffer of `kernel`'s step-internal output `region` at step width
  /// `rows` (`bytes`), the same for every layer that asks.
  Result<void *> internal(const std::string &kernel, const std::string &region, int64_t rows,
                          int64_t bytes);
  /// The scratch buffer of `kernel` at step width `rows` (`bytes`, zeroed
  /// when allocated), the same for every layer that asks.
  Result<void *> scratch(const std::string &kernel, int64_t rows, int64_t bytes);
  /// Bytes held by the step-internal buffers (scratch included).
  int64_t internalBytes() const { return internalBytes_; }

private:
  std::shared_ptr<DeviceRuntime> runtime_;
  int device_;
  void *epoch_ = nullptr;
  int64_t epochWords_ = 0;
  std::map<std::tuple<std::string, std::string, int64_t>, std::pair<void *, int64_t>> internal_;
  int64_t internalBytes_ = 0;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_STEPMEMORY_H
