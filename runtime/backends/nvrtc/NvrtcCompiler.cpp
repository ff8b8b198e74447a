//===- NvrtcCompiler.cpp - HIP source -> cubin through nvrtc --------------===//
#include "monodc/runtime/NvrtcCompiler.h"

using namespace monodc::runtime;

std::vector<std::string> NvrtcCompiler::defaultLibraries() {
  return SharedLibrary::candidates("MONODC_NVRTC_LIBRARY", {"CUDA_PATH", "CUDA_HOME"},
                                   {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"});
}

Result<std::shared_ptr<NvrtcCompiler>>
NvrtcCompiler::load(const std::vector<std::string> &candidates) {
  Result<SharedLibrary> library = SharedLibrary::open(candidates, "nvrtc");
  if (!library)
    return library.error();
  Result<RtcApi> api = RtcApi::load(std::move(*library), "nvrtc", "CUBIN");
  if (!api)
    return api.error();
  std::shared_ptr<NvrtcCompiler> compiler(new NvrtcCompiler(std::move(*api)));
  // nvrtcGetSupportedArchs exists from CUDA 11.2; older ones cannot say.
  using Count = int (*)(int *);
  using List = int (*)(int *);
  auto count = compiler->api_.library().function<Count>("nvrtcGetNumSupportedArchs");
  auto list = compiler->api_.library().function<List>("nvrtcGetSupportedArchs");
  int n = 0;
  if (count && list && (*count)(&n) == 0 && n > 0) {
    std::vector<int> archs(static_cast<size_t>(n));
    if ((*list)(archs.data()) == 0)
      for (int arch : archs)
        compiler->architectures_.push_back("sm_" + std::to_string(arch));
  }
  return compiler;
}

Status NvrtcCompiler::checkArch(const std::string &arch) const {
  return checkProcessor("nvrtc (" + libraryName() + ", " + version() + ")", arch, arch, "sm_",
                        architectures_);
}

Result<std::vector<char>> NvrtcCompiler::compile(const std::string &source,
                                                 const Options &options) const {
  if (Status s = checkArch(options.arch); !s)
    return s.error();
  // -fmad=false: one rounding per operation, as the CPU simulator computes.
  std::vector<std::string> flags = {"--gpu-architecture=" + options.arch, "--std=c++17",
                                    "-fmad=false"};
  // nvrtc has no -O<n>: the build key's optimization level goes to ptxas.
  for (const std::string &flag : options.flags)
    flags.push_back(flag.size() == 3 && flag.rfind("-O", 0) == 0 ? "--ptxas-options=" + flag
                                                                  : flag);
  return api_.compile(source, options.sourceName, flags);
}
