//===- ClangBackendAdapter.cpp - in-process clang + lld as a CompileBackend ===//
#include "monodc/jit/Compiler.h"

#include "monodc/jit/ClangBackend.h"

#include "llvm/Config/llvm-config.h"

using namespace monodc;
using namespace monodc::runtime;

namespace {

class ClangBackend : public CompileBackend {
public:
  std::string name() const override { return "clang"; }
  std::string version() const override { return "clang+lld " LLVM_VERSION_STRING; }
  Status checkArch(const std::string &arch) const override {
    if (backends::isClangBackendArch(arch))
      return Status::success();
    return makeError("the in-process clang backend cannot build for arch '" + arch +
                     "' (it builds " + targetNames(TargetVendor::Amd) + ")");
  }
  Result<std::vector<char>> compile(const std::string &source,
                                    const BackendCompileOptions &options) const override {
    if (!options.features.empty())
      return makeError("the in-process clang backend builds the default features of " +
                       options.arch + " only, not '" + options.features + "'");
    backends::ClangCompileOptions clang;
    clang.arch = options.arch;
    clang.sourceName = options.sourceName;
    if (options.options.size() != 3 || options.options.rfind("-O", 0) != 0 ||
        options.options[2] < '0' || options.options[2] > '3')
      return makeError("the in-process clang backend takes the options -O0..-O3, not '" +
                       options.options + "'");
    clang.optLevel = options.options[2] - '0';
    auto object = backends::compileHipToCodeObject(source, clang);
    if (!object)
      return makeError(llvm::toString(object.takeError()));
    return std::move(*object);
  }
};

} // namespace

std::shared_ptr<CompileBackend> monodc::makeClangBackend() {
  return std::make_shared<ClangBackend>();
}
