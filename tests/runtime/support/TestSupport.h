//===- TestSupport.h - helpers of the runtime tests -------------*- C++ -*-===//
#ifndef MONODC_TESTS_RUNTIME_TESTSUPPORT_H
#define MONODC_TESTS_RUNTIME_TESTSUPPORT_H

#include "monodc/runtime/BuildKey.h"
#include "monodc/runtime/CacheEntry.h"

#include <cstdint>
#include <string>
#include <vector>

namespace monodc::testing {

/// A fresh directory under $TMPDIR, removed with its contents at the end.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

std::string readBytes(const std::string &path);
void writeBytes(const std::string &path, const std::string &bytes);

/// A MessagePack writer, enough to build AMDGPU metadata notes.
class MsgPackWriter {
public:
  MsgPackWriter &map(uint32_t entries);
  MsgPackWriter &array(uint32_t items);
  MsgPackWriter &string(const std::string &text);
  MsgPackWriter &integer(int64_t value);
  MsgPackWriter &boolean(bool value);
  const std::string &bytes() const { return bytes_; }

private:
  std::string bytes_;
};

struct TestKernelArg {
  std::string name;
  int64_t offset, size;
  std::string valueKind = "global_buffer";
};

struct TestKernel {
  std::string name = "mono_test";
  int64_t vgprs = 40, agprs = 0, sgprs = 24, vgprSpills = 0, sgprSpills = 0;
  int64_t lds = 1024, scratch = 0, wavefront = 64, kernarg = 0;
  std::vector<TestKernelArg> args;
};

/// A 64-bit AMDGPU ELF holding only a PT_NOTE with the metadata of `kernels`.
std::string makeAmdgpuElf(const std::string &target, const std::vector<TestKernel> &kernels);

/// A kernel manifest with `argNames` as input regions of 64 bytes each, a
/// scratch buffer of 512 bytes and an epoch buffer of 10 words.
std::string makeManifest(const std::string &kernelName, const std::vector<std::string> &argNames);

/// The TestKernel matching makeManifest(): pointers at 8-byte steps (each of
/// `sizedAtLaunch` followed by its 8-byte row count, by value), then
/// mono_scratch and mono_epoch.
TestKernel makeKernelFor(const std::string &kernelName,
                         const std::vector<std::string> &argNames,
                         const std::vector<std::string> &sizedAtLaunch = {});

/// A stand-in launch of a layer step (grid 4, a 512-byte scratch buffer):
/// `args` are manifest `arg` lines after the tag (`NAME KIND FORMAT ROWS
/// COLS BYTES`), `tail` more manifest lines (`from`, `result`).
struct StepLaunch {
  std::string kernel;
  int64_t rows, stepTag;
  bool endsStep;
  std::vector<std::string> args;
  std::string tail;
};
/// Its manifest, and a gfx950 code object whose metadata matches it.
std::string stepManifest(const StepLaunch &launch);
std::string stepCodeObject(const StepLaunch &launch);
/// K1: x, w1 -> q, h (step-internal) and the cache (a result, written in
/// place); K2: q and the cache from K1, x, w2 -> y (a result), t
/// (step-internal). bf16 rows of 32 columns; the cache's rows of 32 bytes
/// are given at launch (4 nominal).
StepLaunch sampleK1(int64_t rows);
StepLaunch sampleK2(int64_t rows);
/// Cache entries of sampleK1 and sampleK2 under keys like sampleKey(rows)'s
/// (launch k1, k2), for the C ABI and the Python package.
runtime::CacheEntry sampleStepEntry(const StepLaunch &launch);

/// The HIP stand-in (tests/runtime/FakeHip.c) at `path`, configured with
/// `units` compute units of `perUnit` resident CTAs and one device; it logs
/// each launch since then (kernel and arguments), read here.
class FakeHipLog {
public:
  FakeHipLog(const char *path, int units, int perUnit);
  void *handle() const { return library; }
  int launches() const;
  std::string kernel(int launch) const;
  /// The pointer launch `launch` passed at byte `offset` of its arguments
  /// (null past their end).
  void *pointerAt(int launch, int64_t offset) const;

private:
  template <typename F> F get(const char *name) const;
  void *library;
};

/// A key with every field set; `rows` varies it.
runtime::BuildKey sampleKey(int64_t rows = 6);

/// A cache entry for `key` whose code object is makeAmdgpuElf() of a
/// kernel matching its manifest.
runtime::CacheEntry sampleEntry(const runtime::BuildKey &key);

} // namespace monodc::testing

#endif
