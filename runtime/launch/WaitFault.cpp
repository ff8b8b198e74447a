//===- WaitFault.cpp - what a bounded wait that gave up left behind -------===//
#include "monodc/runtime/WaitFault.h"

using namespace monodc::runtime;

std::optional<WaitFault> monodc::runtime::readWaitFault(const WaitFaultWords &words) {
  if (words[MONO_FAULT_STATE] == 0)
    return std::nullopt;
  WaitFault fault;
  fault.rank = words[MONO_FAULT_RANK];
  fault.cta = words[MONO_FAULT_CTA];
  fault.site = words[MONO_FAULT_SITE];
  fault.flag = words[MONO_FAULT_FLAG];
  fault.expectedTag = words[MONO_FAULT_EXPECTED];
  fault.seenTag = words[MONO_FAULT_SEEN];
  fault.budgetMicroseconds =
      words[MONO_FAULT_BUDGET_US] ? words[MONO_FAULT_BUDGET_US] : MONO_DEFAULT_WAIT_BUDGET_US;
  return fault;
}

std::string monodc::runtime::describeWaitFault(const WaitFault &fault,
                                               const LaunchInterface &interface) {
  std::string where = "wait site " + std::to_string(fault.site) + " (not in the manifest)";
  if (fault.site < interface.waits.size()) {
    const WaitSiteSpec &site = interface.waits[fault.site];
    where = "stage '" + site.stage + "' (wait site " + std::to_string(fault.site) + ") polled " +
            (site.peerRank >= 0 ? "rank " + std::to_string(site.peerRank) + "'s " : "") + "'" +
            site.flags + "'";
  }
  const uint32_t us = fault.budgetMicroseconds;
  const std::string budget =
      us % 1000 == 0 ? std::to_string(us / 1000) + " ms" : std::to_string(us) + " us";
  return "kernel " + interface.kernelName + ": rank " + std::to_string(fault.rank) + " CTA " +
         std::to_string(fault.cta) + " gave up waiting after its budget of " + budget + ": " +
         where +
         " flag " + std::to_string(fault.flag) + " for the step's tag " +
         std::to_string(fault.expectedTag) + " and saw tag " + std::to_string(fault.seenTag) +
         "; the launch's outputs are not valid, and the step sequence's buffers (epoch, peer, "
         "scratch) must be zeroed before its next step";
}
