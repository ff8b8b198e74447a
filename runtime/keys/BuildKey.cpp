//===- BuildKey.cpp - everything that changes a code object ---------------===//
#include "monodc/runtime/BuildKey.h"

#include "monodc/runtime/Sha256.h"

#include <charconv>
#include <variant>

using namespace monodc::runtime;

namespace {

constexpr std::string_view kPrefix = "monodc-key/1";

using Member = std::variant<std::string BuildKey::*, int64_t BuildKey::*>;

struct Field {
  std::string_view name;
  Member member;
};

// The canonical order. Adding a field changes every key: bump kPrefix.
const Field kFields[] = {
    {"model", &BuildKey::model},       {"config", &BuildKey::configDigest},
    {"launch", &BuildKey::launch},     {"tp", &BuildKey::tp},
    {"rows", &BuildKey::rows},         {"ratio", &BuildKey::ratio},
    {"grid", &BuildKey::grid},         {"block", &BuildKey::block},
    {"arch", &BuildKey::arch},         {"features", &BuildKey::features},
    {"backend", &BuildKey::backend},   {"backend-version", &BuildKey::backendVersion},
    {"options", &BuildKey::options},   {"compiler", &BuildKey::compilerId},
};

const Field *findField(std::string_view name) {
  for (const Field &field : kFields)
    if (field.name == name)
      return &field;
  return nullptr;
}

bool isPlain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("._+,:/@-").find(c) != std::string_view::npos;
}

std::string encode(std::string_view value) {
  static const char digits[] = "0123456789ABCDEF";
  std::string out;
  for (char c : value) {
    if (isPlain(c)) {
      out.push_back(c);
    } else {
      auto byte = static_cast<unsigned char>(c);
      out += {'%', digits[byte >> 4], digits[byte & 15]};
    }
  }
  return out;
}

int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

Result<std::string> decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    int high = i + 2 < text.size() ? hexValue(text[i + 1]) : -1;
    int low = i + 2 < text.size() ? hexValue(text[i + 2]) : -1;
    if (high < 0 || low < 0)
      return makeError("bad percent escape in '" + std::string(text) + "'");
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

} // namespace

const std::vector<std::string_view> &BuildKey::fieldNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> result;
    for (const Field &field : kFields)
      result.push_back(field.name);
    return result;
  }();
  return names;
}

std::string BuildKey::field(std::string_view name) const {
  const Field *field = findField(name);
  if (!field)
    return {};
  if (auto *text = std::get_if<std::string BuildKey::*>(&field->member))
    return this->*(*text);
  return std::to_string(this->*std::get<int64_t BuildKey::*>(field->member));
}

Status BuildKey::setField(std::string_view name, std::string_view value) {
  const Field *field = findField(name);
  if (!field)
    return makeError("unknown build key field '" + std::string(name) + "'");
  if (auto *text = std::get_if<std::string BuildKey::*>(&field->member)) {
    this->*(*text) = std::string(value);
    return Status::success();
  }
  int64_t number = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (ec != std::errc() || end != value.data() + value.size() ||
      std::to_string(number) != value)
    return makeError("build key field '" + std::string(name) + "' needs a decimal integer, got '" +
                     std::string(value) + "'");
  this->*std::get<int64_t BuildKey::*>(field->member) = number;
  return Status::success();
}

std::string BuildKey::text() const {
  std::string out(kPrefix);
  for (const Field &field : kFields) {
    out += ' ';
    out += field.name;
    out += '=';
    out += encode(this->field(field.name));
  }
  return out;
}

Result<BuildKey> BuildKey::parse(std::string_view text) {
  auto fail = [&](const std::string &why) {
    return makeError("not a build key (" + why + "): '" + std::string(text) + "'");
  };
  if (text.substr(0, kPrefix.size()) != kPrefix)
    return fail("it must start with " + std::string(kPrefix));
  BuildKey key;
  size_t position = kPrefix.size();
  for (const Field &field : kFields) {
    if (position >= text.size() || text[position] != ' ')
      return fail("missing field '" + std::string(field.name) + "'");
    size_t end = text.find(' ', position + 1);
    std::string_view item = text.substr(position + 1, end == std::string_view::npos
                                                          ? std::string_view::npos
                                                          : end - position - 1);
    size_t equals = item.find('=');
    if (equals == std::string_view::npos || item.substr(0, equals) != field.name)
      return fail("expected field '" + std::string(field.name) + "' here, found '" +
                  std::string(item) + "'");
    Result<std::string> value = decode(item.substr(equals + 1));
    if (!value)
      return fail(value.message());
    if (Status set = key.setField(field.name, *value); !set)
      return fail(set.message());
    position = end == std::string_view::npos ? text.size() : end;
  }
  if (position != text.size())
    return fail("text after the last field");
  if (key.text() != text)
    return fail("not in canonical form");
  return key;
}

std::string BuildKey::encodeValue(std::string_view value) { return encode(value); }

Result<std::string> BuildKey::decodeValue(std::string_view text) { return decode(text); }

std::string BuildKey::hash() const { return Sha256::hex(Sha256::digest(text())); }

std::string BuildKey::fileName() const { return cacheFileNameForKeyText(text()); }

std::string monodc::runtime::cacheFileNameForKeyText(std::string_view keyText) {
  return Sha256::hex(Sha256::digest(keyText)).substr(0, 32) + ".mco";
}
