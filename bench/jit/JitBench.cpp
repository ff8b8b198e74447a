//===- JitBench.cpp - how fast the JIT builds and serves a launch ---------===//
//
// One run prints, side by side with the targets of issue 5:
//   - a cold build in a new process (DSL -> code object, empty cache), and the
//     same build split into DSL, passes + HIP emission, clang front end,
//     backend code generation (optimization + instruction selection) and link;
//   - a warm disk-cache hit in a new process (full JIT session by request, and
//     a runtime-only session finding the entry by request);
//   - an in-process hit;
//   - the in-process clang + lld path against a clang++-22 subprocess on the
//     same source.
// Not a test: it prints numbers (docs/runtime.md records them).
//
//===----------------------------------------------------------------------===//
#include "monodc/Emit/EmitPipeline.h"
#include "monodc/jit/ClangBackend.h"
#include "monodc/jit/Compiler.h"
#include "monodc/runtime/CodeObject.h"
#include "monodc/stages/Launches.h"

#include "clang/Basic/DiagnosticOptions.h"
#include "clang/CodeGen/BackendUtil.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "lld/Common/Driver.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

LLD_HAS_DRIVER(elf)

using namespace monodc;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

[[noreturn]] void die(const std::string &message) {
  std::cerr << "monodc-bench-jit: " << message << "\n";
  std::exit(1);
}

KernelRequest requestFrom(int argc, char **argv, int first) {
  std::string text;
  for (int i = first; i < argc; ++i)
    text += std::string(argv[i]) + " ";
  auto request = KernelRequest::parse(text);
  if (!request)
    die(request.message());
  return *request;
}

std::string selfPath() {
  std::string self(4096, '\0');
  ssize_t n = readlink("/proc/self/exe", self.data(), self.size());
  self.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return self;
}

/// Runs `program` (default: this program again) with `args`; returns its
/// stdout and the wall time.
std::pair<std::string, double> runChild(const std::vector<std::string> &args,
                                        std::string program = selfPath()) {
  std::string self = program;
  for (const std::string &arg : args)
    self += " '" + arg + "'";
  auto start = Clock::now();
  FILE *pipe = popen(self.c_str(), "r");
  if (!pipe)
    die("cannot start " + self);
  std::string output;
  char buffer[4096];
  while (size_t got = fread(buffer, 1, sizeof buffer, pipe))
    output.append(buffer, got);
  int status = pclose(pipe);
  double ms = msSince(start);
  if (status != 0)
    die("child " + self + " failed:\n" + output);
  return {output, ms};
}

double field(const std::string &output, const std::string &name) {
  size_t at = output.find(name + " ");
  if (at == std::string::npos)
    die("child output lacks " + name + ":\n" + output);
  return std::stod(output.substr(at + name.size() + 1));
}

// ---- children -------------------------------------------------------------

/// A session over `dir` asks for the request once: a cold build or a hit.
int childLookup(const std::string &dir, bool withCompiler, const KernelRequest &request) {
  auto start = Clock::now();
  SessionOptions options;
  options.cacheDirectory = dir;
  std::unique_ptr<Session> session = withCompiler ? openJitSession(options)
                                                  : std::make_unique<Session>(options);
  auto kernel = session->kernel(request);
  double ms = msSince(start);
  if (!kernel)
    die(kernel.message());
  std::cout << "lookup_ms " << ms << "\nbytes " << (*kernel)->codeObject().size() << "\n";
  return 0;
}

