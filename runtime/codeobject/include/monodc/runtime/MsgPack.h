//===- MsgPack.h - a small MessagePack reader -------------------*- C++ -*-===//
//
// Enough of MessagePack to read the AMDGPU metadata note without LLVM: every
// type decodes (extension types as binary); maps keep their order.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_MSGPACK_H
#define MONODC_RUNTIME_MSGPACK_H

#include "monodc/runtime/Result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace monodc::runtime::msgpack {

struct Value {
  enum class Kind { Nil, Boolean, Integer, Float, String, Binary, Array, Map };
  Kind kind = Kind::Nil;
  bool boolean = false;
  /// Integer: signed when `isSigned` (negative values), else unsigned.
  uint64_t unsignedValue = 0;
  int64_t signedValue = 0;
  bool isSigned = false;
  double floatValue = 0;
  std::string text; ///< String and Binary
  std::vector<Value> items;
  std::vector<std::pair<Value, Value>> entries;

  // Out of line (MsgPack.cpp): inside this class std::pair<Value, Value> is
  // still incomplete, and clang with libstdc++ refuses to instantiate the
  // implicit destructor of `entries` here.
  Value();
  Value(const Value &);
  Value(Value &&) noexcept;
  Value &operator=(const Value &);
  Value &operator=(Value &&) noexcept;
  ~Value();

  /// The value of `key` in a map whose keys are strings; null when absent.
  const Value *find(std::string_view key) const;
  /// An integer as int64 (false when not an integer or out of range).
  bool asInt64(int64_t &out) const;
};

/// Decodes exactly one value that spans all of `bytes`; nesting is limited
/// (64 levels) so a hostile note cannot exhaust the stack.
Result<Value> decode(std::string_view bytes);

} // namespace monodc::runtime::msgpack

#endif // MONODC_RUNTIME_MSGPACK_H
