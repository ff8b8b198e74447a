//===- KernelRequest.cpp - what a serving engine asks for -----------------===//
#include "monodc/runtime/KernelRequest.h"
#include "monodc/runtime/LayerMap.h"

#include <sstream>
#include <variant>

using namespace monodc;
using runtime::BuildKey;
using runtime::makeError;
using runtime::Result;

namespace {

struct RequestField {
  std::string_view name; ///< as in BuildKey
  std::variant<std::string KernelRequest::*, int64_t KernelRequest::*> member;
};

// BuildKey's order.
const RequestField kRequestFields[] = {
    {"model", &KernelRequest::model},       {"launch", &KernelRequest::launch},
    {"tp", &KernelRequest::tp},             {"rows", &KernelRequest::rows},
    {"ratio", &KernelRequest::ratio},       {"grid", &KernelRequest::grid},
    {"block", &KernelRequest::block},       {"arch", &KernelRequest::arch},
    {"features", &KernelRequest::features}, {"backend", &KernelRequest::backend},
    {"options", &KernelRequest::options},
};

std::string valueOf(const KernelRequest &request, const RequestField &field) {
  if (auto *text = std::get_if<std::string KernelRequest::*>(&field.member))
    return request.*(*text);
  return std::to_string(request.*std::get<int64_t KernelRequest::*>(field.member));
}

} // namespace

std::string KernelRequest::text() const {
  std::string out;
  for (const RequestField &field : kRequestFields) {
    if (!out.empty())
      out += ' ';
    out.append(field.name).append("=").append(BuildKey::encodeValue(valueOf(*this, field)));
  }
  return out;
}

Result<KernelRequest> KernelRequest::parse(std::string_view text) {
  KernelRequest request;
  bool backendNamed = false;
  std::istringstream stream{std::string(text)};
  for (std::string word; stream >> word;) {
    size_t equals = word.find('=');
    std::string name = word.substr(0, equals);
    const RequestField *field = nullptr;
    for (const RequestField &f : kRequestFields)
      if (f.name == name)
        field = &f;
    if (equals == std::string::npos || !field)
      return makeError("bad kernel request '" + std::string(text) + "': '" + word +
                       "' is not name=value with a name of model, launch, tp, rows, ratio, "
                       "grid, block, arch, features, backend, options");
    Result<std::string> value = BuildKey::decodeValue(word.substr(equals + 1));
    // BuildKey checks the value as it would in a key (integers in decimal).
    BuildKey scratch;
    runtime::Status set = value ? scratch.setField(name, *value) : value.status();
    if (!set)
      return makeError("bad kernel request '" + std::string(text) + "': " + set.message());
    backendNamed |= name == "backend";
    if (auto *member = std::get_if<std::string KernelRequest::*>(&field->member))
      request.*(*member) = *value;
    else
      request.*std::get<int64_t KernelRequest::*>(field->member) = std::stoll(*value);
  }
  // NVIDIA targets are built by nvrtc only: a request for one that leaves
  // the backend out means it (clang's default would match no entry).
  const runtime::Target *target = runtime::findTarget(request.arch);
  if (!backendNamed && target && target->isNvidia())
    request.backend = "nvrtc";
  return request;
}

bool KernelRequest::matches(const BuildKey &key) const {
  for (const RequestField &field : kRequestFields) {
    if (field.name == "grid" && grid == 0)
      continue;
    // One key serves every ratio of a launch that reads no compressed key.
    if (field.name == "ratio" && !monodc::runtime::readsCompressedKeys(launch))
      continue;
    if (valueOf(*this, field) != key.field(field.name))
      return false;
  }
  return true;
}
