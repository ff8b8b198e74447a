//===- CApiHandles.h - what the C ABI's opaque handles hold -----*- C++ -*-===//
//
// Not part of the C ABI: a header of the library, public so that entry points
// outside runtime/ (jit/'s monodc_jit_session_open) build the same handles.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_CAPIHANDLES_H
#define MONODC_RUNTIME_CAPIHANDLES_H

#include "monodc/runtime/Session.h"
#include "monodc/runtime/monodc.h"

#include <memory>
#include <string>

struct monodc_error {
  std::string message;
};

struct monodc_session {
  std::unique_ptr<monodc::Session> session;
};

namespace monodc::capi {

inline monodc_error *toError(const std::string &message) { return new monodc_error{message}; }

/// Opens a session over `cacheDir` (null: the default) with `builder`.
monodc_error *openSession(const char *cacheDir, std::shared_ptr<KernelBuilder> builder,
                          monodc_session **session);

} // namespace monodc::capi

#endif // MONODC_RUNTIME_CAPIHANDLES_H