/// The cold build again, one phase at a time, with the cc1 arguments of
/// jit/clang/ClangBackend.cpp: the result must equal the
/// backend's code object byte for byte, or the split measured other work.
int childPhases(const KernelRequest &request) {
  // What the backend does once per process before its first build.
  backends::initializeAmdgpuTargets();
  Compiler compiler;
  auto key = compiler.resolve(request);
  if (!key)
    die(key.message());
  auto config = stages::configByName(key->model);
  if (!config)
    die(llvm::toString(config.takeError()));
  stages::BuildParams params{key->arch, key->grid, key->block, key->rows, key->tp};

  auto start = Clock::now();
  mlir::MLIRContext context;
  auto module = stages::buildLaunch(context, key->launch, *config, params);
  if (!module)
    die(llvm::toString(module.takeError()));
  double dslMs = msSince(start);
  start = Clock::now();
  auto hip = emit::emitHip(**module);
  if (mlir::failed(hip))
    die("emission failed");
  double emitMs = msSince(start);

  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("monodc-bench", dir))
    die("no temporary directory");
  std::string object = (dir + "/launch.o").str(), codeObject = (dir + "/launch.co").str();
  backends::ClangCompileOptions options;
  options.arch = key->arch;
  options.sourceName = "launch.hip";
  options.optLevel = key->options[2] - '0';
  const std::vector<std::string> arguments =
      backends::clangCc1Arguments(options, /*assembly=*/false, object);
  std::vector<const char *> args;
  for (const std::string &argument : arguments)
    args.push_back(argument.c_str());
  start = Clock::now();
  clang::DiagnosticOptions diagOptions;
  clang::TextDiagnosticPrinter printer(llvm::errs(), diagOptions);
  clang::DiagnosticsEngine diags(llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), diagOptions,
                                 &printer, false);
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation, args, diags))
    die("clang refused its arguments");
  invocation->getPreprocessorOpts().addRemappedFile(
      "launch.hip", llvm::MemoryBuffer::getMemBufferCopy(*hip, "launch.hip").release());
  clang::CompilerInstance ci(invocation);
  ci.createVirtualFileSystem(llvm::vfs::getRealFileSystem());
  ci.createDiagnostics(&printer, false);
  // The front end alone: without this, -emit-llvm-only runs the -O3 pipeline
  // too, and the backend below would run it a second time.
  ci.getCodeGenOpts().DisableLLVMPasses = true;
  clang::EmitLLVMOnlyAction frontEnd;
  if (!ci.ExecuteAction(frontEnd))
    die("the front end failed");
  ci.getCodeGenOpts().DisableLLVMPasses = false;
  std::unique_ptr<llvm::Module> ir = frontEnd.takeModule();
  double frontMs = msSince(start);

  start = Clock::now();
  std::error_code ec;
  auto out = std::make_unique<llvm::raw_fd_ostream>(object, ec);
  if (ec)
    die("cannot write " + object);
  clang::emitBackendOutput(ci, ci.getCodeGenOpts(), ir->getDataLayoutStr(), ir.get(),
                           clang::Backend_EmitObj, llvm::vfs::getRealFileSystem(),
                           std::move(out));
  double backendMs = msSince(start);

  start = Clock::now();
  std::vector<const char *> linkArgs = {"ld.lld", "-shared", "--no-undefined", object.c_str(),
                                        "-o", codeObject.c_str()};
  std::string log;
  llvm::raw_string_ostream logStream(log);
  if (lld::lldMain(linkArgs, logStream, logStream, {{lld::Gnu, &lld::elf::link}}).retCode)
    die("lld failed: " + log);
  double linkMs = msSince(start);

  auto mine = llvm::MemoryBuffer::getFile(codeObject);
  start = Clock::now();
  auto reference = backends::compileHipToCodeObject(*hip, options);
  double referenceMs = msSince(start);
  if (!mine || !reference)
    die("no code object to compare");
  // 2: byte-identical; 1: same size and resources (clang may order the
  // operands of commutative instructions differently); 0: other work.
  llvm::StringRef split = (*mine)->getBuffer();
  std::string_view backend(reference->data(), reference->size());
  int same = split == llvm::StringRef(backend.data(), backend.size()) ? 2 : 0;
  auto splitInfo = runtime::readCodeObject(std::string_view(split.data(), split.size()));
  auto backendInfo = runtime::readCodeObject(backend);
  if (!same && splitInfo && backendInfo && split.size() == backend.size()) {
    const runtime::KernelInfo &a = splitInfo->kernels[0], &b = backendInfo->kernels[0];
    same = a.vgprs == b.vgprs && a.sgprs == b.sgprs && a.agprs == b.agprs &&
           a.ldsBytes == b.ldsBytes && a.scratchBytes == b.scratchBytes;
  }
  llvm::sys::fs::remove_directories(dir);
  std::cout << "dsl_ms " << dslMs << "\nemit_ms " << emitMs << "\nfront_ms " << frontMs
            << "\nbackend_ms " << backendMs << "\nlink_ms " << linkMs << "\nsame " << same
            << "\nwhole_ms " << referenceMs << "\n";
  return 0;
}

// ---- the parent -----------------------------------------------------------

