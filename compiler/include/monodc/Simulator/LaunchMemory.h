//===- LaunchMemory.h - host copies of a launch's regions -------*- C++ -*-===//
#ifndef MONODC_SIMULATOR_LAUNCHMEMORY_H
#define MONODC_SIMULATOR_LAUNCHMEMORY_H

#include "monodc/Dialect/Mono/MonoDialect.h"

#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace monodc::sim {

/// One region's bytes in its storage format (f32 4 B, bf16 2 B, e4m3, e8m0
/// and i8 1 B, e2m1 two codes a byte, low nibble first), zero-filled. Peer
/// regions (and peer flags) hold 2 x ranks copies: [parity][source rank].
struct RegionStorage {
  mlir::Type elementType;
  int64_t rows = 1, cols = 0;
  std::vector<uint8_t> bytes;

  int64_t elements() const { return rows * cols; }
  float get(int64_t index) const;
  void set(int64_t index, float value);
  /// A value of `format` (not e2m1) encoded at byte `offset`: how a byte
  /// region holds records that mix formats. An i8 format is a raw byte.
  float getEncoded(mlir::Type format, int64_t offset) const;
  void setEncoded(mlir::Type format, int64_t offset, float value);
  /// Raw words of the i32 (epoch) and i64 (flags) regions.
  uint64_t word(int64_t index) const;
  void setWord(int64_t index, uint64_t value);
};

/// The memory of every region of one launch, by region name.
class LaunchMemory {
public:
  explicit LaunchMemory(mono::LaunchOp launch);

  bool has(const std::string &region) const { return regions.count(region) != 0; }
  /// Makes `name` use `shared` (e.g. one epoch buffer for every launch of a
  /// step sequence); the shapes must match.
  llvm::Error share(const std::string &name, std::shared_ptr<RegionStorage> shared);
  std::shared_ptr<RegionStorage> storage(const std::string &name) { return regions.at(name); }
  RegionStorage &region(const std::string &name);
  const RegionStorage &region(const std::string &name) const;

  /// Fills every scratch region of a number format that has NaN (f32, bf16,
  /// e4m3, e8m0) with NaN: a stage that reads a word no task of the step
  /// wrote (a row past a counted store's count) then spoils its results
  /// instead of reading a harmless 0.
  void poisonScratch();

  /// Writes values, rounding each into the region's format.
  llvm::Error setValues(const std::string &name, const std::vector<float> &values);
  llvm::Error setBytes(const std::string &name, const std::vector<uint8_t> &bytes);
  std::vector<float> values(const std::string &name) const;
  const std::vector<uint8_t> &bytes(const std::string &name) const {
    return region(name).bytes;
  }

private:
  std::map<std::string, std::shared_ptr<RegionStorage>> regions;
  std::vector<std::string> scratchRegions; ///< the launch's scratch, by name
};

} // namespace monodc::sim

#endif
