//===- LaunchMemory.cpp - host copies of a launch's regions ---------------===//
#include "monodc/Simulator/LaunchMemory.h"

#include "monodc/formats/NumberFormats.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace monodc;
using namespace monodc::sim;
namespace fmts = monodc::formats;

namespace {
int64_t storageBytes(mlir::Type type, int64_t elements) {
  if (type.isInteger(64))
    return elements * 8;
  if (type.isF32() || type.isInteger(32))
    return elements * 4;
  if (type.isBF16())
    return elements * 2;
  if (mlir::isa<mlir::Float4E2M1FNType>(type))
    return (elements + 1) / 2;
  return elements;
}
} // namespace

StorageFormat monodc::sim::storageFormatOf(mlir::Type type) {
  if (type.isF32())
    return StorageFormat::F32;
  if (type.isBF16())
    return StorageFormat::Bf16;
  if (mlir::isa<mlir::Float8E4M3FNType>(type))
    return StorageFormat::E4m3;
  if (mlir::isa<mlir::Float8E8M0FNUType>(type))
    return StorageFormat::E8m0;
  if (mlir::isa<mlir::Float4E2M1FNType>(type))
    return StorageFormat::E2m1;
  if (type.isInteger(32))
    return StorageFormat::I32;
  if (type.isInteger(64))
    return StorageFormat::I64;
  return StorageFormat::Byte;
}

const DecodeTables monodc::sim::kDecodeTables = [] {
  DecodeTables t;
  for (int c = 0; c < 256; ++c) {
    t.e4m3[c] = fmts::e4m3Value(static_cast<uint8_t>(c));
    t.e8m0[c] = fmts::e8m0Value(static_cast<uint8_t>(c));
  }
  for (int c = 0; c < 16; ++c)
    t.e2m1[c] = fmts::e2m1Value(static_cast<uint8_t>(c));
  return t;
}();

RegionStorage::RegionStorage(mlir::Type elementType, int64_t rows, int64_t cols)
    : elementType(elementType), format(storageFormatOf(elementType)), rows(rows), cols(cols),
      bytes(storageBytes(elementType, rows * cols), 0),
      elementBytes(format == StorageFormat::E2m1 ? 0 : storageBytes(elementType, 1)) {}

void RegionStorage::setEncoded(StorageFormat f, int64_t offset, float value) {
  switch (f) {
  case StorageFormat::F32:
    std::memcpy(bytes.data() + offset, &value, 4);
    return;
  case StorageFormat::Bf16: {
    uint16_t b = fmts::bf16Bits(value);
    std::memcpy(bytes.data() + offset, &b, 2);
    return;
  }
  case StorageFormat::E4m3:
    bytes[offset] = fmts::e4m3Bits(value);
    return;
  case StorageFormat::E8m0:
    bytes[offset] = fmts::e8m0Bits(value);
    return;
  case StorageFormat::I32: {
    // Whole numbers, as a serving engine's int32 index tensor holds them.
    const int32_t v = static_cast<int32_t>(std::clamp(value, -2147483648.0f, 2147483520.0f));
    std::memcpy(bytes.data() + offset, &v, 4);
    return;
  }
  case StorageFormat::I64: {
    const int64_t v = static_cast<int64_t>(value);
    std::memcpy(bytes.data() + offset, &v, 8);
    return;
  }
  default:
    bytes[offset] = static_cast<uint8_t>(std::clamp(value, 0.0f, 255.0f));
    return;
  }
}

void RegionStorage::set(int64_t i, float value) {
  if (format == StorageFormat::E2m1) {
    uint8_t code = fmts::e2m1Bits(value) & 15;
    uint8_t &byte = bytes[i / 2];
    byte = (i & 1) ? static_cast<uint8_t>((byte & 0x0F) | (code << 4))
                   : static_cast<uint8_t>((byte & 0xF0) | code);
    return;
  }
  setEncoded(format, i * elementBytes, value);
}

LaunchMemory::LaunchMemory(mono::LaunchOp launch) {
  for (auto region : launch.getBodyBlock().getOps<mono::RegionOp>()) {
    int64_t rows = region.getRows();
    // Peer memory holds one copy per (epoch parity, source rank).
    if (region.getKind() == mono::MemoryKind::Peer || region->hasAttr("mono.peer"))
      rows *= 2 * launch.getRanks();
    auto storage = std::make_shared<RegionStorage>(region.getElementType(), rows, region.getCols());
    std::string name = region.getSymName().str();
    indexOf.emplace(name, byIndex.size());
    byIndex.push_back(storage);
    regions.emplace(name, std::move(storage));
    if (region.getKind() == mono::MemoryKind::Scratch)
      scratchRegions.push_back(name);
    if (region.getRowsAtLaunch())
      launchSized.push_back(name);
    if (region.getColsAtLaunch())
      launchCols.push_back(name);
    if (!region.isWritable())
      readOnlyRegions.push_back(name);
    else
      writableIndices.push_back(byIndex.size() - 1);
  }
}

