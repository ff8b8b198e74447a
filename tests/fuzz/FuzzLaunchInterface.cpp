//===- FuzzLaunchInterface.cpp - the kernel-manifest parser ---------------===//
//
// LaunchInterface::parse(), then what a launcher does with what it accepts:
// lay out the arguments (sizes multiply rows x cols x element bytes: signed
// overflow is UB, which UBSan reports) and pack them. text() of a parsed
// manifest parses back to the same text.
//
//===----------------------------------------------------------------------===//
#include "FuzzCheck.h"

#include "monodc/runtime/ArgumentLayout.h"
#include "monodc/runtime/LaunchInterface.h"

using namespace monodc::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Result<LaunchInterface> interface = LaunchInterface::parse(fuzzBytes(data, size));
  if (!interface)
    return 0;
  std::string text = interface->text();
  Result<LaunchInterface> again = LaunchInterface::parse(text);
  MONODC_FUZZ_CHECK(again.ok());
  MONODC_FUZZ_CHECK(again->text() == text);
  for (const RegionSpec &region : interface->arguments)
    MONODC_FUZZ_CHECK(interface->argument(region.name) != nullptr);
  (void)interface->peerBufferBytes();

  Result<ArgumentLayout> layout = layoutArguments(*interface, nullptr);
  if (!layout)
    return 0;
  std::map<std::string, uint64_t> bound;
  uint64_t address = 0x1000;
  for (const ArgumentSlot &slot : layout->slots)
    if (!slot.launcherOwned)
      bound[slot.name] = address += 0x1000;
  Result<std::vector<uint8_t>> packed = packArguments(*layout, bound, 0x100000);
  if (packed)
    MONODC_FUZZ_CHECK(static_cast<int64_t>(packed->size()) == layout->kernargBytes);
  return 0;
}
