//===- ArgumentLayout.cpp - kernel arguments and the launcher's buffers ---===//
#include "monodc/runtime/ArgumentLayout.h"

#include <cstring>

using namespace monodc::runtime;

namespace {

/// Checks the metadata against the interface and takes its offsets.
Status applyNotes(const KernelInfo &notes, ArgumentLayout &layout) {
  std::vector<const KernelArgument *> explicitArgs;
  for (const KernelArgument &arg : notes.arguments)
    if (arg.valueKind.rfind("hidden_", 0) != 0)
      explicitArgs.push_back(&arg);
  if (explicitArgs.size() != layout.slots.size())
    return makeError("kernel " + notes.name + " takes " + std::to_string(explicitArgs.size()) +
                     " arguments, its launch interface names " +
                     std::to_string(layout.slots.size()));
  for (size_t i = 0; i < explicitArgs.size(); ++i) {
    const KernelArgument &arg = *explicitArgs[i];
    ArgumentSlot &slot = layout.slots[i];
    if (slot.kind == "rank") {
      if (arg.size != 4 || arg.valueKind != "by_value")
        return makeError("argument " + std::to_string(i) + " (" + arg.name + ") of kernel " +
                         notes.name + " is not the 4-byte rank");
      slot.offset = arg.offset;
      continue;
    }
    if (slot.kind == "rows" || slot.kind == "cols") {
      if (arg.size != 8 || arg.valueKind != "by_value")
        return makeError("argument " + std::to_string(i) + " (" + arg.name + ") of kernel " +
                         notes.name + " is not the 8-byte " +
                         (slot.kind == "rows" ? "row" : "column") + " count of region " +
                         slot.region);
      slot.offset = arg.offset;
      continue;
    }
    if (arg.size != 8 || arg.valueKind != "global_buffer")
      return makeError("argument " + std::to_string(i) + " (" + arg.name + ") of kernel " +
                       notes.name + " is not a pointer");
    // clang may name a pointer argument "<name>.coerce"; hiprtc of ROCm 5
    // names none.
    std::string expected =
        slot.launcherOwned || slot.kind == "epoch" || slot.kind == "peers" ? slot.name : "r_";
    if (!arg.name.empty() && arg.name.rfind(expected, 0) != 0)
      return makeError("argument " + std::to_string(i) + " (" + arg.name + ") of kernel " +
                       notes.name + " does not match region " + slot.name +
                       " of the launch interface");
    slot.offset = arg.offset;
  }
  layout.kernargBytes = notes.kernargBytes;
  return Status::success();
}

} // namespace

const ArgumentSlot *ArgumentLayout::slot(const std::string &name) const {
  for (const ArgumentSlot &s : slots)
    if (s.name == name)
      return &s;
  return nullptr;
}

Result<ArgumentLayout> monodc::runtime::layoutArguments(const LaunchInterface &interface,
                                                        const KernelInfo *notes) {
  ArgumentLayout layout;
  int64_t offset = 0;
  auto add = [&](ArgumentSlot slot) {
    slot.offset = offset;
    offset += slot.size;
    layout.slots.push_back(std::move(slot));
  };
  for (const RegionSpec &region : interface.arguments) {
    add({region.name, region.kind, "", 0, 8, region.bytes, false, region.format});
    if (region.rowsAtLaunch)
      add({region.name + kRowsSuffix, "rows", region.name, 0, 8, 0, false, ""});
    if (region.colsAtLaunch)
      add({region.name + kColsSuffix, "cols", region.name, 0, 8, 0, false, ""});
  }
  add({kScratchArgument, "scratch", "", 0, 8, interface.scratchBytes, true, ""});
  add({kEpochArgument, "epoch", "", 0, 8, interface.epochWords * 4, false, ""});
  if (interface.peerSlotBytes > 0) {
    add({kPeersArgument, "peers", "", 0, 8, interface.ranks * 8, false, ""});
    add({kRankArgument, "rank", "", 0, 4, 0, false, ""});
  }
  layout.kernargBytes = offset;
  layout.workspaceBytes = interface.scratchBytes;
  if (notes)
    if (Status applied = applyNotes(*notes, layout); !applied)
      return applied.error();
  return layout;
}

Result<std::vector<uint8_t>> monodc::runtime::packArguments(
    const ArgumentLayout &layout, const std::map<std::string, uint64_t> &bound,
    uint64_t workspace) {
  for (const auto &[name, address] : bound) {
    const ArgumentSlot *slot = layout.slot(name);
    if (!slot)
      return makeError("the launch has no region '" + name + "' to bind");
    if (slot->launcherOwned)
      return makeError("the " + name + " buffer belongs to the launcher and cannot be bound");
  }
  std::vector<uint8_t> buffer(static_cast<size_t>(layout.kernargBytes), 0);
  for (const ArgumentSlot &slot : layout.slots) {
    if (slot.kind == "rank") {
      // A value, and rank 0 is a rank like any other.
      auto it = bound.find(slot.name);
      if (it == bound.end())
        return makeError("the rank (" + slot.name + ") is not bound");
      if (slot.offset < 0 || slot.offset + 4 > layout.kernargBytes)
        return makeError("argument '" + slot.name + "' lies outside the kernarg buffer");
      uint32_t rank = static_cast<uint32_t>(it->second);
      std::memcpy(buffer.data() + slot.offset, &rank, sizeof(rank));
      continue;
    }
    if (slot.kind == "rows") {
      auto it = bound.find(slot.name);
      if (it == bound.end())
        return makeError("the rows of region '" + slot.region +
                         "' (given at each launch) are not set");
      if (slot.offset < 0 || slot.offset + 8 > layout.kernargBytes)
        return makeError("argument '" + slot.name + "' lies outside the kernarg buffer");
      int64_t rows = static_cast<int64_t>(it->second);
      std::memcpy(buffer.data() + slot.offset, &rows, sizeof(rows));
      continue;
    }
    uint64_t address = 0;
    if (slot.launcherOwned && workspace == 0 && slot.bytes > 0) {
      return makeError("the " + slot.name + " buffer (" + std::to_string(slot.bytes) +
                       " bytes) is not allocated");
    } else if (slot.launcherOwned) {
      address = workspace;
    } else {
      auto it = bound.find(slot.name);
      if (it == bound.end() || it->second == 0)
        return makeError("region '" + slot.name + "' (" + slot.kind + ", " +
                         std::to_string(slot.bytes) + " bytes) is not bound");
      address = it->second;
    }
    if (slot.offset < 0 || slot.offset + 8 > layout.kernargBytes)
      return makeError("argument '" + slot.name + "' lies outside the kernarg buffer");
    std::memcpy(buffer.data() + slot.offset, &address, sizeof(address));
  }
  return buffer;
}
