//===- JitCApi.cpp - the C ABI's session with the compiler ----------------===//
#include "monodc/runtime/CApiHandles.h"
#include "monodc/jit/Compiler.h"

extern "C" monodc_error *monodc_jit_session_open(const char *cache_dir,
                                                 monodc_session **session) {
  return monodc::capi::openSession(cache_dir, std::make_shared<monodc::Compiler>(), session);
}
