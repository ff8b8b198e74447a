//===- IsolatedRun.h - run vendor code in a child process -------*- C++ -*-===//
//
// ROCm 5.2's hiprtc aborts the whole process when asked for a processor its
// code object manager does not know (gfx942, gfx950). Compiling in a forked
// child turns such a crash, or a hang, into an error value.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_ISOLATEDRUN_H
#define MONODC_RUNTIME_ISOLATEDRUN_H

#include "monodc/runtime/Result.h"

#include <functional>
#include <string>

namespace monodc::runtime {

/// Runs `work` in a forked child and returns what it returned. A child that
/// dies by a signal, exits without an answer, or runs past `timeoutSeconds`
/// (it is then killed) is an error that starts with `what`.
Result<std::string> runIsolated(const std::function<Result<std::string>()> &work,
                                int timeoutSeconds, const std::string &what);

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_ISOLATEDRUN_H
