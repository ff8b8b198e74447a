//===- StepMemory.cpp - what one rank's layer steps share -----------------===//
#include "monodc/runtime/StepMemory.h"

using namespace monodc::runtime;

namespace {
/// The scratch buffer's key among a kernel's regions (no region has this name).
constexpr const char *kScratchKey = "mono_scratch";
} // namespace

StepMemory::~StepMemory() {
  if (epoch_)
    runtime_->release(epoch_);
  for (auto &[key, buffer] : internal_)
    runtime_->release(buffer.first);
}

Result<void *> StepMemory::epoch(int64_t words) {
  if (epoch_) {
    if (words != epochWords_)
      return makeError("the rank's epoch buffer holds " + std::to_string(epochWords_) +
                       " words, and a launch asks for " + std::to_string(words) +
                       ": every launch of a rank's steps must have the same grid");
    return epoch_;
  }
  if (words < 1)
    return makeError("an epoch buffer needs at least one word, got " + std::to_string(words));
  if (Status s = runtime_->setDevice(device_); !s)
    return s.error();
  Result<void *> buffer = runtime_->allocate(static_cast<size_t>(4 * words));
  if (!buffer)
    return buffer.error();
  if (Status s = runtime_->zero(*buffer, static_cast<size_t>(4 * words)); !s) {
    runtime_->release(*buffer);
    return s.error();
  }
  epoch_ = *buffer;
  epochWords_ = words;
  return epoch_;
}

Status StepMemory::zeroEpoch() {
  if (!epoch_)
    return Status::success();
  if (Status s = runtime_->setDevice(device_); !s)
    return s;
  return runtime_->zero(epoch_, static_cast<size_t>(4 * epochWords_));
}

Result<void *> StepMemory::internal(const std::string &kernel, const std::string &region,
                                    int64_t rows, int64_t bytes) {
  auto key = std::make_tuple(kernel, region, rows);
  if (auto found = internal_.find(key); found != internal_.end()) {
    if (found->second.second != bytes)
      return makeError("kernel " + kernel + "'s output '" + region + "' at rows " +
                       std::to_string(rows) + " holds " + std::to_string(found->second.second) +
                       " bytes in one layer and " + std::to_string(bytes) +
                       " in another: kernels of one name must agree");
    return found->second.first;
  }
  if (Status s = runtime_->setDevice(device_); !s)
    return s.error();
  Result<void *> buffer = runtime_->allocate(static_cast<size_t>(bytes));
  if (!buffer)
    return buffer.error();
  internal_[key] = {*buffer, bytes};
  internalBytes_ += bytes;
  return *buffer;
}

Result<void *> StepMemory::scratch(const std::string &kernel, int64_t rows, int64_t bytes) {
  const bool fresh = !internal_.count({kernel, kScratchKey, rows});
  Result<void *> buffer = internal(kernel, kScratchKey, rows, bytes);
  if (buffer && fresh)
    if (Status s = runtime_->zero(*buffer, static_cast<size_t>(bytes)); !s)
      return s.error();
  return buffer;
}
