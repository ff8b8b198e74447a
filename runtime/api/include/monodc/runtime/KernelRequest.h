//===- KernelRequest.h - what a serving engine asks for ---------*- C++ -*-===//
#ifndef MONODC_RUNTIME_KERNELREQUEST_H
#define MONODC_RUNTIME_KERNELREQUEST_H

#include "monodc/runtime/Target.h"
#include "monodc/runtime/BuildKey.h"

namespace monodc {

/// The fields of a build key a caller chooses. The rest (config digest,
/// backend version, compiler build id, a default grid) is filled in by the
/// compiler, or, in a runtime-only session, found in the cache.
struct KernelRequest {
  std::string model = "dsv41";
  std::string launch = "attention_front";
  std::string arch = std::string(runtime::kDefaultTarget);
  std::string features;
  int64_t tp = 2;
  int64_t rows = 6;
  int64_t ratio = 0;
  int64_t grid = 0; ///< 0: the arch's compute units
  int64_t block = 256;
  std::string backend = "clang";
  std::string options = "-O3";

  /// `name=value` pairs separated by spaces, in BuildKey's field names and
  /// encoding: `model=dsv41 launch=attention_front arch=gfx950 tp=2 rows=6`.
  std::string text() const;
  /// The reverse; fields left out keep their defaults, but for an `sm_*`
  /// arch a backend left out is nvrtc (the only one that builds them).
  /// Unknown names and fields the compiler fills in are refused.
  static runtime::Result<KernelRequest> parse(std::string_view text);

  /// True when every field of the request equals the key's (grid 0: any grid).
  bool matches(const runtime::BuildKey &key) const;
};

} // namespace monodc

#endif // MONODC_RUNTIME_KERNELREQUEST_H
