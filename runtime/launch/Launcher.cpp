//===- Launcher.cpp - load a code object and launch it on a stream --------===//
#include "monodc/runtime/Launcher.h"
#include "monodc/runtime/WaitFault.h"

using namespace monodc::runtime;

Result<std::unique_ptr<Launcher>> Launcher::create(std::shared_ptr<DeviceRuntime> runtime,
                                                   const std::vector<char> &codeObject,
                                                   const LaunchInterface &interface,
                                                   const ArgumentLayout &layout, int device,
                                                   int ranksOnDevice) {
  if (ranksOnDevice < 1)
    return makeError("a launcher needs at least 1 rank on its device, got " +
                     std::to_string(ranksOnDevice));
  if (Status s = runtime->initialize(); !s)
    return s.error();
  if (Status s = runtime->setDevice(device); !s)
    return s.error();
  std::unique_ptr<Launcher> launcher(new Launcher(runtime, interface, layout, device));
  Result<void *> module = runtime->loadModule(codeObject);
  if (!module)
    return module.error();
  launcher->module_ = *module;
  Result<void *> function = runtime->function(*module, interface.kernelName);
  if (!function)
    return function.error();
  launcher->function_ = *function;
  // A region whose columns are given at launch has the build's until set.
  for (const RegionSpec &region : interface.arguments)
    if (region.colsAtLaunch)
      launcher->bound_[region.name + kColsSuffix] = static_cast<uint64_t>(region.cols);
  if (Status s = runtime->allowDynamicShared(*function, interface.dynamicSharedBytes); !s)
    return s.error();

  Result<int> units = runtime->computeUnits(device);
  if (!units)
    return units.error();
  Result<int> perUnit = runtime->residentBlocksPerUnit(*function, static_cast<int>(interface.block),
                                                       interface.dynamicSharedBytes);
  if (!perUnit)
    return perUnit.error();
  const int64_t resident = int64_t(*units) * *perUnit, needed = interface.grid * ranksOnDevice;
  if (resident < needed)
    return makeError("device " + std::to_string(device) + " holds " + std::to_string(resident) +
                     " resident CTAs of kernel " + interface.kernelName + " (" +
                     std::to_string(*units) + " compute units x " + std::to_string(*perUnit) +
                     "), fewer than " +
                     (ranksOnDevice == 1
                          ? "its persistent grid of " + std::to_string(interface.grid)
                          : std::to_string(ranksOnDevice) + " ranks' persistent grids of " +
                                std::to_string(interface.grid) + " (" + std::to_string(needed) +
                                ")"));

  if (layout.workspaceBytes == 0)
    return launcher;
  Result<void *> workspace = runtime->allocate(static_cast<size_t>(layout.workspaceBytes));
  if (!workspace)
    return workspace.error();
  launcher->workspace_ = *workspace;
  if (Status s = runtime->zero(*workspace, static_cast<size_t>(layout.workspaceBytes)); !s)
    return s.error();
  return launcher;
}

Launcher::~Launcher() {
  if (workspace_ && ownsWorkspace_)
    runtime_->release(workspace_);
  if (module_)
    runtime_->unloadModule(module_);
}

Status Launcher::bind(const std::string &region, void *devicePointer) {
  if (Status s = checkBind(region, devicePointer); !s)
    return s;
  bound_[region] = reinterpret_cast<uint64_t>(devicePointer);
  boundBytes_.erase(region); // a size not known: setCols trusts the caller
  return Status::success();
}

Status Launcher::checkBind(const std::string &region, void *devicePointer) const {
  const ArgumentSlot *slot = layout_.slot(region);
  if (!slot)
    return makeError("kernel " + interface_.kernelName + " has no region '" + region + "'");
  if (slot->launcherOwned)
    return makeError("the " + region + " buffer belongs to the launcher and cannot be bound");
  if (slot->kind == "rank")
    return makeError("the rank (" + region + ") is a number, not memory: bind it with bindRank");
  if (slot->kind == "rows")
    return makeError("'" + region + "' is the row count of region '" + slot->region +
                     "', a number, not memory: set it with setRows");
  if (slot->kind == "cols")
    return makeError("'" + region + "' is the column count of region '" + slot->region +
                     "', a number, not memory: set it with setCols");
  if (!devicePointer)
    return makeError("region '" + region + "' cannot be bound to a null pointer");
  return Status::success();
}

