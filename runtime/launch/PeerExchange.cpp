//===- PeerExchange.cpp - peer handles through a shared directory ---------===//
#include "monodc/runtime/PeerExchange.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <unistd.h>

using namespace monodc::runtime;
namespace fs = std::filesystem;

namespace {
fs::path handlePath(const std::string &directory, int rank) {
  return fs::path(directory) / ("peer-" + std::to_string(rank) + ".handle");
}
} // namespace

Result<std::vector<std::vector<uint8_t>>>
monodc::runtime::exchangePeerHandles(const std::string &directory, int rank, int ranks,
                                     const std::vector<uint8_t> &mine,
                                     std::chrono::milliseconds timeout) {
  if (rank < 0 || rank >= ranks)
    return makeError("rank " + std::to_string(rank) + " is not one of ranks 0.." +
                     std::to_string(ranks - 1));
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    return makeError("cannot make the peer exchange directory " + directory + ": " +
                     error.message());
  // Written aside, then renamed: a reader sees no handle or a whole one.
  const fs::path path = handlePath(directory, rank);
  const fs::path aside = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(aside, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(mine.data()), std::streamsize(mine.size()));
    if (!out.flush())
      return makeError("cannot write " + aside.string());
  }
  fs::rename(aside, path, error);
  if (error)
    return makeError("cannot write " + path.string() + ": " + error.message());

  std::vector<std::vector<uint8_t>> handles(ranks);
  std::vector<bool> read(ranks, false);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int missing = 0;
    for (int r = 0; r < ranks; ++r) {
      if (read[r])
        continue;
      std::ifstream in(handlePath(directory, r), std::ios::binary);
      if (!in) {
        ++missing;
        continue;
      }
      handles[r].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      read[r] = true;
    }
    if (missing == 0)
      return handles;
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string absent;
      for (int r = 0; r < ranks; ++r)
        if (!read[r])
          absent += (absent.empty() ? "" : ", ") + std::to_string(r);
      return makeError("rank " + std::to_string(rank) + " waited " +
                       std::to_string(timeout.count()) + " ms in " + directory +
                       " for the peer handles of rank(s) " + absent + ", which never came");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
