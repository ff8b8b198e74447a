//===- HiprtcCompiler.cpp - HIP source -> AMD code object through hiprtc --===//
#include "monodc/runtime/HiprtcCompiler.h"

#include "monodc/runtime/IsolatedRun.h"

using namespace monodc::runtime;

namespace {

/// Asks comgr which processors it knows; its names read amdgcn-amd-amdhsa--gfxN.
void readComgr(std::vector<std::string> &processors, std::string &version) {
  Result<SharedLibrary> comgr = SharedLibrary::open(
      SharedLibrary::candidates("MONODC_COMGR_LIBRARY", {"ROCM_PATH"}, {"libamd_comgr.so", "libamd_comgr.so.3",
                                                "libamd_comgr.so.2"}),
      "comgr");
  if (!comgr)
    return;
  using Count = int (*)(size_t *);
  using Name = int (*)(size_t, const char **);
  using Version = void (*)(size_t *, size_t *);
  auto count = comgr->function<Count>("amd_comgr_get_isa_count");
  auto name = comgr->function<Name>("amd_comgr_get_isa_name");
  if (auto getVersion = comgr->function<Version>("amd_comgr_get_version")) {
    size_t major = 0, minor = 0;
    (*getVersion)(&major, &minor);
    version = std::to_string(major) + "." + std::to_string(minor);
  }
  size_t n = 0;
  if (!count || !name || (*count)(&n) != 0)
    return;
  for (size_t i = 0; i < n; ++i) {
    const char *isa = nullptr;
    if ((*name)(i, &isa) != 0 || !isa)
      continue;
    std::string text = isa;
    size_t dashes = text.rfind("--");
    std::string processor = dashes == std::string::npos ? text : text.substr(dashes + 2);
    processors.push_back(processor.substr(0, processor.find(':')));
  }
}

} // namespace

std::vector<std::string> HiprtcCompiler::defaultLibraries() {
  return SharedLibrary::candidates(
      "MONODC_HIPRTC_LIBRARY", {"ROCM_PATH"}, {"libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.5", "libamdhip64.so",
                      "libamdhip64.so.6", "libamdhip64.so.5"});
}

Result<std::shared_ptr<HiprtcCompiler>>
HiprtcCompiler::load(const std::vector<std::string> &candidates) {
  Result<SharedLibrary> library = SharedLibrary::open(candidates, "hiprtc");
  if (!library)
    return library.error();
  Result<RtcApi> api = RtcApi::load(std::move(*library), "hiprtc", "Code");
  if (!api)
    return api.error();
  std::shared_ptr<HiprtcCompiler> compiler(new HiprtcCompiler(std::move(*api)));
  readComgr(compiler->processors_, compiler->comgrVersion_);
  return compiler;
}

std::string HiprtcCompiler::version() const {
  return "hiprtc " + api_.version() +
         (comgrVersion_.empty() ? "" : ", comgr " + comgrVersion_);
}

Status HiprtcCompiler::checkArch(const std::string &arch) const {
  // The processors are comgr's, which compiles for hiprtc.
  return checkProcessor("hiprtc (" + libraryName() + ", " + version() + ")", arch,
                        arch.substr(0, arch.find(':')), "gfx", processors_);
}

Result<std::vector<char>> HiprtcCompiler::compile(const std::string &source,
                                                  const Options &options) const {
  if (Status s = checkArch(options.arch); !s)
    return s.error();
  // -ffp-contract=off: one rounding per operation, as the CPU simulator computes.
  std::vector<std::string> flags = {"--offload-arch=" + options.arch, "-O3",
                                    "-ffp-contract=off"};
  flags.insert(flags.end(), options.flags.begin(), options.flags.end());
  auto build = [&]() { return api_.compile(source, options.sourceName, flags); };
  if (!options.isolate)
    return build();
  Result<std::string> bytes = runIsolated(
      [&]() -> Result<std::string> {
        Result<std::vector<char>> code = build();
        if (!code)
          return code.error();
        return std::string(code->begin(), code->end());
      },
      options.timeoutSeconds,
      "hiprtc (" + libraryName() + ") compiling " + options.sourceName + " for " + options.arch);
  if (!bytes)
    return bytes.error();
  return std::vector<char>(bytes->begin(), bytes->end());
}
