//===- PeerGroup.cpp - a rank's peer memory across processes --------------===//
#include "monodc/runtime/PeerGroup.h"

#include <cstring>
#include <string>

using namespace monodc::runtime;

namespace {

// A handle: "monodc-peer" and a version, then rank, ranks (u32), buffer
// bytes (u64) and the 64 bytes of the runtime's IPC handle.
constexpr char kMagic[12] = "monodc-peer";
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = sizeof kMagic + 4 + 4 + 4 + 8;
constexpr size_t kHandleBytes = kHeaderBytes + sizeof(IpcHandle);

struct Decoded {
  uint32_t rank = 0, ranks = 0;
  uint64_t bufferBytes = 0;
  IpcHandle ipc{};
};

template <typename T> void put(std::vector<uint8_t> &out, size_t &at, const T &value) {
  std::memcpy(out.data() + at, &value, sizeof value);
  at += sizeof value;
}
template <typename T> T take(const std::vector<uint8_t> &in, size_t &at) {
  T value;
  std::memcpy(&value, in.data() + at, sizeof value);
  at += sizeof value;
  return value;
}

std::vector<uint8_t> encode(int rank, int ranks, int64_t bufferBytes, const IpcHandle &ipc) {
  std::vector<uint8_t> out(kHandleBytes);
  size_t at = 0;
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  at += sizeof kMagic;
  put(out, at, kVersion);
  put(out, at, static_cast<uint32_t>(rank));
  put(out, at, static_cast<uint32_t>(ranks));
  put(out, at, static_cast<uint64_t>(bufferBytes));
  std::memcpy(out.data() + at, ipc.data(), ipc.size());
  return out;
}

Result<Decoded> decode(const std::vector<uint8_t> &in, size_t index) {
  const std::string which = "peer handle " + std::to_string(index);
  if (in.size() != kHandleBytes || std::memcmp(in.data(), kMagic, sizeof kMagic) != 0)
    return makeError(which + " is not a monodc peer handle (" + std::to_string(in.size()) +
                     " bytes; one is " + std::to_string(kHandleBytes) + ")");
  size_t at = sizeof kMagic;
  if (uint32_t version = take<uint32_t>(in, at); version != kVersion)
    return makeError(which + " is of version " + std::to_string(version) + ", this library's " +
                     std::to_string(kVersion));
  Decoded d;
  d.rank = take<uint32_t>(in, at);
  d.ranks = take<uint32_t>(in, at);
  d.bufferBytes = take<uint64_t>(in, at);
  std::memcpy(d.ipc.data(), in.data() + at, d.ipc.size());
  return d;
}

} // namespace

Result<std::unique_ptr<PeerGroup>> PeerGroup::allocate(std::shared_ptr<DeviceRuntime> runtime,
                                                       int device, int rank, int ranks,
                                                       int64_t bufferBytes) {
  if (ranks < 2)
    return makeError("a peer group needs at least 2 ranks, got " + std::to_string(ranks));
  if (rank < 0 || rank >= ranks)
    return makeError("rank " + std::to_string(rank) + " is not one of the group's ranks 0.." +
                     std::to_string(ranks - 1));
  if (bufferBytes <= 0)
    return makeError("a peer group needs a peer buffer, got " + std::to_string(bufferBytes) +
                     " bytes (a launch without peer memory has none)");
  if (Status s = runtime->initialize(); !s)
    return s.error();
  if (Status s = runtime->setDevice(device); !s)
    return s.error();
  std::unique_ptr<PeerGroup> group(new PeerGroup(runtime, device, rank, ranks, bufferBytes));
  Result<void *> buffer = runtime->allocateShareable(static_cast<size_t>(bufferBytes));
  if (!buffer)
    return buffer.error();
  group->buffer_ = *buffer;
  if (Status s = runtime->zero(*buffer, static_cast<size_t>(bufferBytes)); !s)
    return s.error();
  return group;
}

