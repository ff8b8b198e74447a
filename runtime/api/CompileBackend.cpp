//===- CompileBackend.cpp - hiprtc and nvrtc behind one interface ---------===//
#include "monodc/runtime/CompileBackend.h"

#include "monodc/runtime/HiprtcCompiler.h"
#include "monodc/runtime/NvrtcCompiler.h"

#include <sstream>

using namespace monodc;
using namespace monodc::runtime;

namespace {

std::vector<std::string> splitOptions(const std::string &options) {
  std::istringstream stream(options);
  std::vector<std::string> words;
  for (std::string word; stream >> word;)
    words.push_back(word);
  return words;
}

/// hiprtc and nvrtc differ only in their compiler class and options type.
template <typename Rtc> class RtcBackend : public CompileBackend {
public:
  RtcBackend(std::string name, std::shared_ptr<Rtc> rtc)
      : name_(std::move(name)), rtc_(std::move(rtc)) {}
  std::string name() const override { return name_; }
  std::string version() const override { return rtc_->version(); }
  Status checkArch(const std::string &arch) const override { return rtc_->checkArch(arch); }
  Result<std::vector<char>> compile(const std::string &source,
                                    const BackendCompileOptions &options) const override {
    typename Rtc::Options rtcOptions;
    rtcOptions.arch = options.features.empty() ? options.arch
                                               : options.arch + ":" + options.features;
    rtcOptions.sourceName = options.sourceName;
    rtcOptions.flags = splitOptions(options.options);
    return rtc_->compile(source, rtcOptions);
  }

private:
  std::string name_;
  std::shared_ptr<Rtc> rtc_;
};

template <typename Rtc>
Result<std::shared_ptr<CompileBackend>> loadRtc(const std::string &name) {
  Result<std::shared_ptr<Rtc>> rtc = Rtc::load();
  if (!rtc)
    return makeError("the " + name + " backend is unavailable: " + rtc.message());
  return std::shared_ptr<CompileBackend>(std::make_shared<RtcBackend<Rtc>>(name, *rtc));
}

} // namespace

Result<std::shared_ptr<CompileBackend>> monodc::loadHiprtcBackend() {
  return loadRtc<HiprtcCompiler>("hiprtc");
}

Result<std::shared_ptr<CompileBackend>> monodc::loadNvrtcBackend() {
  return loadRtc<NvrtcCompiler>("nvrtc");
}
