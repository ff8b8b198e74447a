//===- PeerExchange.h - peer handles through a shared directory --*- C++ -*-===//
//
// The built-in exchange of peer handles (PeerGroup) for standalone use,
// where no process group moves them: the ranks share a directory.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_PEEREXCHANGE_H
#define MONODC_RUNTIME_PEEREXCHANGE_H

#include "monodc/runtime/Result.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace monodc::runtime {

/// Writes this rank's handle to `directory`/peer-RANK.handle (whole, by a
/// rename) and reads every rank's, waiting up to `timeout` for the others:
/// the handles in rank order, or an error naming the ranks that never
/// came. The directory must be fresh for each group (a handle left by an
/// earlier run would be read as this run's).
Result<std::vector<std::vector<uint8_t>>>
exchangePeerHandles(const std::string &directory, int rank, int ranks,
                    const std::vector<uint8_t> &mine, std::chrono::milliseconds timeout);

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_PEEREXCHANGE_H