Result<std::unique_ptr<PeerGroup>> PeerGroup::create(std::shared_ptr<DeviceRuntime> runtime,
                                                     int device, int rank, int ranks,
                                                     int64_t bufferBytes) {
  Result<std::unique_ptr<PeerGroup>> group =
      allocate(std::move(runtime), device, rank, ranks, bufferBytes);
  if (!group)
    return group.error();
  PeerGroup &g = **group;
  Result<IpcHandle> ipc = g.runtime_->exportHandle(g.buffer_);
  if (!ipc)
    return ipc.error();
  g.handle_ = encode(rank, ranks, bufferBytes, *ipc);
  return group;
}

Result<std::vector<std::unique_ptr<PeerGroup>>>
PeerGroup::createLocal(std::shared_ptr<DeviceRuntime> runtime, const std::vector<int> &devices,
                       int64_t bufferBytes) {
  const int ranks = static_cast<int>(devices.size());
  std::vector<std::unique_ptr<PeerGroup>> groups;
  std::vector<void *> pointers;
  for (int r = 0; r < ranks; ++r) {
    Result<std::unique_ptr<PeerGroup>> group =
        allocate(runtime, devices[r], r, ranks, bufferBytes);
    if (!group)
      return group.error();
    pointers.push_back((*group)->buffer_);
    groups.push_back(std::move(*group));
  }
  // Ranks that share a GPU need no peer access between themselves.
  for (int a : devices)
    for (int b : devices)
      if (a != b)
        if (Status s = runtime->enablePeerAccess(a, b); !s)
          return s.error();
  for (auto &group : groups)
    if (Status s = group->buildTable(pointers); !s)
      return s.error();
  return groups;
}

PeerGroup::~PeerGroup() {
  for (void *p : opened_)
    runtime_->closeHandle(p);
  if (table_)
    runtime_->release(table_);
  if (buffer_)
    runtime_->release(buffer_);
}

Status PeerGroup::connect(const std::vector<std::vector<uint8_t>> &handles) {
  if (table_)
    return makeError("rank " + std::to_string(rank_) + "'s peer group is already connected");
  if (handles.size() != static_cast<size_t>(ranks_))
    return makeError("a peer group of " + std::to_string(ranks_) + " ranks takes " +
                     std::to_string(ranks_) + " handles, got " + std::to_string(handles.size()));
  std::vector<Decoded> decoded;
  for (size_t r = 0; r < handles.size(); ++r) {
    Result<Decoded> d = decode(handles[r], r);
    if (!d)
      return d.error();
    const std::string which = "peer handle " + std::to_string(r);
    if (d->rank != r)
      return makeError(which + " comes from rank " + std::to_string(d->rank) +
                       ": handles go in rank order");
    if (d->ranks != static_cast<uint32_t>(ranks_) ||
        d->bufferBytes != static_cast<uint64_t>(bufferBytes_))
      return makeError(which + " is of a group of " + std::to_string(d->ranks) + " ranks and " +
                       std::to_string(d->bufferBytes) + "-byte buffers, this rank's of " +
                       std::to_string(ranks_) + " and " + std::to_string(bufferBytes_) +
                       " (ranks of different kernels?)");
    if (r == static_cast<size_t>(rank_) && handles[r] != handle_)
      return makeError(which + " is not this rank's own handle");
    decoded.push_back(*d);
  }
  if (Status s = runtime_->setDevice(device_); !s)
    return s;
  std::vector<void *> pointers(ranks_, nullptr);
  for (int r = 0; r < ranks_; ++r) {
    if (r == rank_) {
      pointers[r] = buffer_;
      continue;
    }
    Result<void *> opened = runtime_->openHandle(decoded[r].ipc);
    if (!opened)
      return makeError("rank " + std::to_string(rank_) + " cannot open rank " + std::to_string(r) +
                       "'s peer buffer: " + opened.message());
    opened_.push_back(*opened);
    pointers[r] = *opened;
  }
  return buildTable(pointers);
}

Status PeerGroup::buildTable(const std::vector<void *> &pointers) {
  if (Status s = runtime_->setDevice(device_); !s)
    return s;
  Result<void *> table = runtime_->allocate(pointers.size() * sizeof(void *));
  if (!table)
    return table.error();
  if (Status s = runtime_->copyToDevice(*table, pointers.data(), pointers.size() * sizeof(void *));
      !s) {
    runtime_->release(*table);
    return s;
  }
  table_ = *table;
  return Status::success();
}
