//===- MsgPack.cpp - a small MessagePack reader ---------------------------===//
#include "monodc/runtime/MsgPack.h"

#include <cstring>
#include <limits>

using namespace monodc::runtime;
using namespace monodc::runtime::msgpack;

Value::Value() = default;
Value::Value(const Value &) = default;
Value::Value(Value &&) noexcept = default;
Value &Value::operator=(const Value &) = default;
Value &Value::operator=(Value &&) noexcept = default;
Value::~Value() = default;

namespace {

constexpr int kMaxDepth = 64;

class Decoder {
public:
  explicit Decoder(std::string_view bytes) : bytes_(bytes) {}

  Result<Value> value(int depth);
  bool atEnd() const { return position_ == bytes_.size(); }
  size_t position() const { return position_; }

private:
  Error fail(const std::string &what) const {
    return makeError("bad MessagePack at byte " + std::to_string(position_) + ": " + what);
  }
  /// Reads an n-byte big-endian unsigned number.
  bool number(size_t n, uint64_t &out) {
    if (bytes_.size() - position_ < n)
      return false;
    out = 0;
    for (size_t i = 0; i < n; ++i)
      out = out << 8 | static_cast<unsigned char>(bytes_[position_ + i]);
    position_ += n;
    return true;
  }
  Result<Value> bytesOf(Value::Kind kind, uint64_t length);
  Result<Value> array(uint64_t count, int depth);
  Result<Value> map(uint64_t count, int depth);

  std::string_view bytes_;
  size_t position_ = 0;
};

Value integer(uint64_t value) {
  Value v;
  v.kind = Value::Kind::Integer;
  v.unsignedValue = value;
  return v;
}

Value signedInteger(int64_t value) {
  Value v;
  v.kind = Value::Kind::Integer;
  if (value >= 0) {
    v.unsignedValue = static_cast<uint64_t>(value);
  } else {
    v.isSigned = true;
    v.signedValue = value;
  }
  return v;
}

Result<Value> Decoder::bytesOf(Value::Kind kind, uint64_t length) {
  if (bytes_.size() - position_ < length)
    return fail("a string or binary of " + std::to_string(length) + " bytes runs past the end");
  Value v;
  v.kind = kind;
  v.text = std::string(bytes_.substr(position_, length));
  position_ += length;
  return v;
}

Result<Value> Decoder::array(uint64_t count, int depth) {
  // Each item takes at least one byte: a count beyond that is a lie.
  if (count > bytes_.size() - position_)
    return fail("an array of " + std::to_string(count) + " items runs past the end");
  Value v;
  v.kind = Value::Kind::Array;
  for (uint64_t i = 0; i < count; ++i) {
    Result<Value> item = value(depth + 1);
    if (!item)
      return item;
    v.items.push_back(std::move(*item));
  }
  return v;
}

Result<Value> Decoder::map(uint64_t count, int depth) {
  if (count > (bytes_.size() - position_) / 2)
    return fail("a map of " + std::to_string(count) + " entries runs past the end");
  Value v;
  v.kind = Value::Kind::Map;
  for (uint64_t i = 0; i < count; ++i) {
    Result<Value> key = value(depth + 1);
    if (!key)
      return key;
    Result<Value> item = value(depth + 1);
    if (!item)
      return item;
    v.entries.emplace_back(std::move(*key), std::move(*item));
  }
  return v;
}

Result<Value> Decoder::value(int depth) {
  if (depth > kMaxDepth)
    return fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
  uint64_t tag = 0, n = 0;
  if (!number(1, tag))
    return fail("unexpected end");
  if (tag <= 0x7f)
    return integer(tag);
  if (tag >= 0xe0)
    return signedInteger(static_cast<int8_t>(tag));
  if (tag >= 0x80 && tag <= 0x8f)
    return map(tag & 0x0f, depth);
  if (tag >= 0x90 && tag <= 0x9f)
    return array(tag & 0x0f, depth);
  if (tag >= 0xa0 && tag <= 0xbf)
    return bytesOf(Value::Kind::String, tag & 0x1f);
  auto need = [&](size_t size) { return number(size, n); };
  switch (tag) {
  case 0xc0:
    return Value{};
  case 0xc2:
  case 0xc3: {
    Value v;
    v.kind = Value::Kind::Boolean;
    v.boolean = tag == 0xc3;
    return v;
  }
  case 0xc4: case 0xc5: case 0xc6: // bin 8/16/32
    if (!need(size_t(1) << (tag - 0xc4)))
      break;
    return bytesOf(Value::Kind::Binary, n);
  case 0xc7: case 0xc8: case 0xc9: { // ext 8/16/32: length, type byte, data
    if (!need(size_t(1) << (tag - 0xc7)))
      break;
    uint64_t type;
    if (!number(1, type))
      break;
    return bytesOf(Value::Kind::Binary, n);
  }
  case 0xca: case 0xcb: { // float 32/64
    bool single = tag == 0xca;
    if (!need(single ? 4 : 8))
      break;
    Value v;
    v.kind = Value::Kind::Float;
    if (single) {
      uint32_t bits = static_cast<uint32_t>(n);
      float f;
      std::memcpy(&f, &bits, 4);
      v.floatValue = f;
    } else {
      std::memcpy(&v.floatValue, &n, 8);
    }
    return v;
  }
  case 0xcc: case 0xcd: case 0xce: case 0xcf: // uint 8..64
    if (!need(size_t(1) << (tag - 0xcc)))
      break;
    return integer(n);
  case 0xd0: case 0xd1: case 0xd2: case 0xd3: { // int 8..64
    size_t size = size_t(1) << (tag - 0xd0);
    if (!need(size))
      break;
    // Sign-extend from `size` bytes.
    int shift = 64 - 8 * static_cast<int>(size);
    return signedInteger(static_cast<int64_t>(n << shift) >> shift);
  }
  case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: { // fixext 1..16
    uint64_t type;
    if (!number(1, type))
      break;
    return bytesOf(Value::Kind::Binary, uint64_t(1) << (tag - 0xd4));
  }
  case 0xd9: case 0xda: case 0xdb: // str 8/16/32
    if (!need(size_t(1) << (tag - 0xd9)))
      break;
    return bytesOf(Value::Kind::String, n);
  case 0xdc: case 0xdd: // array 16/32
    if (!need(tag == 0xdc ? 2 : 4))
      break;
    return array(n, depth);
  case 0xde: case 0xdf: // map 16/32
    if (!need(tag == 0xde ? 2 : 4))
      break;
    return map(n, depth);
  default:
    return fail("the reserved tag 0xc1");
  }
  return fail("unexpected end");
}

} // namespace

const Value *Value::find(std::string_view key) const {
  for (const auto &[k, v] : entries)
    if (k.kind == Kind::String && k.text == key)
      return &v;
  return nullptr;
}

bool Value::asInt64(int64_t &out) const {
  if (kind != Kind::Integer)
    return false;
  if (isSigned) {
    out = signedValue;
    return true;
  }
  if (unsignedValue > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return false;
  out = static_cast<int64_t>(unsignedValue);
  return true;
}

Result<Value> msgpack::decode(std::string_view bytes) {
  Decoder decoder(bytes);
  Result<Value> value = decoder.value(0);
  if (!value)
    return value;
  if (!decoder.atEnd())
    return makeError("bad MessagePack: " + std::to_string(bytes.size() - decoder.position()) +
                     " bytes after the value");
  return value;
}
