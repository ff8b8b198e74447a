//===- LaunchMemory.h - host copies of a launch's regions -------*- C++ -*-===//
#ifndef MONODC_SIMULATOR_LAUNCHMEMORY_H
#define MONODC_SIMULATOR_LAUNCHMEMORY_H

#include "monodc/Dialect/Mono/MonoDialect.h"

#include "llvm/Support/Error.h"

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace monodc::sim {

/// A storage format, resolved once from its MLIR type: the simulator reads
/// and writes region values in its innermost loops, where asking the type
/// (calls into libMLIR) cost more than the arithmetic.
enum class StorageFormat : uint8_t {
  F32,
  Bf16,
  E4m3,
  E8m0,
  E2m1,
  Byte, ///< i8
  I32,  ///< an index input's whole number, or an epoch word
  I64,  ///< an index input's whole number, or a flag word
};
StorageFormat storageFormatOf(mlir::Type type);

/// Every code of the 8-bit (and 4-bit) formats decoded, from the formats
/// library: a table read gives the same bits as formats::e4m3Value etc.
struct DecodeTables {
  float e4m3[256], e8m0[256], e2m1[16];
};
/// Filled before main (LaunchMemory.cpp): read in inner loops, where a
/// function-local static's guard would be checked at every value.
extern const DecodeTables kDecodeTables;

/// One region's bytes in its storage format (f32 and i32 4 B, i64 8 B, bf16
/// 2 B, e4m3, e8m0 and i8 1 B, e2m1 two codes a byte, low nibble first),
/// zero-filled. Peer regions (and peer flags) hold 2 x ranks copies:
/// [parity][source rank].
struct RegionStorage {
  RegionStorage(mlir::Type elementType, int64_t rows, int64_t cols);

  mlir::Type elementType;
  StorageFormat format;
  int64_t rows = 1, cols = 0;
  std::vector<uint8_t> bytes;

  int64_t elements() const { return rows * cols; }
  float get(int64_t index) const {
    return format == StorageFormat::E2m1
               ? decode(format, (index & 1) ? bytes[index / 2] >> 4 : bytes[index / 2] & 15)
               : getEncoded(format, index * elementBytes);
  }
  void set(int64_t index, float value);
  /// A value of `format` (not e2m1) encoded at byte `offset`: how a byte
  /// region holds records that mix formats. An i8 format is a raw byte.
  float getEncoded(mlir::Type format, int64_t offset) const {
    return getEncoded(storageFormatOf(format), offset);
  }
  float getEncoded(StorageFormat f, int64_t offset) const {
    switch (f) {
    case StorageFormat::F32: {
      float v;
      std::memcpy(&v, bytes.data() + offset, 4);
      return v;
    }
    case StorageFormat::Bf16: {
      uint16_t b;
      std::memcpy(&b, bytes.data() + offset, 2);
      uint32_t w = uint32_t(b) << 16;
      float v;
      std::memcpy(&v, &w, 4);
      return v;
    }
    case StorageFormat::I32: {
      int32_t v;
      std::memcpy(&v, bytes.data() + offset, 4);
      return float(v);
    }
    case StorageFormat::I64: {
      int64_t v;
      std::memcpy(&v, bytes.data() + offset, 8);
      return float(v);
    }
    default:
      return decode(f, bytes[offset]);
    }
  }
  void setEncoded(mlir::Type format, int64_t offset, float value) {
    setEncoded(storageFormatOf(format), offset, value);
  }
  void setEncoded(StorageFormat format, int64_t offset, float value);
  /// A one-byte (or e2m1) code's value.
  static float decode(StorageFormat f, uint8_t code) {
    const DecodeTables &t = kDecodeTables;
    switch (f) {
    case StorageFormat::E4m3:
      return t.e4m3[code];
    case StorageFormat::E8m0:
      return t.e8m0[code];
    case StorageFormat::E2m1:
      return t.e2m1[code & 15];
    default:
      return code;
    }
  }
  /// Raw words of the i32 (epoch) and i64 (flags) regions.
  uint64_t word(int64_t index) const {
    if (elementBytes == 8) {
      uint64_t v;
      std::memcpy(&v, bytes.data() + index * 8, 8);
      return v;
    }
    uint32_t v;
    std::memcpy(&v, bytes.data() + index * 4, 4);
    return v;
  }
  void setWord(int64_t index, uint64_t value) {
    if (elementBytes == 8) {
      std::memcpy(bytes.data() + index * 8, &value, 8);
      return;
    }
    uint32_t v = static_cast<uint32_t>(value);
    std::memcpy(bytes.data() + index * 4, &v, 4);
  }

private:
  int64_t elementBytes; ///< one element's bytes (e2m1: 0, two a byte)
};

/// The memory of every region of one launch, by region name, and by index
/// (the region's place among the launch's mono.region ops).
class LaunchMemory {
public:
  explicit LaunchMemory(mono::LaunchOp launch);

  bool has(const std::string &region) const { return regions.count(region) != 0; }
  /// Makes `name` use `shared` (e.g. one epoch buffer for every launch of a
  /// step sequence); the shapes must match (the columns alone for a region
  /// sized at launch).
  llvm::Error share(const std::string &name, std::shared_ptr<RegionStorage> shared);
  std::shared_ptr<RegionStorage> storage(const std::string &name) { return regions.at(name); }
  RegionStorage &region(const std::string &name);
  const RegionStorage &region(const std::string &name) const;
  RegionStorage &region(size_t index) { return *byIndex[index]; }
  const RegionStorage &region(size_t index) const { return *byIndex[index]; }
  /// Gives a region sized at launch (rows_at_launch: a KV cache) `rows`
  /// rows, zero-filled, as a caller sizes it at each launch; the stages
  /// that read mono.region_rows see them. Refuses any other region.
  llvm::Error setRows(const std::string &name, int64_t rows);
  /// Gives a region whose columns are given at launch (cols_at_launch: a
  /// block table) `cols` columns, zero-filled; mono.load_at and
  /// mono.region_cols see them. Refuses any other region.
  llvm::Error setCols(const std::string &name, int64_t cols);
  /// Makes every input and weight region use the storage `from` holds:
  /// they are read-only (the verifier refuses stores to them), so the
  /// schedules of one run can share them instead of each encoding them.
  llvm::Error shareReadOnly(const LaunchMemory &from);
  /// Zeroes every region but the inputs and weights: the memory as a fresh
  /// one sharing them (what a sweep thread reuses between schedules, rather
  /// than mapping and faulting in new pages).
  void zeroWritable();

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
  std::vector<std::shared_ptr<RegionStorage>> byIndex; ///< in the launch's order
  std::map<std::string, size_t> indexOf;
  std::vector<std::string> scratchRegions;  ///< the launch's scratch, by name
  std::vector<std::string> readOnlyRegions; ///< inputs and weights
  std::vector<size_t> writableIndices;      ///< every other region
  std::vector<std::string> launchSized;     ///< regions sized at launch
  std::vector<std::string> launchCols;      ///< regions whose columns are given at launch
};

} // namespace monodc::sim

#endif
