//===- LaunchMemory.cpp - host copies of a launch's regions ---------------===//
#include "monodc/Simulator/LaunchMemory.h"

#include "monodc/formats/NumberFormats.h"

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

float RegionStorage::getEncoded(mlir::Type format, int64_t offset) const {
  if (format.isF32()) {
    float v;
    std::memcpy(&v, bytes.data() + offset, 4);
    return v;
  }
  if (format.isBF16()) {
    uint16_t b;
    std::memcpy(&b, bytes.data() + offset, 2);
    return fmts::bf16Value(b);
  }
  if (mlir::isa<mlir::Float8E4M3FNType>(format))
    return fmts::e4m3Value(bytes[offset]);
  if (mlir::isa<mlir::Float8E8M0FNUType>(format))
    return fmts::e8m0Value(bytes[offset]);
  return bytes[offset];  // a byte of a byte region, as a whole number
}

void RegionStorage::setEncoded(mlir::Type format, int64_t offset, float value) {
  if (format.isF32()) {
    std::memcpy(bytes.data() + offset, &value, 4);
  } else if (format.isBF16()) {
    uint16_t b = fmts::bf16Bits(value);
    std::memcpy(bytes.data() + offset, &b, 2);
  } else if (mlir::isa<mlir::Float8E4M3FNType>(format)) {
    bytes[offset] = fmts::e4m3Bits(value);
  } else if (mlir::isa<mlir::Float8E8M0FNUType>(format)) {
    bytes[offset] = fmts::e8m0Bits(value);
  } else {
    bytes[offset] = static_cast<uint8_t>(std::clamp(value, 0.0f, 255.0f));
  }
}

float RegionStorage::get(int64_t i) const {
  if (mlir::isa<mlir::Float4E2M1FNType>(elementType))
    return fmts::e2m1Value((i & 1) ? (bytes[i / 2] >> 4) : (bytes[i / 2] & 15));
  return getEncoded(elementType, i * storageBytes(elementType, 1));
}

void RegionStorage::set(int64_t i, float value) {
  if (mlir::isa<mlir::Float4E2M1FNType>(elementType)) {
    uint8_t code = fmts::e2m1Bits(value) & 15;
    uint8_t &byte = bytes[i / 2];
    byte = (i & 1) ? static_cast<uint8_t>((byte & 0x0F) | (code << 4))
                   : static_cast<uint8_t>((byte & 0xF0) | code);
    return;
  }
  setEncoded(elementType, i * storageBytes(elementType, 1), value);
}

uint64_t RegionStorage::word(int64_t i) const {
  if (elementType.isInteger(64)) {
    uint64_t v;
    std::memcpy(&v, bytes.data() + i * 8, 8);
    return v;
  }
  uint32_t v;
  std::memcpy(&v, bytes.data() + i * 4, 4);
  return v;
}

void RegionStorage::setWord(int64_t i, uint64_t value) {
  if (elementType.isInteger(64)) {
    std::memcpy(bytes.data() + i * 8, &value, 8);
    return;
  }
  uint32_t v = static_cast<uint32_t>(value);
  std::memcpy(bytes.data() + i * 4, &v, 4);
}

LaunchMemory::LaunchMemory(mono::LaunchOp launch) {
  for (auto region : launch.getBodyBlock().getOps<mono::RegionOp>()) {
    RegionStorage storage;
    storage.elementType = region.getElementType();
    storage.rows = region.getRows();
    storage.cols = region.getCols();
    // Peer memory holds one copy per (epoch parity, source rank).
    if (region.getKind() == mono::MemoryKind::Peer || region->hasAttr("mono.peer"))
      storage.rows *= 2 * launch.getRanks();
    storage.bytes.assign(storageBytes(storage.elementType, storage.elements()), 0);
    regions.emplace(region.getSymName().str(),
                    std::make_shared<RegionStorage>(std::move(storage)));
    if (region.getKind() == mono::MemoryKind::Scratch)
      scratchRegions.push_back(region.getSymName().str());
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
  if (shared->bytes.size() != region(name).bytes.size())
    return llvm::createStringError("region '%s' holds %zu bytes, the shared one %zu",
                                   name.c_str(), region(name).bytes.size(),
                                   shared->bytes.size());
  regions[name] = std::move(shared);
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