Result<int64_t> Launcher::rowsInBuffer(const std::string &region, int64_t bytes) const {
  const ArgumentSlot *slot = layout_.slot(region);
  if (!slot)
    return makeError("kernel " + interface_.kernelName + " has no region '" + region + "'");
  const RegionSpec *spec = interface_.argument(region);
  if (spec && spec->rowsAtLaunch) {
    const int64_t rowBytes = spec->rowBytes();
    if (rowBytes <= 0 || bytes < rowBytes || bytes % rowBytes != 0)
      return makeError("region '" + region + "' of kernel " + interface_.kernelName +
                       " is sized at launch in rows of " + std::to_string(rowBytes) +
                       " bytes; a buffer of " + std::to_string(bytes) +
                       " bytes is not a whole number of them");
    const int64_t rows = bytes / rowBytes;
    if (Status s = checkRows(region, rows); !s)
      return s.error();
    return rows;
  }
  int64_t needed = slot->bytes;
  std::string shape;
  if (spec && spec->colsAtLaunch) {
    const auto cols = int64_t(bound_.at(region + kColsSuffix));
    Result<int64_t> atCols = bytesAtCols(*spec, cols);
    if (!atCols)
      return atCols.error();
    needed = *atCols;
    shape = " (" + std::to_string(spec->rows) + " rows of " + std::to_string(cols) + " columns)";
  }
  if (bytes < needed)
    return makeError("region '" + region + "' of kernel " + interface_.kernelName + " needs " +
                     std::to_string(needed) + " bytes" + shape + "; a buffer of " +
                     std::to_string(bytes) + " bytes is too small");
  return int64_t(0);
}

Result<int64_t> Launcher::bytesAtCols(const RegionSpec &spec, int64_t cols) const {
  if (cols < 1 || cols > kMaxLaunchRows)
    return makeError("region '" + spec.name + "' of kernel " + interface_.kernelName +
                     " cannot have " + std::to_string(cols) + " columns (1 .. " +
                     std::to_string(kMaxLaunchRows) + ")");
  const int64_t elementBytes = spec.rows * spec.cols > 0 ? spec.bytes / (spec.rows * spec.cols) : 0;
  return spec.rows * cols * elementBytes;
}

Status Launcher::setCols(const std::string &region, int64_t cols) {
  if (Status s = checkCols(region, cols); !s)
    return s;
  bound_[region + kColsSuffix] = static_cast<uint64_t>(cols);
  return Status::success();
}

Status Launcher::checkCols(const std::string &region, int64_t cols) const {
  const RegionSpec *spec = interface_.argument(region);
  if (!spec)
    return makeError("kernel " + interface_.kernelName + " has no region '" + region + "'");
  if (!spec->colsAtLaunch)
    return makeError("region '" + region + "' of kernel " + interface_.kernelName + " has " +
                     std::to_string(spec->cols) + " columns fixed when it was built; only a "
                     "region whose columns are given at launch takes them from the caller");
  Result<int64_t> needed = bytesAtCols(*spec, cols);
  if (!needed)
    return needed.error();
  if (auto known = boundBytes_.find(region); known != boundBytes_.end() && known->second < *needed)
    return makeError("region '" + region + "' of kernel " + interface_.kernelName + " at " +
                     std::to_string(cols) + " columns needs " + std::to_string(*needed) +
                     " bytes; its bound buffer holds " + std::to_string(known->second));
  return Status::success();
}

Status Launcher::bindBuffer(const std::string &region, void *devicePointer, int64_t bytes) {
  if (Status s = checkBind(region, devicePointer); !s)
    return s;
  Result<int64_t> rows = rowsInBuffer(region, bytes);
  if (!rows)
    return rows.error();
  bound_[region] = reinterpret_cast<uint64_t>(devicePointer);
  boundBytes_[region] = bytes;
  if (*rows > 0)
    bound_[region + kRowsSuffix] = static_cast<uint64_t>(*rows);
  return Status::success();
}

Status Launcher::bindRank(int rank) {
  if (!layout_.slot(kRankArgument))
    return makeError("kernel " + interface_.kernelName +
                     " uses no peer memory and takes no rank");
  if (rank < 0 || rank >= interface_.ranks)
    return makeError("rank " + std::to_string(rank) + " is not one of kernel " +
                     interface_.kernelName + "'s ranks 0.." + std::to_string(interface_.ranks - 1));
  bound_[kRankArgument] = static_cast<uint64_t>(rank);
  return Status::success();
}

Status Launcher::setRows(const std::string &region, int64_t rows) {
  if (Status s = checkRows(region, rows); !s)
    return s;
  bound_[region + kRowsSuffix] = static_cast<uint64_t>(rows);
  return Status::success();
}

