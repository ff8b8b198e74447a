//===- CApi.cpp - the C ABI of the monodc runtime -------------------------===//
#include "monodc/runtime/CApiHandles.h"

#include "monodc/runtime/CudaDriver.h"
#include "monodc/runtime/Eligibility.h"
#include "monodc/runtime/HipRuntime.h"
#include "monodc/runtime/Launcher.h"
#include "monodc/runtime/LayerStep.h"
#include "monodc/runtime/PeerExchange.h"
#include "monodc/runtime/PeerGroup.h"
#include "monodc/runtime/StepWidths.h"

#include <algorithm>
#include <string_view>

using namespace monodc;
using namespace monodc::runtime;
using monodc::capi::toError;

struct monodc_launcher {
  std::unique_ptr<Launcher> launcher;
};

struct monodc_layer_step {
  std::shared_ptr<monodc::runtime::StepMemory> memory;
  std::unique_ptr<monodc::runtime::LayerStep> step;
};

struct monodc_peer_group {
  std::unique_ptr<PeerGroup> group;
};

namespace {

// A kernel handle is the address of the Kernel, which its session owns.
const Kernel &asKernel(const monodc_kernel *kernel) {
  return *reinterpret_cast<const Kernel *>(kernel);
}

const monodc_kernel *asHandle(const Kernel &kernel) {
  return reinterpret_cast<const monodc_kernel *>(&kernel);
}

// NVIDIA code objects are cubins for the CUDA driver; the rest, HIP's.
Result<std::shared_ptr<DeviceRuntime>> runtimeFor(const Kernel &k) {
  const Target *target = findTarget(k.key.arch);
  if (target && target->isNvidia()) {
    Result<std::shared_ptr<CudaDriver>> cuda = CudaDriver::load();
    if (!cuda)
      return cuda.error();
    return std::shared_ptr<DeviceRuntime>(*cuda);
  }
  Result<std::shared_ptr<HipRuntime>> hip = HipRuntime::load();
  if (!hip)
    return hip.error();
  return std::shared_ptr<DeviceRuntime>(*hip);
}

monodc_error *check(const Status &status) {
  return status ? nullptr : toError(status.message());
}

monodc_error *deliver(const Result<std::shared_ptr<const Kernel>> &kernel,
                      const monodc_kernel **out) {
  if (!kernel)
    return toError(kernel.message());
  *out = asHandle(**kernel);
  return nullptr;
}

/// The C description of a deployment as the runtime's.
Deployment toDeployment(const monodc_deployment &d) {
  Deployment out;
  out.model = d.model ? d.model : "";
  out.arch = d.arch ? d.arch : "";
  for (std::string_view list = d.built_archs ? d.built_archs : ""; !list.empty();) {
    const size_t comma = list.find(',');
    if (std::string_view arch = list.substr(0, comma); !arch.empty())
      out.builtArchs.emplace_back(arch);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  out.tp = d.tp;
  out.expertParallel = d.expert_parallel == 0 ? 1 : d.expert_parallel;
  out.dataParallel = d.data_parallel == 0 ? 1 : d.data_parallel;
  if (d.routed_weights)
    out.routedWeights = d.routed_weights;
  out.computeUnits = d.compute_units;
  out.grid = d.grid;
  out.kvCachePages = d.kv_cache_pages;
  out.maxPositions = d.max_positions;
  return out;
}

} // namespace

monodc_error *monodc::capi::openSession(const char *cacheDir,
                                        std::shared_ptr<KernelBuilder> builder,
                                        monodc_session **session) {
  if (!session)
    return toError("monodc_session_open: session is null");
  SessionOptions options;
  options.cacheDirectory = cacheDir ? cacheDir : "";
  options.builder = std::move(builder);
  *session = new monodc_session{std::make_unique<Session>(std::move(options))};
  return nullptr;
}

extern "C" {

const char *monodc_error_message(const monodc_error *error) {
  return error ? error->message.c_str() : "";
}

void monodc_error_free(monodc_error *error) { delete error; }

monodc_error *monodc_session_open(const char *cache_dir, monodc_session **session) {
  return capi::openSession(cache_dir, nullptr, session);
}

void monodc_session_close(monodc_session *session) { delete session; }

monodc_error *monodc_session_kernel(monodc_session *session, const char *request,
                                    const monodc_kernel **kernel) {
  if (!session || !request || !kernel)
    return toError("monodc_session_kernel: a null argument");
  Result<KernelRequest> parsed = KernelRequest::parse(request);
  if (!parsed)
    return toError(parsed.message());
  return deliver(session->session->kernel(*parsed), kernel);
}

monodc_error *monodc_session_kernel_by_key(monodc_session *session, const char *key_text,
                                           const monodc_kernel **kernel) {
  if (!session || !key_text || !kernel)
    return toError("monodc_session_kernel_by_key: a null argument");
  Result<BuildKey> key = BuildKey::parse(key_text);
  if (!key)
    return toError(key.message());
  return deliver(session->session->kernel(*key), kernel);
}

const char *monodc_kernel_key(const monodc_kernel *kernel) {
  if (!kernel)
    return "";
  return asKernel(kernel).entry->keyText.c_str();
}

const char *monodc_kernel_symbol(const monodc_kernel *kernel) {
  if (!kernel)
    return "";
  return asKernel(kernel).symbol().c_str();
}

const void *monodc_kernel_code_object(const monodc_kernel *kernel, size_t *size) {
  if (!kernel) {
    if (size)
      *size = 0;
    return nullptr;
  }
  const std::vector<char> &bytes = asKernel(kernel).codeObject();
  if (size)
    *size = bytes.size();
  return bytes.data();
}

monodc_error *monodc_deployment_check(const monodc_deployment *deployment) {
  if (!deployment)
    return toError("monodc_deployment_check: deployment is null");
  return check(checkDeployment(toDeployment(*deployment)));
}

monodc_error *monodc_eligibility(const monodc_deployment *deployment, int64_t layer,
                                 const monodc_step_facts *step, monodc_eligibility_result *out) {
  if (!deployment || !step || !out)
    return toError("monodc_eligibility: a null argument");
  StepFacts facts;
  facts.rows = step->rows;
  facts.uniformDecode = step->uniform_decode != 0;
  facts.piecewiseCapture = step->piecewise_capture != 0;
  facts.causal = step->causal != 0;
  facts.metadata = step->metadata != 0;
  facts.maxPosition = step->max_position;
  Result<Eligibility> e = eligibility(toDeployment(*deployment), layer, facts);
  if (!e)
    return toError(e.message());
  out->runs = e->runs ? 1 : 0;
  out->launches = !e->runs ? "" : e->launches.size() == 2 ? "k1+k2" : "ffn";
  out->ratio = e->ratio;
  out->width = e->width;
  const size_t n = std::min(e->reason.size(), sizeof(out->reason) - 1);
  std::copy_n(e->reason.data(), n, out->reason);
  out->reason[n] = '\0';
  return nullptr;
}

int64_t monodc_step_width(int64_t rows) {
  return monodc::runtime::stepWidthFor(rows).value_or(0);
}

int64_t monodc_kernel_grid(const monodc_kernel *kernel) {
  return kernel ? asKernel(kernel).interface.grid : 0;
}

int64_t monodc_kernel_block(const monodc_kernel *kernel) {
  return kernel ? asKernel(kernel).interface.block : 0;
}

int64_t monodc_kernel_ranks(const monodc_kernel *kernel) {
  return kernel ? asKernel(kernel).interface.ranks : 0;
}

int64_t monodc_kernel_peer_buffer_bytes(const monodc_kernel *kernel) {
  return kernel ? asKernel(kernel).interface.peerBufferBytes() : 0;
}

monodc_error *monodc_kernel_resources_get(const monodc_kernel *kernel,
                                          monodc_kernel_resources *resources) {
  if (!kernel || !resources)
    return toError("monodc_kernel_resources_get: a null argument");
  const Kernel &k = asKernel(kernel);
  if (!k.resources)
    return toError("kernel " + k.symbol() + " (" + k.key.arch +
                   ") has no AMDGPU metadata to read resources from");
  const KernelInfo &r = *k.resources;
  *resources = {r.vgprs,    r.agprs,        r.sgprs,         r.vgprSpills,  r.sgprSpills,
                r.ldsBytes, r.scratchBytes, r.wavefrontSize, r.kernargBytes};
  return nullptr;
}

size_t monodc_kernel_argument_count(const monodc_kernel *kernel) {
  return kernel ? asKernel(kernel).arguments.slots.size() : 0;
}

monodc_error *monodc_kernel_argument_get(const monodc_kernel *kernel, size_t index,
                                         monodc_kernel_argument *argument) {
  if (!kernel || !argument)
    return toError("monodc_kernel_argument_get: a null argument");
  const ArgumentLayout &layout = asKernel(kernel).arguments;
  if (index >= layout.slots.size())
    return toError("argument " + std::to_string(index) + " out of range (the kernel has " +
                   std::to_string(layout.slots.size()) + ")");
  const ArgumentSlot &slot = layout.slots[index];
  const RegionSpec *region = asKernel(kernel).interface.argument(slot.name);
  static const std::string none;
  *argument = {slot.name.c_str(),
               slot.kind.c_str(),
               slot.offset,
               slot.size,
               slot.bytes,
               slot.launcherOwned ? 1 : 0,
               slot.format.c_str(),
               (region ? region->handedFromKernel : none).c_str(),
               (region ? region->handedFromRegion : none).c_str(),
               region && region->stepResult ? 1 : 0,
               region && region->rowsAtLaunch ? 1 : 0,
               region ? region->rowBytes() : 0,
               region && region->colsAtLaunch ? 1 : 0};
  return nullptr;
}

int64_t monodc_kernel_kernarg_bytes(const monodc_kernel *kernel) {
  return kernel ? asKernel(kernel).arguments.kernargBytes : 0;
}

monodc_error *monodc_launcher_create(const monodc_kernel *kernel, int device,
                                     monodc_launcher **launcher) {
  if (!kernel || !launcher)
    return toError("monodc_launcher_create: a null argument");
  return monodc_launcher_create_shared(kernel, device, 1, launcher);
}

monodc_error *monodc_launcher_create_shared(const monodc_kernel *kernel, int device,
                                            int ranks_on_device,
                                            monodc_launcher **launcher) {
  if (!kernel || !launcher)
    return toError("monodc_launcher_create_shared: a null argument");
  if (ranks_on_device < 1)
    return toError("monodc_launcher_create_shared: ranks_on_device must be at least 1, got " +
                   std::to_string(ranks_on_device));
  const Kernel &k = asKernel(kernel);
  Result<std::shared_ptr<DeviceRuntime>> runtime = runtimeFor(k);
  if (!runtime)
    return toError(runtime.message());
  auto created = Launcher::create(*runtime, k.codeObject(), k.interface, k.arguments, device,
                                  ranks_on_device);
  if (!created)
    return toError(created.message());
  *launcher = new monodc_launcher{std::move(*created)};
  return nullptr;
}

monodc_error *monodc_launcher_bind(monodc_launcher *launcher, const char *region,
                                   void *device_pointer) {
  if (!launcher || !region)
    return toError("monodc_launcher_bind: a null argument");
  return check(launcher->launcher->bind(region, device_pointer));
}

monodc_error *monodc_launcher_bind_buffer(monodc_launcher *launcher, const char *region,
                                          void *device_pointer, int64_t bytes) {
  if (!launcher || !region)
    return toError("monodc_launcher_bind_buffer: a null argument");
  return check(launcher->launcher->bindBuffer(region, device_pointer, bytes));
}

monodc_error *monodc_launcher_bind_rank(monodc_launcher *launcher, int rank) {
  if (!launcher)
    return toError("monodc_launcher_bind_rank: a null launcher");
  return check(launcher->launcher->bindRank(rank));
}

monodc_error *monodc_launcher_set_rows(monodc_launcher *launcher, const char *region,
                                       int64_t rows) {
  if (!launcher || !region)
    return toError("monodc_launcher_set_rows: a null argument");
  return check(launcher->launcher->setRows(region, rows));
}

monodc_error *monodc_launcher_set_cols(monodc_launcher *launcher, const char *region,
                                       int64_t cols) {
  if (!launcher || !region)
    return toError("monodc_launcher_set_cols: a null argument");
  return check(launcher->launcher->setCols(region, cols));
}

monodc_error *monodc_launcher_launch(monodc_launcher *launcher, void *stream) {
  if (!launcher)
    return toError("monodc_launcher_launch: a null launcher");
  return check(launcher->launcher->launch(stream));
}

monodc_error *monodc_launcher_set_wait_budget(monodc_launcher *launcher, uint32_t microseconds) {
  if (!launcher)
    return toError("monodc_launcher_set_wait_budget: a null launcher");
  return check(launcher->launcher->setWaitBudget(microseconds));
}

monodc_error *monodc_launcher_check_waits(monodc_launcher *launcher, void *stream) {
  if (!launcher)
    return toError("monodc_launcher_check_waits: a null launcher");
  return check(launcher->launcher->checkWaits(stream));
}

monodc_error *monodc_launcher_reset_scratch(monodc_launcher *launcher) {
  if (!launcher)
    return toError("monodc_launcher_reset_scratch: a null launcher");
  return check(launcher->launcher->resetScratch());
}

void monodc_launcher_destroy(monodc_launcher *launcher) { delete launcher; }

monodc_error *monodc_peer_group_create(const monodc_kernel *kernel, int device, int rank,
                                       monodc_peer_group **group) {
  if (!kernel || !group)
    return toError("monodc_peer_group_create: a null argument");
  const Kernel &k = asKernel(kernel);
  if (k.interface.peerSlotBytes <= 0)
    return toError("monodc_peer_group_create: kernel " + k.interface.kernelName +
                   " uses no peer memory");
  Result<std::shared_ptr<DeviceRuntime>> runtime = runtimeFor(k);
  if (!runtime)
    return toError(runtime.message());
  auto created = PeerGroup::create(*runtime, device, rank, static_cast<int>(k.interface.ranks),
                                   k.interface.peerBufferBytes());
  if (!created)
    return toError(created.message());
  *group = new monodc_peer_group{std::move(*created)};
  return nullptr;
}

monodc_error *monodc_peer_groups_create_local(const monodc_kernel *kernel, const int *devices,
                                              int ranks, monodc_peer_group **groups) {
  if (!kernel || !devices || !groups || ranks < 1)
    return toError("monodc_peer_groups_create_local: a null argument or no ranks");
  const Kernel &k = asKernel(kernel);
  if (k.interface.peerSlotBytes <= 0)
    return toError("monodc_peer_groups_create_local: kernel " + k.interface.kernelName +
                   " uses no peer memory");
  if (ranks != k.interface.ranks)
    return toError("monodc_peer_groups_create_local: kernel " + k.interface.kernelName + " has " +
                   std::to_string(k.interface.ranks) + " ranks, and " + std::to_string(ranks) +
                   " devices were given");
  Result<std::shared_ptr<DeviceRuntime>> runtime = runtimeFor(k);
  if (!runtime)
    return toError(runtime.message());
  auto created = PeerGroup::createLocal(*runtime, std::vector<int>(devices, devices + ranks),
                                        k.interface.peerBufferBytes());
  if (!created)
    return toError(created.message());
  for (int r = 0; r < ranks; ++r)
    groups[r] = new monodc_peer_group{std::move((*created)[r])};
  return nullptr;
}

size_t monodc_peer_group_handle(const monodc_peer_group *group, const uint8_t **bytes) {
  if (!group || !bytes)
    return 0;
  *bytes = group->group->handle().data();
  return group->group->handle().size();
}

monodc_error *monodc_peer_group_connect(monodc_peer_group *group, const uint8_t *const *handles,
                                        const size_t *sizes, int count) {
  if (!group || (count > 0 && (!handles || !sizes)) || count < 0)
    return toError("monodc_peer_group_connect: a null argument or a negative count");
  std::vector<std::vector<uint8_t>> all;
  for (int r = 0; r < count; ++r) {
    if (!handles[r])
      return toError("monodc_peer_group_connect: handle " + std::to_string(r) + " is null");
    all.emplace_back(handles[r], handles[r] + sizes[r]);
  }
  return check(group->group->connect(all));
}

monodc_error *monodc_peer_group_exchange(monodc_peer_group *group, const char *directory,
                                         int timeout_ms) {
  if (!group || !directory)
    return toError("monodc_peer_group_exchange: a null argument");
  auto handles =
      exchangePeerHandles(directory, group->group->rank(), group->group->ranks(),
                          group->group->handle(), std::chrono::milliseconds(timeout_ms));
  if (!handles)
    return toError(handles.message());
  return check(group->group->connect(*handles));
}

void *monodc_peer_group_table(const monodc_peer_group *group) {
  return group ? group->group->table() : nullptr;
}

void monodc_peer_group_destroy(monodc_peer_group *group) { delete group; }

} // extern "C"

monodc_error *monodc_layer_step_create(const monodc_kernel *const *kernels, const size_t *counts,
                                       size_t widths, int device, int ranks_on_device,
                                       const monodc_layer_step *same_rank,
                                       monodc_layer_step **step) {
  if (!kernels || !counts || !step)
    return toError("monodc_layer_step_create: a null argument");
  if (widths == 0)
    return toError("monodc_layer_step_create: a layer step needs at least one step width");
  if (ranks_on_device < 1)
    return toError("monodc_layer_step_create: ranks_on_device must be at least 1, got " +
                   std::to_string(ranks_on_device));
  const Kernel *first = kernels[0] ? &asKernel(kernels[0]) : nullptr;
  if (!first)
    return toError("monodc_layer_step_create: kernel 0 is null");
  std::shared_ptr<StepMemory> memory = same_rank ? same_rank->memory : nullptr;
  if (!memory) {
    Result<std::shared_ptr<DeviceRuntime>> runtime = runtimeFor(*first);
    if (!runtime)
      return toError(runtime.message());
    memory = std::make_shared<StepMemory>(*runtime, device);
  }
  if (memory->device() != device)
    return toError("monodc_layer_step_create: device " + std::to_string(device) +
                   ", and the rank's other layer steps are on device " +
                   std::to_string(memory->device()));
  std::vector<std::vector<std::unique_ptr<Launcher>>> launchers(widths);
  size_t next = 0;
  for (size_t w = 0; w < widths; ++w)
    for (size_t i = 0; i < counts[w]; ++i, ++next) {
      if (!kernels[next])
        return toError("monodc_layer_step_create: kernel " + std::to_string(next) + " is null");
      const Kernel &k = asKernel(kernels[next]);
      if (k.key.arch != first->key.arch)
        return toError("monodc_layer_step_create: kernel " + k.interface.kernelName +
                       " is built for " + k.key.arch + ", and the step's first for " +
                       first->key.arch);
      auto created = Launcher::create(memory->runtime(), k.codeObject(), k.interface, k.arguments,
                                      device, ranks_on_device);
      if (!created)
        return toError(created.message());
      launchers[w].push_back(std::move(*created));
    }
  auto created = LayerStep::create(memory, std::move(launchers));
  if (!created)
    return toError(created.message());
  *step = new monodc_layer_step{memory, std::move(*created)};
  return nullptr;
}

monodc_error *monodc_layer_step_bind(monodc_layer_step *step, const char *region,
                                     void *device_pointer) {
  if (!step || !region)
    return toError("monodc_layer_step_bind: a null argument");
  return check(step->step->bind(region, device_pointer));
}

monodc_error *monodc_layer_step_bind_buffer(monodc_layer_step *step, const char *region,
                                            void *device_pointer, int64_t bytes) {
  if (!step || !region)
    return toError("monodc_layer_step_bind_buffer: a null argument");
  return check(step->step->bindBuffer(region, device_pointer, bytes));
}

monodc_error *monodc_layer_step_bind_rank(monodc_layer_step *step, int rank) {
  if (!step)
    return toError("monodc_layer_step_bind_rank: a null layer step");
  return check(step->step->bindRank(rank));
}

monodc_error *monodc_layer_step_set_rows(monodc_layer_step *step, const char *region,
                                         int64_t rows) {
  if (!step || !region)
    return toError("monodc_layer_step_set_rows: a null argument");
  return check(step->step->setRows(region, rows));
}

monodc_error *monodc_layer_step_set_cols(monodc_layer_step *step, const char *region,
                                         int64_t cols) {
  if (!step || !region)
    return toError("monodc_layer_step_set_cols: a null argument");
  return check(step->step->setCols(region, cols));
}

monodc_error *monodc_layer_step_run(monodc_layer_step *step, int64_t rows, void *stream) {
  if (!step)
    return toError("monodc_layer_step_run: a null layer step");
  return check(step->step->run(rows, stream));
}

monodc_error *monodc_layer_step_set_wait_budget(monodc_layer_step *step, uint32_t microseconds) {
  if (!step)
    return toError("monodc_layer_step_set_wait_budget: a null layer step");
  return check(step->step->setWaitBudget(microseconds));
}

monodc_error *monodc_layer_step_check_waits(monodc_layer_step *step, void *stream) {
  if (!step)
    return toError("monodc_layer_step_check_waits: a null layer step");
  return check(step->step->checkWaits(stream));
}

monodc_error *monodc_layer_step_reset(monodc_layer_step *step) {
  if (!step)
    return toError("monodc_layer_step_reset: a null layer step");
  return check(step->step->reset());
}

void monodc_layer_step_destroy(monodc_layer_step *step) { delete step; }
