//===- FuzzMsgPack.cpp - the MessagePack reader of the metadata note ------===//
//
// decode() takes exactly one value spanning the input; nesting is bounded.
// Whatever the bytes, it returns a value or an error, and the accessors of
// a decoded value are safe to call.
//
//===----------------------------------------------------------------------===//
#include "FuzzCheck.h"

#include "monodc/runtime/MsgPack.h"

using namespace monodc::runtime;

namespace {

size_t visit(const msgpack::Value &value, int depth) {
  MONODC_FUZZ_CHECK(depth <= 65);
  int64_t number = 0;
  (void)value.asInt64(number);
  (void)value.find("amdhsa.kernels");
  size_t nodes = 1;
  for (const msgpack::Value &item : value.items)
    nodes += visit(item, depth + 1);
  for (const auto &[key, item] : value.entries)
    nodes += visit(key, depth + 1) + visit(item, depth + 1);
  return nodes;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Result<msgpack::Value> value = msgpack::decode(fuzzBytes(data, size));
  if (value) {
    // Every value takes at least one byte, so no more nodes than bytes.
    MONODC_FUZZ_CHECK(visit(*value, 0) <= size);
  }
  return 0;
}
