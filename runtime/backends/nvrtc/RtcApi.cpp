//===- RtcApi.cpp - the nvrtc-shaped API of nvrtc and hiprtc --------------===//
#include "monodc/runtime/RtcApi.h"

#include <algorithm>

using namespace monodc::runtime;

Status monodc::runtime::checkProcessor(const std::string &compiler, const std::string &arch,
                                       const std::string &processor, const std::string &family,
                                       const std::vector<std::string> &known) {
  if (processor.rfind(family, 0) != 0)
    return makeError(compiler + " cannot build for arch '" + arch + "': it builds " + family +
                     "* processors only");
  if (known.empty() || std::find(known.begin(), known.end(), processor) != known.end())
    return Status::success();
  std::string list;
  for (const std::string &name : known) {
    if (!list.empty())
      list += ", ";
    list += name;
  }
  return makeError(compiler + " cannot build for arch '" + arch + "' (it knows " + list + ")");
}

Result<RtcApi> RtcApi::load(SharedLibrary library, const std::string &prefix,
                            const std::string &code) {
  RtcApi api(std::move(library), prefix);
  Status resolved;
  api.library_.resolve(api.createProgram_, prefix + "CreateProgram", resolved);
  api.library_.resolve(api.compileProgram_, prefix + "CompileProgram", resolved);
  api.library_.resolve(api.getLogSize_, prefix + "GetProgramLogSize", resolved);
  api.library_.resolve(api.getLog_, prefix + "GetProgramLog", resolved);
  api.library_.resolve(api.getCodeSize_, prefix + "Get" + code + "Size", resolved);
  api.library_.resolve(api.getCode_, prefix + "Get" + code, resolved);
  api.library_.resolve(api.destroyProgram_, prefix + "DestroyProgram", resolved);
  api.library_.resolve(api.getErrorString_, prefix + "GetErrorString", resolved);
  api.library_.resolve(api.version_, prefix + "Version", resolved);
  if (!resolved)
    return resolved.error();
  return api;
}

std::string RtcApi::version() const {
  int major = 0, minor = 0;
  if (version_(&major, &minor) != 0)
    return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string RtcApi::describe(int code) const {
  const char *text = getErrorString_(code);
  return std::string(text ? text : "unknown error") + " (" + std::to_string(code) + ")";
}

Result<std::vector<char>> RtcApi::compile(const std::string &source,
                                          const std::string &sourceName,
                                          const std::vector<std::string> &options) const {
  void *program = nullptr;
  if (int code = createProgram_(&program, source.c_str(), sourceName.c_str(), 0, nullptr, nullptr))
    return library_.callFailed(prefix_ + "CreateProgram", getErrorString_(code), code);
  struct Destroy {
    const RtcApi &api;
    void *&program;
    ~Destroy() { api.destroyProgram_(&program); }
  } destroy{*this, program};

  std::vector<const char *> arguments;
  for (const std::string &option : options)
    arguments.push_back(option.c_str());
  int compiled =
      compileProgram_(program, static_cast<int>(arguments.size()), arguments.data());
  std::string log;
  size_t logBytes = 0;
  if (getLogSize_(program, &logBytes) == 0 && logBytes > 1) {
    log.resize(logBytes);
    if (getLog_(program, log.data()) != 0)
      log.clear();
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
      log.pop_back();
  }
  if (compiled != 0)
    return makeError(prefix_ + " (" + library_.name() + ") failed to compile " + sourceName +
                     ": " + describe(compiled) + (log.empty() ? "" : "\n" + log));
  size_t codeBytes = 0;
  if (int code = getCodeSize_(program, &codeBytes))
    return makeError(prefix_ + " returned no code: " + describe(code));
  std::vector<char> bytes(codeBytes);
  if (int code = getCode_(program, bytes.data()))
    return makeError(prefix_ + " returned no code: " + describe(code));
  if (bytes.empty())
    return makeError(prefix_ + " (" + library_.name() + ") returned an empty code object for " +
                     sourceName + (log.empty() ? "" : ":\n" + log));
  return bytes;
}