void LaunchMemory::poisonScratch() {
  for (const std::string &name : scratchRegions) {
    RegionStorage &r = region(name);
    mlir::Type type = r.elementType;
    const bool hasNan = type.isF32() || type.isBF16() || mlir::isa<mlir::Float8E4M3FNType>(type) ||
                        mlir::isa<mlir::Float8E8M0FNUType>(type);
    for (int64_t i = 0; hasNan && i < r.elements(); ++i)
      r.set(i, std::numeric_limits<float>::quiet_NaN());
  }
}

RegionStorage &LaunchMemory::region(const std::string &name) {
  auto it = regions.find(name);
  if (it == regions.end())
    llvm::report_fatal_error(llvm::Twine("no region named ") + name);
  return *it->second;
}

const RegionStorage &LaunchMemory::region(const std::string &name) const {
  return const_cast<LaunchMemory *>(this)->region(name);
}

llvm::Error LaunchMemory::share(const std::string &name,
                                std::shared_ptr<RegionStorage> shared) {
  if (!has(name))
    return llvm::createStringError("the launch has no region '%s'", name.c_str());
  const bool sizedAtLaunch = llvm::is_contained(launchSized, name);
  const bool colsAtLaunch = llvm::is_contained(launchCols, name);
  if (sizedAtLaunch  ? shared->cols != region(name).cols
      : colsAtLaunch ? shared->rows != region(name).rows
                     : shared->bytes.size() != region(name).bytes.size())
    return llvm::createStringError("region '%s' holds %zu bytes, the shared one %zu",
                                   name.c_str(), region(name).bytes.size(),
                                   shared->bytes.size());
  byIndex[indexOf.at(name)] = shared;
  regions[name] = std::move(shared);
  return llvm::Error::success();
}

llvm::Error LaunchMemory::setRows(const std::string &name, int64_t rows) {
  if (!llvm::is_contained(launchSized, name))
    return llvm::createStringError("region '%s' is not sized at launch", name.c_str());
  if (rows < 1 || rows > mono::kMaxIndexBound)
    return llvm::createStringError("region '%s' cannot have %lld rows", name.c_str(),
                                   static_cast<long long>(rows));
  const RegionStorage &old = region(name);
  return share(name, std::make_shared<RegionStorage>(old.elementType, rows, old.cols));
}

llvm::Error LaunchMemory::setCols(const std::string &name, int64_t cols) {
  if (!llvm::is_contained(launchCols, name))
    return llvm::createStringError("region '%s' does not take its columns at launch",
                                   name.c_str());
  if (cols < 1 || cols > mono::kMaxIndexBound)
    return llvm::createStringError("region '%s' cannot have %lld columns", name.c_str(),
                                   static_cast<long long>(cols));
  const RegionStorage &old = region(name);
  return share(name, std::make_shared<RegionStorage>(old.elementType, old.rows, cols));
}

void LaunchMemory::zeroWritable() {
  for (size_t index : writableIndices)
    std::fill(byIndex[index]->bytes.begin(), byIndex[index]->bytes.end(), 0);
}

llvm::Error LaunchMemory::shareReadOnly(const LaunchMemory &from) {
  for (const std::string &name : readOnlyRegions) {
    auto it = from.regions.find(name);
    if (it == from.regions.end())
      return llvm::createStringError("the memory to share from has no region '%s'", name.c_str());
    if (llvm::Error e = share(name, it->second))
      return e;
  }
  return llvm::Error::success();
}

llvm::Error LaunchMemory::setValues(const std::string &name, const std::vector<float> &values) {
  if (!has(name))
    return llvm::createStringError("the launch has no region '%s'", name.c_str());
  RegionStorage &r = region(name);
  if (static_cast<int64_t>(values.size()) != r.elements())
    return llvm::createStringError("region '%s' holds %lld values, got %zu", name.c_str(),
                                   static_cast<long long>(r.elements()), values.size());
  for (int64_t i = 0; i < r.elements(); ++i)
    r.set(i, values[i]);
  return llvm::Error::success();
}

llvm::Error LaunchMemory::setBytes(const std::string &name, const std::vector<uint8_t> &bytes) {
  if (!has(name))
    return llvm::createStringError("the launch has no region '%s'", name.c_str());
  RegionStorage &r = region(name);
  if (bytes.size() != r.bytes.size())
    return llvm::createStringError("region '%s' holds %zu bytes, got %zu", name.c_str(),
                                   r.bytes.size(), bytes.size());
  r.bytes = bytes;
  return llvm::Error::success();
}

std::vector<float> LaunchMemory::values(const std::string &name) const {
  const RegionStorage &r = region(name);
  std::vector<float> out(r.elements());
  for (int64_t i = 0; i < r.elements(); ++i)
    out[i] = r.get(i);
  return out;
}
