//===- FuzzCheck.h - what every fuzz target shares --------------*- C++ -*-===//
//
// A fuzz target is one LLVMFuzzerTestOneInput(). It is linked either with
// libFuzzer (-DMONODC_FUZZ=ON, clang: fuzz_<name>) or with ReplayMain.cpp
// (always: fuzz_<name>_replay, which runs files and folders through it, so
// ctest replays the seed corpus and every regression input in every build).
// MONODC_FUZZ_CHECK states an invariant beyond "no crash": a broken one
// aborts, which both drivers report as a failure.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_TESTS_FUZZ_FUZZCHECK_H
#define MONODC_TESTS_FUZZ_FUZZCHECK_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#define MONODC_FUZZ_CHECK(condition)                                                        \
  do {                                                                                      \
    if (!(condition)) {                                                                     \
      std::fprintf(stderr, "%s:%d: fuzz invariant broken: %s\n", __FILE__, __LINE__,       \
                   #condition);                                                             \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

inline std::string_view fuzzBytes(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

#endif // MONODC_TESTS_FUZZ_FUZZCHECK_H
