//===- LayerStep.cpp - one rank's decode layer, run as steps --------------===//
#include "monodc/runtime/LayerStep.h"

#include "monodc/runtime/WaitFault.h"

#include <algorithm>
#include <map>

using namespace monodc::runtime;

namespace {

std::string join(const std::vector<std::string> &names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::string shapeOf(const RegionSpec &r) {
  return r.format + " [" + std::to_string(r.rows) + ", " + std::to_string(r.cols) + "]";
}

/// The caller binds inputs, weights and step results; the step binds the
/// rest (hand-overs, step-internal outputs).
bool callerBinds(const RegionSpec &r) {
  return r.handedFromKernel.empty() && (r.kind != "output" || r.stepResult);
}

/// Refuses launches that cannot form one step, in the order a reader
/// would check them.
Status checkStepOrder(const std::vector<std::unique_ptr<Launcher>> &launches) {
  for (size_t i = 0; i < launches.size(); ++i) {
    const LaunchInterface &launch = launches[i]->interface();
    if (std::none_of(launch.arguments.begin(), launch.arguments.end(),
                     [](const RegionSpec &r) { return r.stepResult; }))
      return makeError("kernel " + launch.kernelName +
                       " declares no step result: it is not a launch of a layer step (K1 then "
                       "K2, or the FFN launch)");
    if (i == 0)
      continue;
    const LaunchInterface &before = launches[i - 1]->interface();
    if (before.endsStep)
      return makeError("kernel " + before.kernelName + " ends the step, and " + launch.kernelName +
                       " follows it: a step's last launch ends it");
    if (launch.stepTag <= before.stepTag)
      return makeError("kernel " + launch.kernelName + " (step tag " +
                       std::to_string(launch.stepTag) + ") follows " + before.kernelName +
                       " (step tag " + std::to_string(before.stepTag) +
                       "): a step's launches run in step-tag order");
  }
  const LaunchInterface &last = launches.back()->interface();
  if (!last.endsStep)
    return makeError("the step of " + std::to_string(last.rows) + " rows ends with kernel " +
                     last.kernelName + ", which leaves the step to a launch after it (K1 "
                     "needs its K2)");
  return Status::success();
}

} // namespace

Result<std::unique_ptr<LayerStep>>
LayerStep::create(std::shared_ptr<StepMemory> memory,
                  std::vector<std::vector<std::unique_ptr<Launcher>>> lists) {
  if (!memory)
    return makeError("a layer step needs the rank's step memory");
  if (lists.empty())
    return makeError("a layer step needs the launches of at least one step width");
  std::vector<Width> widths;
  const LaunchInterface *first = nullptr;
  for (auto &launches : lists) {
    if (launches.empty())
      return makeError("a step width of a layer step has no launches");
    Width width{launches.front() ? launches.front()->interface().rows : 0, {}};
    for (auto &launcher : launches) {
      if (!launcher)
        return makeError("a layer step was given a null launcher");
      const LaunchInterface &launch = launcher->interface();
      if (!first)
        first = &launch;
      if (launcher->device() != memory->device())
        return makeError("kernel " + launch.kernelName + " was loaded on device " +
                         std::to_string(launcher->device()) + ", and the rank's step memory is on " +
                         std::to_string(memory->device()));
      if (launch.rows != width.rows)
        return makeError("kernel " + launch.kernelName + " is built for " +
                         std::to_string(launch.rows) + " rows, and its step's first launch for " +
                         std::to_string(width.rows) + ": a step's launches share its width");
      if (launch.grid != first->grid)
        return makeError("kernel " + launch.kernelName + " (grid " + std::to_string(launch.grid) +
                         ") and kernel " + first->kernelName + " (grid " +
                         std::to_string(first->grid) + ") cannot share the rank's epoch buffer");
    }
    if (Status s = checkStepOrder(launches); !s)
      return s.error();
    width.launches = std::move(launches);
    widths.push_back(std::move(width));
  }
  std::sort(widths.begin(), widths.end(),
            [](const Width &a, const Width &b) { return a.rows < b.rows; });
  for (size_t i = 1; i < widths.size(); ++i)
    if (widths[i].rows == widths[i - 1].rows)
      return makeError("a layer step was given the step width of " +
                       std::to_string(widths[i].rows) + " rows twice");
  std::unique_ptr<LayerStep> step(new LayerStep(std::move(memory), std::move(widths)));
  if (Status s = step->prepare(); !s)
    return s.error();
  return step;
}

Status LayerStep::prepare() {
  Result<void *> epoch = memory_->epoch(widths_.front().launches.front()->interface().epochWords);
  if (!epoch)
    return epoch.error();
  internal_.insert(kEpochArgument);
  // One meaning a name: where two launches (of any width) name a region the
  // caller binds, it is the same tensor (format and columns; rows follow
  // the width).
  std::map<std::string, std::pair<const RegionSpec *, std::string>> callerRegions;
  for (Width &width : widths_) {
    for (size_t i = 0; i < width.launches.size(); ++i) {
      Launcher &launcher = *width.launches[i];
      const LaunchInterface &launch = launcher.interface();
      if (Status s = launcher.bind(kEpochArgument, *epoch); !s)
        return s;
      // The rank's layers run one after another on one epoch buffer: one
      // scratch buffer a kernel and width serves them all.
      if (const int64_t bytes = launcher.layout().workspaceBytes; bytes > 0) {
        Result<void *> scratch = memory_->scratch(launch.kernelName, width.rows, bytes);
        if (!scratch)
          return scratch.error();
        if (Status s = launcher.shareScratch(*scratch); !s)
          return s;
      }
      for (const RegionSpec &region : launch.arguments) {
        if (callerBinds(region)) {
          auto [seen, fresh] = callerRegions.insert({region.name, {&region, launch.kernelName}});
          const RegionSpec &other = *seen->second.first;
          if (!fresh && (other.format != region.format || other.cols != region.cols ||
                         other.kind != region.kind))
            return makeError("region '" + region.name + "' is " + region.kind + " " +
                             shapeOf(region) + " in kernel " + launch.kernelName + " and " +
                             other.kind + " " + shapeOf(other) + " in kernel " +
                             seen->second.second + ": the caller binds a name once for the "
                             "whole layer step");
          continue;
        }
        if (region.handedFromKernel.empty()) {
          internal_.insert(region.name);
          Result<void *> buffer =
              memory_->internal(launch.kernelName, region.name, width.rows, region.bytes);
          if (!buffer)
            return buffer.error();
          if (Status s = launcher.bind(region.name, *buffer); !s)
            return s;
          continue;
        }
        // A hand-over: the producer ran earlier in this step.
        auto producer = std::find_if(
            width.launches.begin(), width.launches.begin() + i,
            [&](const auto &l) { return l->interface().kernelName == region.handedFromKernel; });
        if (producer == width.launches.begin() + i)
          return makeError("kernel " + launch.kernelName + "'s input '" + region.name +
                           "' is handed from kernel " + region.handedFromKernel +
                           ", which does not run before it in the step of " +
                           std::to_string(width.rows) + " rows");
        const RegionSpec *source = (*producer)->interface().argument(region.handedFromRegion);
        if (!source || source->kind != "output" || source->format != region.format ||
            source->rows != region.rows || source->cols != region.cols ||
            source->bytes != region.bytes || source->rowsAtLaunch != region.rowsAtLaunch)
          return makeError("kernel " + launch.kernelName + "'s input '" + region.name + "' (" +
                           shapeOf(region) + ") is handed from kernel " +
                           region.handedFromKernel + "'s output '" + region.handedFromRegion +
                           "', which " +
                           (source ? "is " + source->kind + " " + shapeOf(*source)
                                   : std::string("it does not have")));
        // Handed from a step result: bound with the caller's tensor (bind),
        // under the producer's name.
        if (source->stepResult) {
          if (region.name != source->name)
            internal_.insert(region.name);
          continue;
        }
        internal_.insert(region.name);
        Result<void *> buffer = memory_->internal(region.handedFromKernel, source->name,
                                                  width.rows, source->bytes);
        if (!buffer)
          return buffer.error();
        if (Status s = launcher.bind(region.name, *buffer); !s)
          return s;
      }
    }
  }
  for (const auto &[name, region] : callerRegions)
    if (internal_.count(name))
      return makeError("region '" + name + "' is bound by the caller in kernel " +
                       region.second + " and lives inside the step in another launch");
  return Status::success();
}

Status LayerStep::setRows(const std::string &region, int64_t rows) {
  bool found = false;
  for (Width &width : widths_)
    for (auto &launcher : width.launches)
      for (const RegionSpec &spec : launcher->interface().arguments)
        if (spec.name == region || (spec.handedFromRegion == region && spec.rowsAtLaunch)) {
          if (Status s = launcher->setRows(spec.name, rows); !s)
            return s;
          found = true;
        }
  if (!found)
    return makeError("no launch of this layer step has a region '" + region + "'");
  return Status::success();
}

Status LayerStep::setCols(const std::string &region, int64_t cols) {
  // Every launch's check first, so that a refusal changes nothing.
  std::vector<Launcher *> takers;
  for (Width &width : widths_)
    for (auto &launcher : width.launches)
      if (launcher->interface().argument(region))
        takers.push_back(launcher.get());
  if (takers.empty())
    return makeError("no launch of this layer step has a region '" + region + "'");
  for (Launcher *launcher : takers)
    if (Status s = launcher->checkCols(region, cols); !s)
      return s;
  for (Launcher *launcher : takers)
    if (Status s = launcher->setCols(region, cols); !s)
      return s;
  return Status::success();
}

std::vector<std::pair<Launcher *, std::string>>
LayerStep::bindingsOf(const std::string &region) const {
  std::vector<std::pair<Launcher *, std::string>> bindings;
  for (const Width &width : widths_)
    for (const auto &launcher : width.launches) {
      if (launcher->layout().slot(region))
        bindings.emplace_back(launcher.get(), region);
      // Inputs handed from a step result the caller binds take its tensor
      // (a name the caller binds is nowhere step-internal: prepare).
      for (const RegionSpec &input : launcher->interface().arguments)
        if (input.handedFromRegion == region)
          bindings.emplace_back(launcher.get(), input.name);
    }
  return bindings;
}

Status LayerStep::bindBuffer(const std::string &region, void *devicePointer, int64_t bytes) {
  // Every launch's check first, so that a refusal binds nothing; a region
  // sized at launch gets the rows the buffer holds.
  int64_t rows = 0;
  if (!internal_.count(region))
    for (const auto &[launcher, name] : bindingsOf(region)) {
      Result<int64_t> held = launcher->rowsInBuffer(name, bytes);
      if (!held)
        return held.error();
      rows = std::max(rows, *held);
    }
  // Each launcher keeps the size too (setCols checks against it).
  if (Status s = bindEach(region, devicePointer, &bytes); !s)
    return s;
  return rows > 0 ? setRows(region, rows) : Status::success();
}

Status LayerStep::bind(const std::string &region, void *devicePointer) {
  return bindEach(region, devicePointer, nullptr);
}

Status LayerStep::bindEach(const std::string &region, void *devicePointer,
                           const int64_t *bytes) {
  if (internal_.count(region))
    return makeError("region '" + region +
                     "' belongs to the layer step (the epoch buffer, a hand-over between its "
                     "launches or an output that lives only inside the step): it cannot be bound");
  bool found = false;
  for (const auto &[launcher, name] : bindingsOf(region)) {
    if (Status s = bytes ? launcher->bindBuffer(name, devicePointer, *bytes)
                         : launcher->bind(name, devicePointer);
        !s)
      return s;
    found = found || name == region;
  }
  if (!found) {
    std::vector<std::string> kernels;
    for (auto &launcher : widths_.front().launches)
      kernels.push_back(launcher->interface().kernelName);
    return makeError("no launch of this layer step (" + join(kernels) + ") has a region '" +
                     region + "'");
  }
  return Status::success();
}

Status LayerStep::bindRank(int rank) {
  bool found = false;
  for (Width &width : widths_)
    for (auto &launcher : width.launches)
      if (launcher->layout().slot(kRankArgument)) {
        if (Status s = launcher->bindRank(rank); !s)
          return s;
        found = true;
      }
  if (!found)
    return makeError("no launch of this layer step uses peer memory: it takes no rank");
  return Status::success();
}

std::vector<int64_t> LayerStep::widths() const {
  std::vector<int64_t> rows;
  for (const Width &width : widths_)
    rows.push_back(width.rows);
  return rows;
}

Status LayerStep::run(int64_t rows, void *stream) {
  auto width = std::find_if(widths_.begin(), widths_.end(),
                            [&](const Width &w) { return w.rows == rows; });
  if (width == widths_.end()) {
    std::vector<std::string> known;
    for (int64_t w : widths())
      known.push_back(std::to_string(w));
    return makeError("this layer step has no step width of " + std::to_string(rows) +
                     " rows (its widths: " + join(known) + ")");
  }
  // Nothing launches unless everything can: a step cut in half would leave
  // the epoch between K1 and K2.
  for (auto &launcher : width->launches)
    if (std::vector<std::string> missing = launcher->unbound(); !missing.empty())
      return makeError("kernel " + launcher->interface().kernelName + " of the step of " +
                       std::to_string(rows) + " rows has unbound arguments: " + join(missing));
  lastRun_ = &*width;
  for (auto &launcher : width->launches)
    if (Status s = launcher->launch(stream); !s)
      return makeError("kernel " + launcher->interface().kernelName + ": " + s.error().message);
  return Status::success();
}

Status LayerStep::setWaitBudget(uint32_t microseconds) {
  return widths_.front().launches.front()->setWaitBudget(microseconds);
}

Status LayerStep::checkWaits(void *stream) {
  const Width &width = lastRun_ ? *lastRun_ : widths_.front();
  Result<std::optional<WaitFault>> fault = width.launches.front()->waitFault(stream);
  if (!fault)
    return fault.error();
  if (!*fault)
    return Status::success();
  // Every launch shares the epoch buffer and so the record; its expected
  // tag (2e + step tag) says which launch of the step waited.
  const int64_t stepTag = (*fault)->expectedTag % 2 == 1 ? 1 : 2;
  const LaunchInterface *waited = &width.launches.front()->interface();
  for (auto &launcher : width.launches)
    if (launcher->interface().stepTag == stepTag)
      waited = &launcher->interface();
  return makeError(describeWaitFault(**fault, *waited));
}

Status LayerStep::reset() {
  if (Status s = memory_->zeroEpoch(); !s)
    return s;
  for (Width &width : widths_)
    for (auto &launcher : width.launches)
      if (Status s = launcher->resetScratch(); !s)
        return s;
  return Status::success();
}
