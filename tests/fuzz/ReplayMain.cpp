//===- ReplayMain.cpp - run inputs through a fuzz target, without libFuzzer ===//
//
// Usage: fuzz_<name>_replay PATH...: each file, and every file under each
// folder (recursively, sorted), goes through LLVMFuzzerTestOneInput once. A
// crash or a broken invariant aborts; the last line names the input being
// run. Prints "N passed, 0 failed" at the end.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path path = argv[i];
    std::error_code error;
    if (fs::is_directory(path, error)) {
      for (const auto &item : fs::recursive_directory_iterator(path))
        if (item.is_regular_file() && item.path().filename().string()[0] != '.')
          files.push_back(item.path());
    } else if (fs::is_regular_file(path, error)) {
      files.push_back(path);
    } else {
      std::fprintf(stderr, "fuzz replay: no such file or folder: %s\n", argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "fuzz replay: no inputs\n");
    return 2;
  }
  for (const fs::path &file : files) {
    std::ifstream in(file, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "fuzz replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
    // A copy of exactly its size, so reading past the end is caught (ASan).
    std::vector<uint8_t> exact(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(exact.empty() ? nullptr : exact.data(), exact.size());
  }
  std::printf("%zu passed, 0 failed\n", files.size());
  return 0;
}