Status Launcher::checkRows(const std::string &region, int64_t rows) const {
  const RegionSpec *spec = interface_.argument(region);
  if (!spec)
    return makeError("kernel " + interface_.kernelName + " has no region '" + region + "'");
  if (!spec->rowsAtLaunch)
    return makeError("region '" + region + "' of kernel " + interface_.kernelName + " has " +
                     std::to_string(spec->rows) + " rows fixed when it was built; only a "
                     "region sized at launch takes its rows from the caller");
  if (rows < 1 || rows > kMaxLaunchRows)
    return makeError("region '" + region + "' of kernel " + interface_.kernelName + " cannot have " +
                     std::to_string(rows) + " rows (1 .. " + std::to_string(kMaxLaunchRows) + ")");
  // The indices that count its rows stay exact in the kernels' f32.
  for (const IndexSpec &index : interface_.indexBounds) {
    const int64_t perRow = index.bound / spec->rows;
    if (index.rowsOf == region && rows > kMaxLaunchRows / perRow)
      return makeError("region '" + region + "' of kernel " + interface_.kernelName +
                       " cannot have " + std::to_string(rows) + " rows: its index input '" +
                       index.name + "' counts " + std::to_string(perRow) + " a row, and " +
                       std::to_string(rows * perRow) + " is past 2^24");
  }
  return Status::success();
}

Status Launcher::launch(void *stream) {
  Result<std::vector<uint8_t>> kernarg =
      packArguments(layout_, bound_, reinterpret_cast<uint64_t>(workspace_));
  if (!kernarg)
    return kernarg.error();
  if (Status s = runtime_->setDevice(device_); !s)
    return s;
  return runtime_->launch(function_, static_cast<unsigned>(interface_.grid),
                          static_cast<unsigned>(interface_.block), interface_.dynamicSharedBytes,
                          stream, *kernarg);
}

namespace {
/// The bound epoch buffer's wait-fault record, or an error naming `what`.
Result<char *> faultRecord(const std::map<std::string, uint64_t> &bound,
                           const LaunchInterface &interface, const char *what) {
  auto epoch = bound.find(kEpochArgument);
  if (epoch == bound.end())
    return makeError(std::string(what) + " needs the epoch buffer (" + kEpochArgument +
                     ") bound first");
  return reinterpret_cast<char *>(epoch->second) + waitFaultOffsetBytes(interface.grid);
}
} // namespace

Status Launcher::setWaitBudget(uint32_t microseconds) {
  Result<char *> record = faultRecord(bound_, interface_, "setting the wait budget");
  if (!record)
    return record.error();
  if (Status s = runtime_->setDevice(device_); !s)
    return s;
  return runtime_->copyToDevice(*record + 4 * MONO_FAULT_BUDGET_US, &microseconds,
                                sizeof microseconds);
}

Result<std::optional<WaitFault>> Launcher::waitFault(void *stream) {
  Result<char *> record = faultRecord(bound_, interface_, "checking the waits");
  if (!record)
    return record.error();
  if (Status s = runtime_->setDevice(device_); !s)
    return s.error();
  if (Status s = runtime_->synchronize(stream); !s)
    return s.error();
  WaitFaultWords words{};
  if (Status s = runtime_->copyToHost(words.data(), *record, sizeof words); !s)
    return s.error();
  return readWaitFault(words);
}

Status Launcher::checkWaits(void *stream) {
  Result<std::optional<WaitFault>> fault = waitFault(stream);
  if (!fault)
    return fault.error();
  if (*fault)
    return makeError(describeWaitFault(**fault, interface_));
  return Status::success();
}

Status Launcher::resetScratch() {
  if (!workspace_)
    return Status::success();
  if (Status s = runtime_->setDevice(device_); !s)
    return s;
  return runtime_->zero(workspace_, static_cast<size_t>(layout_.workspaceBytes));
}

std::vector<std::string> Launcher::unbound() const {
  std::vector<std::string> names;
  for (const ArgumentSlot &slot : layout_.slots)
    if (!slot.launcherOwned && !bound_.count(slot.name))
      names.push_back(slot.name);
  return names;
}

Status Launcher::shareScratch(void *workspace) {
  if (layout_.workspaceBytes == 0)
    return Status::success();
  if (!workspace)
    return makeError("kernel " + interface_.kernelName + " cannot share a null scratch buffer");
  if (workspace_ && ownsWorkspace_)
    runtime_->release(workspace_);
  workspace_ = workspace;
  ownsWorkspace_ = false;
  return Status::success();
}
