//===- InspectCommand.cpp - monodc inspect FILE ---------------------------===//
//
// The AMDGPU metadata of a code object, or of a cache entry (with its key and
// kernel manifest), read by the LLVM-free reader the runtime uses.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "monodc/runtime/CacheEntry.h"
#include "monodc/runtime/CodeObject.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

namespace {

using monodc::cli::fail;
using namespace monodc::runtime;

void printKernel(const KernelInfo &k) {
  std::cout << fmt::format("kernel {} (symbol {})\n", k.name, k.symbol);
  std::cout << fmt::format("  VGPR {}  AGPR {}  SGPR {}  VGPR spills {}  SGPR spills {}\n",
                           k.vgprs, k.agprs, k.sgprs, k.vgprSpills, k.sgprSpills);
  std::cout << fmt::format("  LDS {} B  scratch {} B per work-item  dynamic stack {}\n",
                           k.ldsBytes, k.scratchBytes, k.usesDynamicStack ? "yes" : "no");
  std::cout << fmt::format("  wavefront {}  max workgroup {}  kernarg {} B (align {})\n",
                           k.wavefrontSize, k.maxFlatWorkgroupSize, k.kernargBytes,
                           k.kernargAlign);
  std::cout << fmt::format("  {:>6} {:>4}  {:<22} {:<11} {}\n", "offset", "size", "kind",
                           "access", "argument");
  for (const KernelArgument &a : k.arguments)
    std::cout << fmt::format("  {:>6} {:>4}  {:<22} {:<11} {}\n", a.offset, a.size,
                             a.valueKind, a.access.empty() ? "-" : a.access, a.name);
}

/// A file that cannot be read is refused (exit 2); one whose bytes are not
/// a whole code object or cache entry is what the inspection found (exit 1,
/// as `cache verify` reports damage).
int inspect(const std::string &path) {
  std::string bytes;
  if (auto problem = monodc::cli::readFile(path, bytes))
    fail(*problem, monodc::cli::kUsageError);
  std::string codeObject = bytes;
  if (!looksLikeElf(bytes)) {
    auto entry = decodeCacheEntry(bytes);
    if (!entry)
      fail(path + " is neither a code object nor a cache entry: " + entry.message());
    std::cout << "cache entry " << path << "\nkey " << entry->keyText << "\nmanifest:\n"
              << entry->metadata;
    codeObject.assign(entry->codeObject.begin(), entry->codeObject.end());
  }
  auto info = readCodeObject(codeObject);
  if (!info)
    fail(path + ": " + info.message());
  std::string version;
  for (int64_t part : info->metadataVersion)
    version += (version.empty() ? "" : ".") + std::to_string(part);
  std::cout << fmt::format("code object {}: {} (ELF flags {:#x}), metadata {}, code {} B\n",
                           path, info->target, info->elfFlags, version, info->codeBytes);
  for (const KernelInfo &k : info->kernels)
    printKernel(k);
  for (const KernelInfo &k : info->kernels)
    if (Status persistent = checkPersistentKernel(k); !persistent)
      std::cout << "note: " << persistent.message() << "\n";
  return 0;
}

} // namespace

void monodc::cli::addInspectCommand(CLI::App &app) {
  auto file = std::make_shared<std::string>();
  CLI::App *sub = app.add_subcommand(
      "inspect", "print the kernels of an AMDGPU code object or cache entry: registers, LDS, "
                 "scratch, wavefront, kernel arguments, code size");
  sub->add_option("FILE", *file, "a code object (.co) or a cache entry (.mco)")->required();
  sub->callback([file] { std::exit(inspect(*file)); });
}
