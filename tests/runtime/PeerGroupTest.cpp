// Peer memory across processes: each rank's buffer, its handle, the checks
// on the handles a rank connects with, the peer table, and the exchange
// through a shared directory. The stand-in HIP library (FakeHip.c) maps
// device memory to host memory and carries the pointer in an IPC handle,
// so two ranks of one process stand for two processes.
#include "monodc/runtime/CudaDriver.h"
#include "monodc/runtime/HipRuntime.h"
#include "monodc/runtime/PeerExchange.h"
#include "monodc/runtime/PeerGroup.h"

#include <gtest/gtest.h>

#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <thread>
#include <unistd.h>

using namespace monodc::runtime;

namespace {

std::shared_ptr<DeviceRuntime> fakeHip() {
  auto hip = HipRuntime::load({MONODC_FAKE_HIP_PATH});
  EXPECT_TRUE(hip.ok()) << hip.message();
  return *hip;
}

std::unique_ptr<PeerGroup> group(std::shared_ptr<DeviceRuntime> runtime, int rank, int ranks,
                                 int64_t bytes = 4096) {
  auto created = PeerGroup::create(runtime, 0, rank, ranks, bytes);
  EXPECT_TRUE(created.ok()) << created.message();
  return created.ok() ? std::move(*created) : nullptr;
}

/// The device table's pointers (host memory under the stand-in).
std::vector<void *> tableOf(const PeerGroup &g) {
  std::vector<void *> pointers(g.ranks());
  std::memcpy(pointers.data(), g.table(), pointers.size() * sizeof(void *));
  return pointers;
}

std::string freshDirectory(const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("monodc-peer-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST(PeerGroup, EveryRankTablesEveryRanksBufferInRankOrder) {
  auto hip = fakeHip();
  std::vector<std::unique_ptr<PeerGroup>> ranks;
  for (int r = 0; r < 3; ++r)
    ranks.push_back(group(hip, r, 3));
  std::vector<std::vector<uint8_t>> handles;
  for (const auto &g : ranks) {
    handles.push_back(g->handle());
    EXPECT_EQ(static_cast<const unsigned char *>(g->buffer())[4095], 0) << "zeroed";
    EXPECT_EQ(g->table(), nullptr) << "no table before connecting";
  }
  for (const auto &g : ranks) {
    ASSERT_TRUE(g->connect(handles).ok());
    EXPECT_EQ(tableOf(*g), (std::vector<void *>{ranks[0]->buffer(), ranks[1]->buffer(),
                                                ranks[2]->buffer()}));
  }
  EXPECT_EQ(ranks[0]->connect(handles).message(), "rank 0's peer group is already connected");
}

TEST(PeerGroup, RefusesHandlesOfAnotherGroupOrOrder) {
  auto hip = fakeHip();
  auto a = group(hip, 0, 2), b = group(hip, 1, 2);
  auto other = group(hip, 1, 2, 8192);
  auto three = group(hip, 1, 3);
  EXPECT_EQ(a->connect({a->handle()}).message(), "a peer group of 2 ranks takes 2 handles, got 1");
  EXPECT_EQ(a->connect({b->handle(), a->handle()}).message(),
            "peer handle 0 comes from rank 1: handles go in rank order");
  EXPECT_EQ(a->connect({a->handle(), other->handle()}).message(),
            "peer handle 1 is of a group of 2 ranks and 8192-byte buffers, this rank's of 2 "
            "and 4096 (ranks of different kernels?)");
  EXPECT_NE(a->connect({a->handle(), three->handle()}).message().find("of a group of 3 ranks"),
            std::string::npos);
  auto twin = group(hip, 0, 2);
  EXPECT_EQ(a->connect({twin->handle(), b->handle()}).message(),
            "peer handle 0 is not this rank's own handle");
  std::vector<uint8_t> damaged = b->handle();
  damaged[0] ^= 0xFF;
  EXPECT_NE(a->connect({a->handle(), damaged}).message().find(
                "peer handle 1 is not a monodc peer handle"),
            std::string::npos);
  EXPECT_NE(a->connect({a->handle(), {1, 2, 3}}).message().find("(3 bytes; one is "),
            std::string::npos);
  // None of the refusals connected it.
  EXPECT_TRUE(a->connect({a->handle(), b->handle()}).ok());
}

TEST(PeerGroup, RefusesABadGroup) {
  auto hip = fakeHip();
  EXPECT_EQ(PeerGroup::create(hip, 0, 0, 1, 64).message(),
            "a peer group needs at least 2 ranks, got 1");
  EXPECT_EQ(PeerGroup::create(hip, 0, 2, 2, 64).message(),
            "rank 2 is not one of the group's ranks 0..1");
  EXPECT_NE(PeerGroup::create(hip, 0, 0, 2, 0).message().find("needs a peer buffer, got 0 bytes"),
            std::string::npos);
}

/// A stand-in library's control functions (fake_hip_*, fake_cuda_*).
struct Stand {
  explicit Stand(const char *path) : handle(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {}
  template <typename F> F get(const char *name) { return reinterpret_cast<F>(dlsym(handle, name)); }
  void *handle;
};

/// One process, several GPUs: every rank's table holds every rank's buffer
/// (the same pointers on every device), peer access enabled both ways
/// between different GPUs, none between ranks sharing one.
void checkLocalGroups(std::shared_ptr<DeviceRuntime> runtime, Stand &stand,
                      const std::string &prefix) {
  stand.get<void (*)(int, int, int)>((prefix + "_configure").c_str())(4, 1, 2);
  auto allowPeers = stand.get<void (*)(int)>((prefix + "_peer_access").c_str());
  auto enabled = stand.get<int (*)(int, int)>((prefix + "_peer_enabled").c_str());
  allowPeers(1);
  auto groups = PeerGroup::createLocal(runtime, {0, 1}, 4096);
  ASSERT_TRUE(groups.ok()) << groups.message();
  ASSERT_EQ(groups->size(), 2u);
  const std::vector<void *> buffers = {(*groups)[0]->buffer(), (*groups)[1]->buffer()};
  EXPECT_NE(buffers[0], buffers[1]);
  for (const auto &g : *groups) {
    EXPECT_EQ(tableOf(*g), buffers);
    EXPECT_TRUE(g->handle().empty()) << "nothing to give another process";
    EXPECT_EQ(g->connect({}).message(),
              "rank " + std::to_string(g->rank()) + "'s peer group is already connected");
  }
  EXPECT_TRUE(enabled(0, 1) && enabled(1, 0));
  // Enabled already: a second set of groups is no error.
  EXPECT_TRUE(PeerGroup::createLocal(runtime, {1, 0}, 4096).ok());

  allowPeers(1);
  auto shared = PeerGroup::createLocal(runtime, {0, 0, 0, 0}, 4096);
  ASSERT_TRUE(shared.ok()) << shared.message();
  EXPECT_EQ(tableOf(*(*shared)[3]).size(), 4u);
  EXPECT_FALSE(enabled(0, 1) || enabled(1, 0)) << "ranks on one GPU need no peer access";

  allowPeers(0);
  EXPECT_NE(PeerGroup::createLocal(runtime, {0, 1}, 4096)
                .message()
                .find("GPU 0 cannot reach the memory of GPU 1"),
            std::string::npos);
  allowPeers(1);
  EXPECT_FALSE(PeerGroup::createLocal(runtime, {0, 5}, 4096).ok()) << "no device 5";
  EXPECT_EQ(PeerGroup::createLocal(runtime, {0}, 4096).message(),
            "a peer group needs at least 2 ranks, got 1");
}

TEST(PeerGroup, OneProcessDrivesSeveralGpusOverHip) {
  Stand stand(MONODC_FAKE_HIP_PATH);
  ASSERT_NE(stand.handle, nullptr);
  checkLocalGroups(fakeHip(), stand, "fake_hip");
}

TEST(PeerGroup, OneProcessDrivesSeveralGpusOverTheCudaDriver) {
  Stand stand(MONODC_FAKE_CUDA_PATH);
  ASSERT_NE(stand.handle, nullptr);
  auto cuda = CudaDriver::load({MONODC_FAKE_CUDA_PATH});
  ASSERT_TRUE(cuda.ok()) << cuda.message();
  checkLocalGroups(*cuda, stand, "fake_cuda");
}

TEST(PeerExchange, RanksOnThreadsMeetInADirectory) {
  auto hip = fakeHip();
  const std::string dir = freshDirectory("meet");
  constexpr int kRanks = 4;
  std::vector<std::unique_ptr<PeerGroup>> groups;
  for (int r = 0; r < kRanks; ++r)
    groups.push_back(group(hip, r, kRanks));
  std::vector<std::vector<std::vector<uint8_t>>> seen(kRanks);
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  for (int r = kRanks - 1; r >= 0; --r)
    threads.emplace_back([&, r] {
      auto handles = exchangePeerHandles(dir, r, kRanks, groups[r]->handle(),
                                         std::chrono::milliseconds(10000));
      if (handles)
        seen[r] = *handles;
      else
        errors[r] = handles.message();
    });
  for (auto &t : threads)
    t.join();
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(errors[r], "");
    ASSERT_EQ(seen[r].size(), size_t(kRanks));
    for (int s = 0; s < kRanks; ++s)
      EXPECT_EQ(seen[r][s], groups[s]->handle()) << "rank " << r << " of rank " << s;
    EXPECT_TRUE(groups[r]->connect(seen[r]).ok());
  }
  std::filesystem::remove_all(dir);
}

TEST(PeerExchange, ARankThatNeverComesIsNamedAfterTheTimeout) {
  auto hip = fakeHip();
  const std::string dir = freshDirectory("lost");
  auto g = group(hip, 0, 3);
  ASSERT_TRUE(exchangePeerHandles(dir, 2, 3, group(hip, 2, 3)->handle(),
                                  std::chrono::milliseconds(0))
                  .message()
                  .find("rank(s) 0, 1, which never came") != std::string::npos);
  auto handles = exchangePeerHandles(dir, 0, 3, g->handle(), std::chrono::milliseconds(50));
  EXPECT_EQ(handles.message(), "rank 0 waited 50 ms in " + dir +
                                   " for the peer handles of rank(s) 1, which never came");
  EXPECT_EQ(exchangePeerHandles(dir, 3, 3, g->handle(), std::chrono::milliseconds(0)).message(),
            "rank 3 is not one of ranks 0..2");
  std::filesystem::remove_all(dir);
}

} // namespace