/// Median of `runs` in-process clang + lld builds and clang++-22 subprocess
/// builds of the same source.
std::pair<double, double> inProcessVersusSubprocess(const std::string &source,
                                                    const runtime::BuildKey &key, int runs) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("monodc-bench", dir))
    die("no temporary directory");
  std::string path = (dir + "/launch.hip").str(), out = (dir + "/launch.co").str();
  std::ofstream(path) << source;
  backends::ClangCompileOptions options;
  options.arch = key.arch;
  options.optLevel = key.options[2] - '0';
  std::vector<double> inProcess, subprocess;
  std::string command = fmt::format(
      "clang++-22 -x hip --offload-device-only --offload-arch={} -nogpulib -nogpuinc {} "
      "-ffp-contract=off --no-gpu-bundle-output -o {} {}",
      key.arch, key.options, out, path);
  for (int i = 0; i < runs; ++i) {
    auto start = Clock::now();
    if (!backends::compileHipToCodeObject(source, options))
      die("in-process build failed");
    inProcess.push_back(msSince(start));
    start = Clock::now();
    if (std::system(command.c_str()) != 0)
      die("failed: " + command);
    subprocess.push_back(msSince(start));
  }
  llvm::sys::fs::remove_directories(dir);
  return {median(inProcess), median(subprocess)};
}

