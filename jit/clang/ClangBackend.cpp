//===- ClangBackend.cpp - HIP -> AMDGPU code object, in process -----------===//
#include "monodc/jit/ClangBackend.h"
#include "monodc/runtime/Target.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "lld/Common/Driver.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <mutex>

LLD_HAS_DRIVER(elf)

extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTarget();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmPrinter();
void LLVMInitializeAMDGPUAsmParser();
}

using namespace monodc::backends;

void monodc::backends::initializeAmdgpuTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
  });
}

std::vector<std::string> monodc::backends::clangCc1Arguments(const ClangCompileOptions &options,
                                                             bool assembly,
                                                             const std::string &output) {
  return {"-triple", "amdgcn-amd-amdhsa", "-target-cpu", options.arch,
          assembly ? "-S" : "-emit-obj", "-O" + std::to_string(options.optLevel),
          "-fcuda-is-device", "-fno-threadsafe-statics", "-fvisibility=hidden",
          "-fapply-global-visibility-to-externs", "-mrelocation-model", "pic",
          "-pic-level", "2", "-mframe-pointer=none",
          // One rounding per operation, as the CPU simulator computes.
          // No -mllvm options: they set LLVM's process-wide flags, which
          // CompilerInstance::ExecuteAction never applies (a library cannot
          // set them per build either).
          "-ffp-contract=off", "-std=c++17", "-x", "hip", options.sourceName, "-o", output};
}

namespace {

/// A temporary directory removed with its files when the object dies.
class ScratchDir {
public:
  llvm::Error create() {
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("monodc", path))
      return llvm::createStringError(ec, "cannot create a temporary directory: %s",
                                     ec.message().c_str());
    return llvm::Error::success();
  }
  ~ScratchDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

private:
  llvm::SmallString<256> path;
};

/// Runs clang's device-side HIP front end and AMDGPU back end on `source`,
/// writing an object file or assembly to `output`.
llvm::Error runFrontEnd(const std::string &source, const ClangCompileOptions &options,
                        bool assembly, const std::string &output) {
  initializeAmdgpuTargets();
  const std::vector<std::string> arguments = clangCc1Arguments(options, assembly, output);
  std::vector<const char *> args;
  for (const std::string &argument : arguments)
    args.push_back(argument.c_str());

  std::string diagnosticsText;
  llvm::raw_string_ostream diagnosticsStream(diagnosticsText);
  clang::DiagnosticOptions diagOptions;
  auto printer = std::make_unique<clang::TextDiagnosticPrinter>(diagnosticsStream, diagOptions);
  clang::DiagnosticsEngine diags(llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(),
                                 diagOptions, printer.get(), /*ShouldOwnClient=*/false);

  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation, args, diags))
    return llvm::createStringError("clang rejected its arguments: %s",
                                   diagnosticsText.c_str());
  invocation->getPreprocessorOpts().addRemappedFile(
      options.sourceName,
      llvm::MemoryBuffer::getMemBufferCopy(source, options.sourceName).release());

  clang::CompilerInstance compiler(invocation);
  compiler.createVirtualFileSystem(llvm::vfs::getRealFileSystem());
  compiler.createDiagnostics(printer.get(), /*ShouldOwnClient=*/false);
  bool ok;
  if (assembly) {
    clang::EmitAssemblyAction action;
    ok = compiler.ExecuteAction(action);
  } else {
    clang::EmitObjAction action;
    ok = compiler.ExecuteAction(action);
  }
  diagnosticsStream.flush();
  if (!ok || compiler.getDiagnostics().hasErrorOccurred())
    return llvm::createStringError("HIP compilation for %s failed:\n%s",
                                   options.arch.c_str(), diagnosticsText.c_str());
  return llvm::Error::success();
}

llvm::Expected<std::string> readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read %s", path.c_str());
  return (*buffer)->getBuffer().str();
}

llvm::Error checkArch(const std::string &arch) {
  if (!isClangBackendArch(arch))
    return llvm::createStringError(
        "the in-process clang backend cannot build for arch '%s' (it builds %s)", arch.c_str(),
        monodc::runtime::targetNames(monodc::runtime::TargetVendor::Amd).c_str());
  return llvm::Error::success();
}

} // namespace

bool monodc::backends::isClangBackendArch(const std::string &arch) {
  const monodc::runtime::Target *target = monodc::runtime::findTarget(arch);
  return target && target->isAmd();
}

llvm::Expected<std::string>
monodc::backends::compileHipToAssembly(const std::string &source,
                                       const ClangCompileOptions &options) {
  if (llvm::Error e = checkArch(options.arch))
    return std::move(e);
  ScratchDir dir;
  if (llvm::Error e = dir.create())
    return std::move(e);
  std::string out = dir.file("launch.s");
  if (llvm::Error e = runFrontEnd(source, options, /*assembly=*/true, out))
    return std::move(e);
  return readFile(out);
}

llvm::Expected<std::vector<char>>
monodc::backends::compileHipToCodeObject(const std::string &source,
                                         const ClangCompileOptions &options) {
  if (llvm::Error e = checkArch(options.arch))
    return std::move(e);
  ScratchDir dir;
  if (llvm::Error e = dir.create())
    return std::move(e);
  std::string object = dir.file("launch.o"), codeObject = dir.file("launch.co");
  if (llvm::Error e = runFrontEnd(source, options, /*assembly=*/false, object))
    return std::move(e);

  // The relocatable object becomes a loadable code object as lld links it
  // as a shared object, as the HIP toolchain does.
  std::vector<const char *> linkArgs = {"ld.lld", "-shared", "--no-undefined",
                                        object.c_str(), "-o", codeObject.c_str()};
  std::string linkLog;
  llvm::raw_string_ostream linkStream(linkLog);
  static std::mutex lldMutex;  // lld keeps global state while it links
  lld::Result result;
  {
    std::lock_guard<std::mutex> lock(lldMutex);
    result = lld::lldMain(linkArgs, linkStream, linkStream, {{lld::Gnu, &lld::elf::link}});
  }
  linkStream.flush();
  if (result.retCode != 0)
    return llvm::createStringError("linking the %s code object failed:\n%s",
                                   options.arch.c_str(), linkLog.c_str());
  auto bytes = readFile(codeObject);
  if (!bytes)
    return bytes.takeError();
  return std::vector<char>(bytes->begin(), bytes->end());
}