int parent(const KernelRequest &request, int runs) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("monodc-bench-cache", dir))
    die("no temporary directory");
  std::string cache = dir.str().str();
  std::vector<std::string> requestArgs;
  std::istringstream words(request.text());
  for (std::string word; words >> word;)
    requestArgs.push_back(word);
  auto child = [&](const std::string &mode) {
    std::vector<std::string> args = {"--child", mode, cache};
    args.insert(args.end(), requestArgs.begin(), requestArgs.end());
    return runChild(args);
  };

  // Cold builds, each into an empty cache, then warm hits of the last one.
  std::vector<double> coldLookup, coldWall, warm, warmWall, runtimeOnly, runtimeOnlyWall;
  std::string cold;
  for (int i = 0; i < runs; ++i) {
    llvm::sys::fs::remove_directories(cache);
    auto [output, wall] = child("cold");
    cold = output;
    coldLookup.push_back(field(output, "lookup_ms"));
    coldWall.push_back(wall);
  }
  for (int i = 0; i < runs; ++i) {
    auto [w, ww] = child("warm");
    warm.push_back(field(w, "lookup_ms"));
    warmWall.push_back(ww);
    auto [r, rw] = child("runtime-only");
    runtimeOnly.push_back(field(r, "lookup_ms"));
    runtimeOnlyWall.push_back(rw);
  }
  // A process linked against the runtime library alone, beside this one.
  std::string lookupProgram = selfPath();
  lookupProgram = lookupProgram.substr(0, lookupProgram.rfind('/') + 1) + "monodc-bench-lookup";
  std::vector<double> lean, leanWall;
  for (int i = 0; i < runs; ++i) {
    std::vector<std::string> args = {cache};
    args.insert(args.end(), requestArgs.begin(), requestArgs.end());
    auto [output, wall] = runChild(args, lookupProgram);
    lean.push_back(field(output, "lookup_ms"));
    leanWall.push_back(wall);
  }
  std::map<std::string, std::vector<double>> phaseTimes;
  int sameness = 2;
  for (int i = 0; i < runs; ++i) {
    std::string phases = child("phases").first;
    for (const char *phase :
         {"dsl_ms", "emit_ms", "front_ms", "backend_ms", "link_ms", "whole_ms"})
      phaseTimes[phase].push_back(field(phases, phase));
    sameness = std::min(sameness, static_cast<int>(field(phases, "same")));
  }

  // In-process hits: a session that has served the request once.
  SessionOptions options;
  options.cacheDirectory = cache;
  auto session = openJitSession(options);
  auto kernel = session->kernel(request);
  if (!kernel)
    die(kernel.message());
  const int hits = 200000;
  auto start = Clock::now();
  for (int i = 0; i < hits; ++i)
    if (!session->kernel(request))
      die("a hit failed");
  double hitUs = msSince(start) * 1000.0 / hits;
  start = Clock::now();
  for (int i = 0; i < hits; ++i)
    if (!session->kernel((*kernel)->key))
      die("a hit failed");
  double keyHitUs = msSince(start) * 1000.0 / hits;

  Compiler compiler;
  auto emitted = compiler.emit((*kernel)->key);
  if (!emitted)
    die(emitted.message());
  auto [inProcessMs, subprocessMs] =
      inProcessVersusSubprocess(emitted->source, (*kernel)->key, runs);
  llvm::sys::fs::remove_directories(dir);

  const runtime::BuildKey &key = (*kernel)->key;
  std::cout << fmt::format("monodc-bench-jit: {} {} {} rows {} TP {} ({} bytes of code object, "
                           "{} runs of each repeated measurement, medians)\n",
                           key.model, key.launch, key.arch, key.rows, key.tp,
                           field(cold, "bytes"), runs);
  std::string line(96, '-');
  std::cout << fmt::format("{:<58} {:>12} {:>10} {:>10}\n{}\n", "measurement", "time",
                           "target", "vs target", line);
  auto row = [](const std::string &what, double ms, double targetMs) {
    std::string time = ms < 1 ? fmt::format("{:.2f} us", ms * 1000) : fmt::format("{:.1f} ms", ms);
    std::string target = targetMs <= 0 ? "-"
                         : targetMs < 1 ? fmt::format("{:.0f} us", targetMs * 1000)
                                        : fmt::format("{:.0f} ms", targetMs);
    std::string ratio = targetMs <= 0 ? "" : fmt::format("{:.3f}x", ms / targetMs);
    std::cout << fmt::format("{:<58} {:>12} {:>10} {:>10}\n", what, time, target, ratio);
  };
  row("cold build, new process: session lookup (empty cache)", median(coldLookup), 0);
  row("cold build, new process: whole process", median(coldWall), 0);
  double dsl = median(phaseTimes["dsl_ms"]), emit = median(phaseTimes["emit_ms"]),
         front = median(phaseTimes["front_ms"]), back = median(phaseTimes["backend_ms"]),
         link = median(phaseTimes["link_ms"]);
  row("  split (new processes): DSL -> mono IR", dsl, 0);
  row("  split: passes + HIP emission", emit, 0);
  row("  split: clang front end (HIP -> LLVM IR)", front, 0);
  row("  split: backend code generation (opt + AMDGPU codegen)", back, 0);
  row("  split: link (lld)", link, 0);
  row("  split: sum", dsl + emit + front + back + link, 0);
  row("  (the backend's own build of that source, same process)", median(phaseTimes["whole_ms"]),
      0);
  const char *samenessText[] = {"NOT the backend's: the split measured other work",
                                "the backend's size and resources (operand order differs)",
                                "byte-identical to the backend's"};
  std::cout << fmt::format("  (the split's code object: {})\n", samenessText[sameness]);
  row("warm disk hit, new process: JIT session lookup", median(warm), 10);
  row("warm disk hit, new process: whole process", median(warmWall), 0);
  row("warm disk hit, new process: runtime-only session by request", median(runtimeOnly), 10);
  row("warm disk hit, new process: that whole process", median(runtimeOnlyWall), 0);
  row("warm disk hit, LLVM-free process (monodc-bench-lookup)", median(lean), 10);
  row("warm disk hit, LLVM-free process: whole process", median(leanWall), 10);
  row("in-process hit by request", hitUs / 1000, 0.05);
  row("in-process hit by key", keyHitUs / 1000, 0.05);
  row("in-process clang + lld build (HIP -> code object)", inProcessMs, 0);
  row("clang++-22 subprocess build of the same source", subprocessMs, 0);
  std::cout << fmt::format("in-process / subprocess: {:.2f} (target: below 1)\n",
                           inProcessMs / subprocessMs);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc >= 4 && std::string(argv[1]) == "--child") {
    std::string mode = argv[2], cache = argv[3];
    KernelRequest request = requestFrom(argc, argv, 4);
    if (mode == "cold" || mode == "warm")
      return childLookup(cache, /*withCompiler=*/true, request);
    if (mode == "runtime-only")
      return childLookup(cache, /*withCompiler=*/false, request);
    if (mode == "phases")
      return childPhases(request);
    die("unknown child mode " + mode);
  }
  int runs = 5;
  int first = 1;
  if (argc >= 3 && std::string(argv[1]) == "--runs") {
    runs = std::max(1, std::atoi(argv[2]));
    first = 3;
  }
  if (argc > first && std::string(argv[first]) == "--help") {
    std::cout << "usage: monodc-bench-jit [--runs N] [REQUEST FIELDS, e.g. model=dsv41 "
                 "launch=attention_front arch=gfx950 rows=6 tp=2]\n";
    return 0;
  }
  return parent(requestFrom(argc, argv, first), runs);
}
