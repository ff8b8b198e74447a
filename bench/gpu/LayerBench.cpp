// Speed of a whole decode layer on an H100 or H200: K1 then K2 of every TP rank,
// the ranks concurrently on one GPU (each with its share of the SMs, peer
// buffers in the same memory), fused against the same stages as separate
// kernels (the unfused baseline), over several layers each with its own
// weights so nothing stays in L2. Weights and inputs are synthetic values in
// their formats, filled on the GPU (one rank's routed experts alone are
// gigabytes); index inputs hold whole numbers inside their bounds.
//
//   layer_bench DIR CONFIG TP LAYERS WIDTH...
//
// BENCH_ROUTING=uniform (default) or skewed sets the router's bias
// (setRoutingBias); the experts the tokens chose are printed with the floor.
// BENCH_ROUNDS=K times every width K more times in the same process.
// BENCH_TRACE=DIR: where stage timers were emitted (`monodc build
// --stage-timers`, the .prof sources), writes each width's profiled steps,
// fused and unfused, as a Chrome/Perfetto trace, DIR/trace.tp<TP>.r<W>.json.
// K2_PREFIX=N launches only the unfused K2's first N stage kernels (then its
// _end), beside a fused K2 that bench/gpu/experiments/patch_k2_prefix.py cut to the same
// N stages: where in K2 the fused launch gains or loses, without timers.
//
// reads DIR/{k1,k2}.CONFIG.sm_90.r<W>.tp<TP>.grid<132/TP>.{hip,unfused.hip,manifest}, and
// where they are there the timed copies {prof.hip,unfused.prof.hip} with
// what each stage reads (prof.reads).
#include "ReadRate.h"
#include "RegionCodec.h"
#include "SyntheticLayer.h"

#include <cudaProfiler.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

using gpu::check;
using gpu::die;
using gpu::Manifest;
using gpu::Region;

namespace {

using gpu::alloc;

/// One launch (K1 or K2) of one rank: its kernels, buffers and parameters.
struct RankLaunch {
  Manifest manifest;
  CUfunction fused = nullptr;
  std::vector<CUfunction> stages;  // the unfused baseline, then its _end kernel
  std::map<std::string, CUdeviceptr> shared;          // inputs and outputs
  std::vector<std::map<std::string, CUdeviceptr>> weights;  // one set a layer
  CUdeviceptr scratch = 0, unfusedScratch = 0;
  std::vector<std::vector<CUdeviceptr>> values;  // per layer, fused
  std::vector<std::vector<CUdeviceptr>> unfusedValues;
  std::vector<std::vector<void *>> params, unfusedParams;
  int rank = 0;
  CUfunction profiled = nullptr;  // the fused kernel with stage timers, if emitted
  CUdeviceptr profile = 0;  // its mono_prof array: [grid][stages][kProfileWords]
  // The unfused baseline with the same timers, if emitted (then its _end).
  std::vector<CUfunction> profiledStages;
  CUdeviceptr unfusedProfile = 0;  // their mono_prof array, laid out as `profile`
  // Per stage, the argument regions it reads (.prof.reads); empty where
  // the timed build did not write them.
  std::vector<std::vector<std::string>> stageReads;
};

/// `monodc build --stage-timers`' prof.reads: "reads STAGE REGION" lines.
std::vector<std::vector<std::string>> readStageReads(const std::string &path, const Manifest &m) {
  std::vector<std::vector<std::string>> reads;
  std::ifstream in(path);
  if (!in)
    return reads;
  reads.resize(m.stages.size());
  std::string word, region;
  size_t stage = 0;
  while (in >> word >> stage >> region) {
    if (word != "reads" || stage >= reads.size())
      die(path + ": not a list of \"reads STAGE REGION\" lines of " +
          std::to_string(reads.size()) + " stages");
    reads[stage].push_back(region);
  }
  return reads;
}

bool fileExists(const std::string &path) { return std::ifstream(path).good(); }

/// The router's bias decides the routing setting. Uniform: no bias, so each
/// token's top-6 follows its own logits (synthetic values, independent
/// across tokens). Skewed: a bias of 4 on 12 experts, far above the scores'
/// spread, so every token picks 6 of those 12 and tokens share experts.
constexpr int kSkewedExperts = 12;
void setRoutingBias(CUdeviceptr bias, const Region &reg, const std::string &routing) {
  std::vector<float> values(reg.bytes / 4, 0.0f);
  if (routing == "skewed")
    for (size_t e = 0; e < values.size() && e < size_t(kSkewedExperts); ++e)
      values[e] = 4.0f;
  check(cuMemcpyHtoD(bias, values.data(), values.size() * 4), "routing bias");
}

/// A CTA's record of a stage in the profiled kernel (`monodc build
/// --stage-timers`, emit::kStageTimerWords): enter and leave (global ns),
/// then ns in polls, GEMVs, flag publishes and block-wide library calls (0
/// with --stage-timers=spans), then the tasks it ran and the task (plus
/// one) at which it left the stage skipping the rest (0: it did not).
constexpr size_t kTimedWords = 4;
constexpr size_t kProfileWords = 2 + kTimedWords + 2;

/// The earliest stage entry (global ns) of a profile.
unsigned long long firstEntry(const std::vector<unsigned long long> &p) {
  unsigned long long first = ~0ull;
  for (size_t i = 0; i < p.size(); i += kProfileWords)
    first = std::min(first, p[i]);
  return first;
}

/// Every rank's profile words of a launch (`profile`: the fused kernel's
/// mono_prof, RankLaunch::profile, or the unfused baseline's) and the
/// earliest stage entry among them.
struct RanksProfile {
  std::vector<std::vector<unsigned long long>> words;
  unsigned long long origin = ~0ull;
};
RanksProfile downloadProfiles(const std::vector<RankLaunch> &ranks, CUdeviceptr RankLaunch::*profile) {
  RanksProfile out;
  for (const RankLaunch &l : ranks) {
    std::vector<unsigned long long> p(l.manifest.grid * l.manifest.stages.size() * kProfileWords);
    check(cuMemcpyDtoH(p.data(), l.*profile, p.size() * 8), "profile");
    out.origin = std::min(out.origin, firstEntry(p));
    out.words.push_back(std::move(p));
  }
  return out;
}

/// The mono_prof array of a timed module (`monodc build --stage-timers`'s
/// `path`), checked against the manifest's grid and stages.
CUdeviceptr profileArray(CUmodule module, const Manifest &m, const std::string &path) {
  CUdeviceptr array = 0;
  size_t bytes = 0;
  check(cuModuleGetGlobal(&array, &bytes, module, "mono_prof"), "mono_prof");
  if (bytes != m.grid * m.stages.size() * kProfileWords * 8)
    gpu::die(path + ": mono_prof is " + std::to_string(bytes) + " bytes, not grid x stages x " +
             std::to_string(kProfileWords) + " words (monodc --stage-timers and layer_bench disagree)");
  return array;
}

/// The unfused baseline's kernels of a module: one a stage, then `_end`.
std::vector<CUfunction> stageKernels(CUmodule module, const Manifest &m) {
  std::vector<CUfunction> kernels;
  for (size_t s = 0; s <= m.stages.size(); ++s) {
    CUfunction f;
    std::string name = m.kernelName + (s < m.stages.size() ? "_s" + std::to_string(s) : "_end");
    check(cuModuleGetFunction(&f, module, name.c_str()), "unfused kernel");
    kernels.push_back(f);
  }
  return kernels;
}

/// When stage `s`'s first CTA entered it and its last left it, in
/// microseconds from `origin`; with `workingOnly`, of the CTAs that ran
/// one of its tasks (a CTA with none passes through, often late from an
/// earlier stage), {0, 0} when none did.
struct StageSpan {
  double enter = 0, leave = 0;
};
StageSpan stageSpan(const Manifest &m, const std::vector<unsigned long long> &p, size_t s,
                    unsigned long long origin, bool workingOnly) {
  const size_t stages = m.stages.size();
  double first = 1e30, last = 0;
  bool any = false;
  for (int64_t c = 0; c < m.grid; ++c) {
    const unsigned long long *r = &p[(c * stages + s) * kProfileWords];
    if (workingOnly && r[2 + kTimedWords] == 0)
      continue;
    any = true;
    first = std::min(first, double(r[0] - origin) / 1e3);
    last = std::max(last, double(r[1] - origin) / 1e3);
  }
  return any ? StageSpan{first, last} : StageSpan{};
}

/// Per stage of one rank's launch: how many CTAs ran its tasks, when the
/// first of them entered it and the last left it (microseconds from
/// `origin`, the earliest entry of any rank's launch, so that the ranks'
/// tables show how far apart they run; CTAs with no task of the stage pass
/// through it, often late from an earlier stage, and are left out), the
/// CTA-microseconds spent inside it, in polls, GEMVs, publishes and
/// block-wide library calls, and the busiest CTA (polls left out).
void printStageProfile(const RankLaunch &l, int rank, const std::vector<unsigned long long> &p,
                       unsigned long long origin) {
  const Manifest &m = l.manifest;
  const size_t stages = m.stages.size();
  const std::string title = m.kernelName + ", rank " + std::to_string(rank);
  std::printf("  %-24s %6s %5s %9s %9s %11s %11s %11s %11s %11s %9s\n", title.c_str(), "tasks",
              "CTAs", "enter us", "leave us", "CTA-us in", "CTA-us poll", "CTA-us gemv", "CTA-us pub",
              "CTA-us lib", "max CTA");
  for (size_t s = 0; s < stages; ++s) {
    double inside = 0, busiest = 0;
    double timed[kTimedWords] = {};
    const auto manifestTasks = static_cast<unsigned long long>(m.stages[s].tasks);
    unsigned long long tasks = 0, leftEarly = 0, firstRest = manifestTasks;
    int working = 0;
    for (int64_t c = 0; c < m.grid; ++c) {
      const unsigned long long *r = &p[(c * stages + s) * kProfileWords];
      const unsigned long long ran = r[2 + kTimedWords];
      working += ran > 0;
      tasks += ran;
      if (const unsigned long long rest = r[3 + kTimedWords]; rest > 0) {
        ++leftEarly;
        firstRest = std::min(firstRest, rest - 1);
      }
      inside += double(r[1] - r[0]) / 1e3;
      for (size_t k = 0; k < kTimedWords; ++k)
        timed[k] += double(r[2 + k]) / 1e3;
      busiest = std::max(busiest, double(r[1] - r[0] - r[2]) / 1e3);
    }
    // Each task runs once, on one CTA, up to the first that skipped the
    // rest of the stage; each CTA that left there ran one task at or after
    // that one (the one it left at), none ran the others.
    if (tasks - leftEarly != firstRest)
      gpu::die(m.kernelName + " stage " + m.stages[s].name + ": the profile counts " +
               std::to_string(tasks) + " tasks run, " + std::to_string(leftEarly) +
               " CTAs leaving at a task that skipped the rest (the first: " +
               std::to_string(firstRest) + "), the manifest " + std::to_string(manifestTasks) +
               " tasks");
    std::string name = m.stages[s].name;
    if (leftEarly > 0)
      name += " (" + std::to_string(firstRest) + " run)";
    const StageSpan span = stageSpan(m, p, s, origin, /*workingOnly=*/true);
    std::printf("  %-24s %6lld %5d %9.1f %9.1f %11.1f %11.1f %11.1f %11.1f %11.1f %9.1f\n",
                name.c_str(), static_cast<long long>(manifestTasks), working, span.enter,
                span.leave, inside, timed[0], timed[1], timed[2], timed[3], busiest);
  }
}

/// Per stage of one rank's launch, the fused kernel's step beside the
/// unfused baseline's, both timed by the same stage timers in the same
/// conditions (cold weights, the ranks' streams forked): when the stage's
/// first CTA with a task entered it and its last left it (fused), when its
/// kernel's first CTA entered it and its last left it (unfused), each from
/// its own run's earliest entry of any rank, and the unfused kernel's
/// busiest CTA. Where the fused layer falls behind is where its leave
/// column first runs ahead of the unfused one and stays there.
void printSideBySide(const RankLaunch &l, int rank, const std::vector<unsigned long long> &fused,
                     unsigned long long fusedOrigin, const std::vector<unsigned long long> &unfused,
                     unsigned long long unfusedOrigin) {
  const Manifest &m = l.manifest;
  const size_t stages = m.stages.size();
  const std::string title = m.kernelName + ", rank " + std::to_string(rank) + ", side by side";
  std::printf("  %-34s %12s %12s %14s %14s %14s %11s\n", title.c_str(), "fused enter",
              "fused leave", "unfused enter", "unfused leave", "leave: f - u", "unfused CTA");
  for (size_t s = 0; s < stages; ++s) {
    // A stage's own kernel: every CTA of it is the stage's.
    const StageSpan f = stageSpan(m, fused, s, fusedOrigin, /*workingOnly=*/true);
    const StageSpan u = stageSpan(m, unfused, s, unfusedOrigin, /*workingOnly=*/false);
    double busiest = 0;
    for (int64_t c = 0; c < m.grid; ++c) {
      const unsigned long long *r = &unfused[(c * stages + s) * kProfileWords];
      busiest = std::max(busiest, double(r[1] - r[0]) / 1e3);
    }
    std::printf("  %-34s %12.1f %12.1f %14.1f %14.1f %14.1f %11.1f\n", m.stages[s].name.c_str(),
                f.enter, f.leave, u.enter, u.leave, f.leave - u.leave, busiest);
  }
}

bool endsWith(const std::string &text, const std::string &end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

/// The bytes stage `s` of launch `l` must read on one rank: the weights it
/// reads (the routed experts' only for the experts used, cos_sin left out,
/// as the floor counts them) and, where it reads a KV cache (a byte region
/// `*cache` of 32-token pages), the records found through the key inputs it
/// reads (`keyRecords`: the distinct records of the window through
/// block_table, of the compressed keys through index_topk; 0 for others).
double stageBytes(const RankLaunch &l, size_t s, double usedShare,
                  const std::function<size_t(const std::string &)> &keyRecords) {
  double bytes = 0, recordBytes = 0;
  for (const std::string &name : l.stageReads[s]) {
    const Region &reg = gpu::argument(l.manifest, name);
    if (reg.format == "byte" && endsWith(name, "cache"))
      recordBytes = std::max(recordBytes, double(reg.cols) / 32);
    if (reg.kind != "weight" || name == "cos_sin")
      continue;
    const bool routed = name.rfind("w13", 0) == 0 || name.rfind("w2", 0) == 0;
    bytes += routed ? double(reg.bytes) * usedShare : double(reg.bytes);
  }
  if (recordBytes > 0)
    for (const std::string &name : l.stageReads[s])
      bytes += recordBytes * double(keyRecords(name));
  return bytes;
}

/// Per stage of a launch, every rank together (they share the GPU): the
/// bytes it must read (stageBytes), the span from its first CTA's entry to
/// its last CTA's leave over all ranks, fused (CTAs with one of its tasks)
/// and unfused (its kernels), and the achieved rate, bytes / span, beside
/// the read-only rate. A fused stage's span overlaps other stages', so its
/// rate is what the stage got while it ran, not what HBM did.
void printStageBandwidth(const std::vector<RankLaunch> &ranks, const RanksProfile &fused,
                         const RanksProfile *unfused, double readRate, double usedShare,
                         const std::function<size_t(const std::string &)> &keyRecords) {
  const Manifest &m = ranks[0].manifest;
  std::printf("  %-24s %9s %10s %9s %8s %12s %11s %8s\n", (m.kernelName + ", all ranks").c_str(),
              "MB read", "fused us", "GB/s", "of read", "unfused us", "GB/s", "of read");
  auto span = [&](const RanksProfile &p, size_t s, bool workingOnly) {
    StageSpan all{1e30, 0};
    for (size_t r = 0; r < ranks.size(); ++r) {
      const StageSpan one = stageSpan(m, p.words[r], s, p.origin, workingOnly);
      if (one.leave == 0 && one.enter == 0)
        continue;
      all.enter = std::min(all.enter, one.enter);
      all.leave = std::max(all.leave, one.leave);
    }
    return all.leave > 0 ? all.leave - all.enter : 0.0;
  };
  auto rate = [&](double bytes, double us, char *text, char *share) {
    if (bytes <= 0 || us <= 0) {
      std::snprintf(text, 16, "-");
      std::snprintf(share, 16, "-");
      return;
    }
    const double bytesPerS = bytes / (us * 1e-6);
    std::snprintf(text, 16, "%.0f", bytesPerS / 1e9);
    std::snprintf(share, 16, "%.1f%%", 100.0 * bytesPerS / readRate);
  };
  double totalBytes = 0;
  for (size_t s = 0; s < m.stages.size(); ++s) {
    double bytes = 0;
    for (const RankLaunch &l : ranks)
      bytes += stageBytes(l, s, usedShare, keyRecords);
    totalBytes += bytes;
    const double f = span(fused, s, /*workingOnly=*/true);
    const double u = unfused ? span(*unfused, s, /*workingOnly=*/false) : 0;
    char fRate[16], fShare[16], uRate[16], uShare[16];
    rate(bytes, f, fRate, fShare);
    rate(bytes, u, uRate, uShare);
    std::printf("  %-24s %9.2f %10.1f %9s %8s %12.1f %11s %8s\n", m.stages[s].name.c_str(),
                bytes / 1e6, f, fRate, fShare, u, unfused ? uRate : "-", unfused ? uShare : "-");
  }
  std::printf("  %-24s %9.2f\n", "(launch)", totalBytes / 1e6);
}

/// The profiled steps as a Chrome/Perfetto JSON trace (the format of
/// monodc simulate --trace, compiler/lib/Simulator/ChromeTrace.cpp): a
/// process per form and rank ("fused, rank 0", then "unfused, rank 0"...),
/// a track per CTA, a slice per stage a CTA ran tasks of (K1's, then K2's;
/// its name the stage, its category the launch), in microseconds from the
/// form's earliest stage entry; its args the tasks and the timed calls' µs.
void writeTrace(const std::string &path, const std::vector<RankLaunch> *launches[2],
                const RanksProfile fused[2], const RanksProfile *unfused[2]) {
  std::FILE *f = std::fopen(path.c_str(), "w");
  if (!f)
    die(path + ": cannot write the trace");
  const size_t tp = launches[0]->size();
  std::fprintf(f, "{\"traceEvents\":[\n");
  bool first = true;
  auto event = [&](const std::string &json) {
    std::fprintf(f, "%s%s", first ? "" : ",\n", json.c_str());
    first = false;
  };
  for (int form = 0; form < 2; ++form) {
    const RanksProfile *profiles[2] = {form == 0 ? &fused[0] : unfused[0],
                                       form == 0 ? &fused[1] : unfused[1]};
    if (!profiles[0] || !profiles[1])
      continue;
    const unsigned long long origin = std::min(profiles[0]->origin, profiles[1]->origin);
    for (size_t r = 0; r < tp; ++r) {
      const int pid = int(form * tp + r);
      event("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
            ",\"tid\":0,\"args\":{\"name\":\"" + (form == 0 ? "fused" : "unfused") +
            ", rank " + std::to_string(r) + "\"}}");
      std::set<int64_t> named;
      for (int launch = 0; launch < 2; ++launch) {
        const RankLaunch &l = (*launches[launch])[r];
        const Manifest &m = l.manifest;
        const std::vector<unsigned long long> &p = profiles[launch]->words[r];
        for (int64_t c = 0; c < m.grid; ++c)
          for (size_t s = 0; s < m.stages.size(); ++s) {
            const unsigned long long *w = &p[(c * m.stages.size() + s) * kProfileWords];
            if (w[2 + kTimedWords] == 0)
              continue;  // no task of the stage on this CTA
            if (named.insert(c).second)
              event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
                    ",\"tid\":" + std::to_string(c) + ",\"args\":{\"name\":\"CTA " +
                    std::to_string(c) + "\"}}");
            char text[512];
            std::snprintf(text, sizeof text,
                          "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%lld,"
                          "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"launch\":\"%s\",\"tasks\":%llu,"
                          "\"poll_us\":%.3f,\"gemv_us\":%.3f,\"publish_us\":%.3f,\"lib_us\":%.3f}}",
                          m.stages[s].name.c_str(), launch == 0 ? "k1" : "k2", pid,
                          static_cast<long long>(c), double(w[0] - origin) / 1e3,
                          double(w[1] - w[0]) / 1e3, launch == 0 ? "k1" : "k2", w[2 + kTimedWords],
                          double(w[2]) / 1e3, double(w[3]) / 1e3, double(w[4]) / 1e3,
                          double(w[5]) / 1e3);
            event(text);
          }
      }
    }
  }
  std::fprintf(f, "\n]}\n");
  std::fclose(f);
}

/// Under Nsight Compute (NCU_STAGES="stage ..."): one step of the unfused
/// kernels launched stage by stage, every rank's before the next stage (a
/// profiler runs kernels one at a time, and a reduce waits for every rank's
/// push), then the named stages' kernels of rank 0 again, alone, inside a
/// profiling range (ncu --profile-from-start off). K1's kernel name
/// (mono_k1) names rank 0's fused K1, whose stage functions the source
/// page then shows in place: K1's ranks never wait for each other. A fused
/// K2 waits for its peer's pushes, which a profiler that runs one kernel at
/// a time never runs beside it, so it is refused, unless K2_PREFIX cut it
/// before its first all-reduce (ncu_prefix.sh).
void profileUnderNcu(std::vector<RankLaunch> &k1, std::vector<RankLaunch> &k2,
                     const std::vector<CUstream> &streams, const std::string &names,
                     size_t k2Prefix) {
  std::set<std::string> wanted;
  for (size_t at = 0; at < names.size();) {
    const size_t end = std::min(names.find_first_of(" ,", at), names.size());
    if (end > at)
      wanted.insert(names.substr(at, end - at));
    at = end + 1;
  }
  for (auto *launches : {&k1, &k2})
    for (size_t s = 0; s < (*launches)[0].stages.size(); ++s)
      for (RankLaunch &l : *launches) {
        gpu::launchOnGrid(l.stages[s], l.manifest, streams[0], l.unfusedParams[0].data(),
                          "unfused stage");
        check(cuCtxSynchronize(), "unfused stage");
      }
  check(cuProfilerStart(), "profiler start");
  for (RankLaunch *l : {&k1[0], &k2[0]})
    for (size_t s = 0; s < l->manifest.stages.size(); ++s)
      if (wanted.erase(l->manifest.stages[s].name)) {
        std::printf("ncu: %s (%s_s%zu)\n", l->manifest.stages[s].name.c_str(),
                    l->manifest.kernelName.c_str(), s);
        gpu::launchOnGrid(l->stages[s], l->manifest, streams[0], l->unfusedParams[0].data(),
                          "profiled stage");
        check(cuCtxSynchronize(), "profiled stage");
      }
  // Rank 0's fused launch, alone.
  auto profileFused = [&](RankLaunch &l) {
    gpu::launchOnGrid(l.fused, l.manifest, streams[0], l.params[0].data(), "profiled fused launch");
    check(cuCtxSynchronize(), "profiled fused launch");
  };
  if (wanted.erase(k1[0].manifest.kernelName)) {
    std::printf("ncu: %s (fused, rank 0)\n", k1[0].manifest.kernelName.c_str());
    profileFused(k1[0]);
  }
  // A fused K2 waits for its peer rank in its all-reduces, and the
  // profiler runs no kernel beside the one it profiles; a K2 cut before its
  // first all-reduce (K2_PREFIX, patch_k2_prefix.py) waits for no peer.
  const auto &k2Stages = k2[0].manifest.stages;
  const bool peerFree =
      k2Prefix > 0 &&
      std::none_of(k2Stages.begin(), k2Stages.begin() + k2Prefix, [](const auto &st) {
        return st.name.find("allreduce") != std::string::npos;
      });
  if (wanted.erase(k2[0].manifest.kernelName)) {
    if (peerFree) {
      std::printf("ncu: %s (fused, rank 0, its first %zu stages)\n",
                  k2[0].manifest.kernelName.c_str(), k2Prefix);
      profileFused(k2[0]);
    } else {
      std::printf("ncu: %s not profiled: a fused K2 waits for its peer rank, which the profiler "
                  "does not run beside it (K2_PREFIX=N with no all-reduce in the first N stages "
                  "and a tree cut by patch_k2_prefix.py profile it)\n",
                  k2[0].manifest.kernelName.c_str());
    }
  }
  check(cuProfilerStop(), "profiler stop");
  for (const std::string &name : wanted)
    std::printf("ncu: no stage %s in K1 or K2\n", name.c_str());
}

} // namespace

int main(int argc, char **argv) {
  gpu::programName = "layer_bench";
  if (argc < 6)
    die("usage: layer_bench DIR CONFIG TP LAYERS WIDTH...");
  const std::string dir = argv[1], config = argv[2];
  const int tp = std::atoi(argv[3]), layers = std::atoi(argv[4]);
  std::vector<int> widths;
  for (int a = 5; a < argc; ++a)
    widths.push_back(std::atoi(argv[a]));
  // BENCH_ROUTING: uniform (the default) or skewed, refused before any timing.
  const char *routingValue = std::getenv("BENCH_ROUTING");
  const std::string routing = routingValue ? routingValue : "uniform";
  if (routing != "uniform" && routing != "skewed")
    die("BENCH_ROUTING=" + routing + ": needs uniform or skewed");
  // BENCH_MIX=1 (below): refused before any timing when it is neither 0 nor 1.
  const char *mixValue = std::getenv("BENCH_MIX");
  const bool mix = mixValue && std::string(mixValue) == "1";
  if (mixValue && !mix && std::string(mixValue) != "0")
    die(std::string("BENCH_MIX=") + mixValue + ": needs 0 or 1");
  // BENCH_PAD=W:P[,W:P...]: width W's last P rows are pad rows (a step of
  // W - P rows run on the kernel of width W, as a serving engine pads to a
  // captured width).
  std::map<int, int> padRowsOf;
  if (const char *padValue = std::getenv("BENCH_PAD")) {
    std::stringstream list(padValue);
    std::string item;
    while (std::getline(list, item, ',')) {
      int w = 0, p = 0;
      if (std::sscanf(item.c_str(), "%d:%d", &w, &p) != 2 || w < 1 || p < 0 || p >= w)
        die(std::string("BENCH_PAD=") + padValue + ": needs W:P pairs with 0 <= P < W");
      padRowsOf[w] = p;
    }
  }
  const gpu::Device device = gpu::openDevice();
  const int sms = device.sms;
  gpu::SyntheticFill fill;
  std::vector<CUstream> streams(tp);
  for (CUstream &s : streams)
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "stream");
  CUevent start, stop, fork, join;
  for (CUevent *e : {&start, &stop, &fork, &join})
    check(cuEventCreate(e, 0), "event");

  // The floor's read rate, measured here (ReadRate.h), beside the copy rate
  // and the HBM peak.
  const gpu::Bandwidth bandwidth = gpu::measureBandwidth(device, streams[0]);
  const double readRate = bandwidth.readRate;
  std::printf("device: %d SMs; routing %s\n", sms, routing.c_str());
  gpu::printBandwidth(bandwidth);
  std::printf("%-6s %12s %12s %9s %10s %9s %s\n", "rows", "fused us", "unfused us", "speed-up",
              "floor us", "of floor", "experts used");

  for (int rows : widths) {
    // Each width's contents as if it were the only one: the routing (and
    // with it the experts used and the floor) then does not depend on the
    // list of widths (before, rows 48 routed to 116 or 126 experts).
    fill.restart();
    const int padRows = padRowsOf.count(rows) ? padRowsOf[rows] : 0;
    fill.setPadRows(padRows);
    if (padRows)
      std::printf("rows %d: the last %d are pad rows (slot_mapping -1)\n", rows, padRows);
    // Each rank: K1 and K2, one epoch buffer for both; K2's q and cache are
    // K1's. Peer buffers of K2 in the same device memory.
    std::vector<RankLaunch> k1(tp), k2(tp);
    std::vector<CUdeviceptr> epochs(tp);
    gpu::PeerBuffers peers;
    for (int phase = 0; phase < 2; ++phase) {
      const std::string launchName = phase == 0 ? "k1" : "k2";
      const std::string stem = gpu::layerStem(dir, launchName, config, rows, tp);
      Manifest m = gpu::readManifest(stem + ".manifest");
      const CUfunction fused = gpu::compileKernel(stem + ".hip", m.kernelName);
      CUmodule unfusedModule =
          gpu::compileModule(gpu::readText(stem + ".unfused.hip"), stem + ".unfused.hip");
      const bool profiled = fileExists(stem + ".prof.hip");
      if (phase == 1 && m.peerSlotBytes > 0)
        peers = gpu::allocatePeers(m, tp);
      for (int r = 0; r < tp; ++r) {
        RankLaunch &l = (phase == 0 ? k1 : k2)[r];
        l.manifest = m;
        l.rank = r;
        l.fused = fused;
        if (profiled) {
          // A module a rank, so that each rank has its own timer array.
          CUmodule module = gpu::compileModule(gpu::readText(stem + ".prof.hip"), stem + ".prof.hip");
          check(cuModuleGetFunction(&l.profiled, module, m.kernelName.c_str()), "profiled kernel");
          l.profile = profileArray(module, m, stem + ".prof.hip");
          l.stageReads = readStageReads(stem + ".prof.reads", m);
        }
        if (profiled && fileExists(stem + ".unfused.prof.hip")) {
          const std::string path = stem + ".unfused.prof.hip";
          CUmodule module = gpu::compileModule(gpu::readText(path), path);
          l.profiledStages = stageKernels(module, m);
          l.unfusedProfile = profileArray(module, m, path);
        }
        gpu::requireResident(l.fused, m, tp, sms, launchName);
        l.stages = stageKernels(unfusedModule, m);
        if (phase == 0) {
          epochs[r] = alloc(m.epochWords * 4);
          check(cuMemsetD8(epochs[r], 0, m.epochWords * 4), "zero epoch");
        }
        l.weights.resize(layers);
        for (const Region &reg : m.arguments) {
          if (reg.kind == "weight") {
            for (int layer = 0; layer < layers; ++layer) {
              CUdeviceptr p = alloc(reg.bytes);
              fill.values(p, reg.bytes, reg.format);
              if (reg.name == "gate_bias")
                setRoutingBias(p, reg, routing);
              l.weights[layer][reg.name] = p;
            }
            continue;
          }
          // K2 reads the q and the cache K1 of its rank wrote.
          if (phase == 1 && k1[r].shared.count(reg.name)) {
            l.shared[reg.name] = k1[r].shared[reg.name];
            continue;
          }
          CUdeviceptr p = alloc(reg.bytes);
          l.shared[reg.name] = p;
          fill.region(m, reg, p);
        }
        l.scratch = alloc(m.scratchBytes);
        l.unfusedScratch = alloc(m.scratchBytes);
        check(cuMemsetD8(l.scratch, 0, m.scratchBytes ? m.scratchBytes : 1), "zero scratch");
        check(cuMemsetD8(l.unfusedScratch, 0, m.scratchBytes ? m.scratchBytes : 1), "zero scratch");
        l.values.resize(layers);
        l.unfusedValues.resize(layers);
        l.params.resize(layers);
        l.unfusedParams.resize(layers);
        for (int layer = 0; layer < layers; ++layer) {
          auto bufferOf = [&](const Region &reg) {
            return reg.kind == "weight" ? l.weights[layer][reg.name] : l.shared[reg.name];
          };
          l.values[layer] = gpu::argumentValues(m, bufferOf, l.scratch, epochs[r], peers.table);
          l.unfusedValues[layer] =
              gpu::argumentValues(m, bufferOf, l.unfusedScratch, epochs[r], peers.table);
        }
      }
    }
    check(cuCtxSynchronize(), "fill");
    std::vector<int> rankValues(tp);
    for (int r = 0; r < tp; ++r)
      rankValues[r] = r;
    for (auto *launches : {&k1, &k2})
      for (RankLaunch &l : *launches)
        for (int layer = 0; layer < layers; ++layer)
          for (int unfused = 0; unfused < 2; ++unfused) {
            auto &values = unfused ? l.unfusedValues[layer] : l.values[layer];
            (unfused ? l.unfusedParams[layer] : l.params[layer]) =
                gpu::kernelParams(values, l.manifest, rankValues[l.rank]);
          }

    auto release = [&] {
      for (auto *launches : {&k1, &k2})
        for (RankLaunch &l : *launches) {
          for (auto &set : l.weights)
            for (auto &[name, p] : set)
              cuMemFree(p);
          for (auto &[name, p] : l.shared)
            if (launches == &k1 || !k1[l.rank].shared.count(name))
              cuMemFree(p);
          cuMemFree(l.scratch);
          cuMemFree(l.unfusedScratch);
        }
      for (CUdeviceptr epoch : epochs)
        cuMemFree(epoch);
      gpu::freePeers(peers);
    };
    size_t k2Prefix = 0;
    if (const char *prefix = std::getenv("K2_PREFIX")) {
      char *end = nullptr;
      k2Prefix = std::strtoul(prefix, &end, 10);
      if (*prefix == '\0' || *end != '\0' || k2Prefix == 0 ||
          k2Prefix > k2[0].manifest.stages.size() || k1[0].profiled)
        die(std::string("K2_PREFIX=") + prefix + ": needs a stage count from 1 to " +
            std::to_string(k2[0].manifest.stages.size()) +
            " and sources without timers (bench/gpu/experiments/patch_k2_prefix.py)");
    }
    if (const char *ncuStages = std::getenv("NCU_STAGES")) {
      profileUnderNcu(k1, k2, streams, ncuStages, k2Prefix);
      release();
      continue;
    }

    // A layer: on each rank's stream, K1 then K2, each fused, as its stage
    // kernels then the launch's end (unfused), or left out. K2 alone ends
    // its step too, so it can be timed by itself. K1 does not end its step:
    // timed alone, it is followed by K2's end kernel only (EndOnly), or
    // its next step's polls would find the last step's flags.
    enum class Mode { Skip, Fused, Unfused, EndOnly };
    auto enqueue = [&](Mode k1Mode, Mode k2Mode) {
      for (int layer = 0; layer < layers; ++layer)
        for (int r = 0; r < tp; ++r)
          for (RankLaunch *l : {&k1[r], &k2[r]}) {
            const Mode mode = l == &k1[r] ? k1Mode : k2Mode;
            if (mode == Mode::Skip)
              continue;
            const Manifest &m = l->manifest;
            if (mode == Mode::Fused) {
              gpu::launchOnGrid(l->fused, m, streams[r], l->params[layer].data(), "fused launch");
              continue;
            }
            for (size_t s = 0; s < l->stages.size(); ++s) {
              const bool last = s + 1 == l->stages.size();
              const bool cut = (mode == Mode::EndOnly && !last) ||
                               (l == &k2[r] && k2Prefix && s >= k2Prefix && !last);
              if (!cut)
                gpu::launchOnGrid(l->stages[s], m, streams[r], l->unfusedParams[layer].data(),
                                  "unfused launch");
            }
          }
    };
    auto timeLayers = [&](Mode k1Mode, Mode k2Mode) {
      const double ms = gpu::timeGraph(streams[0], [&] {
        gpu::forkJoin(streams, fork, join, [&] { enqueue(k1Mode, k2Mode); });
      }, /*warmups=*/5, /*reps=*/20);
      return 1000.0 * ms / layers;
    };
    using enum Mode;
    const double fusedUs = timeLayers(Fused, Fused), unfusedUs = timeLayers(Unfused, Unfused);
    const double fusedK2Us = timeLayers(Skip, Fused), unfusedK2Us = timeLayers(Skip, Unfused);
    // BENCH_ROUNDS=K: K more rounds of the four timings in this process, each
    // printed: tells a spread between runs (processes: fresh allocations)
    // from one between launches (fresh placement of the CTAs, clocks).
    const int rounds = std::getenv("BENCH_ROUNDS") ? std::atoi(std::getenv("BENCH_ROUNDS")) : 0;
    for (int round = 1; round <= rounds; ++round) {
      const double f = timeLayers(Fused, Fused), u = timeLayers(Unfused, Unfused);
      const double fk2 = timeLayers(Skip, Fused), uk2 = timeLayers(Skip, Unfused);
      std::printf("  rows %d round %d: layer fused %.1f unfused %.1f, K2 alone fused %.1f "
                  "unfused %.1f us\n", rows, round, f, u, fk2, uk2);
    }
    // BENCH_MIX=1: K1 alone, and each launch fused beside the other
    // unfused. Does a launch cost the same in the layer as alone, and does
    // that depend on how the other launch ran? (docs/results.md, "Which
    // launches to fuse".)
    if (mix) {
      if (k2Prefix)
        die("BENCH_MIX=1 times whole layers: leave K2_PREFIX out");
      const double k1f = timeLayers(Fused, EndOnly), k1u = timeLayers(Unfused, EndOnly);
      const double uf = timeLayers(Unfused, Fused), fu = timeLayers(Fused, Unfused);
      const double ff = timeLayers(Fused, Fused), uu = timeLayers(Unfused, Unfused);
      std::printf("  rows %d mix: K1 alone (+ K2's end kernel) fused %.1f unfused %.1f; "
                  "layer K1+K2 fused+fused %.1f, unfused+fused %.1f, fused+unfused %.1f, "
                  "unfused+unfused %.1f us\n",
                  rows, k1f, k1u, ff, uf, fu, uu);
    }

    // Where the time goes: one step of the timed fused kernels, and beside
    // it one step of the unfused baseline's kernels with the same timers. The
    // profiled steps are one graph of the ranks' streams forked, as the
    // timed layers are: enqueued rank after rank, rank 1 started K1 late
    // and rank 0 then waited for it in both all-reduces.
    RanksProfile fusedProfiles[2], unfusedProfiles[2];
    bool sideBySide = false;
    if (k1[0].profiled) {
      // Three steps of the profiled kernels (fused, or the unfused baseline
      // with the same timers), one graph of the ranks' streams forked,
      // replayed twice: the records are the second replay's last step, so
      // that no graph's first replay (its upload) is what is timed.
      auto profileSteps = [&](bool unfused) {
        gpu::timeGraph(streams[0], [&] {
          for (int step = 0; step < 3; ++step)
            gpu::forkJoin(streams, fork, join, [&] {
              for (int r = 0; r < tp; ++r)
                for (RankLaunch *l : {&k1[r], &k2[r]}) {
                  void **params = (unfused ? l->unfusedParams : l->params)[step % layers].data();
                  if (!unfused)
                    gpu::launchOnGrid(l->profiled, l->manifest, streams[r], params, "profiled launch");
                  else
                    for (CUfunction f : l->profiledStages)
                      gpu::launchOnGrid(f, l->manifest, streams[r], params, "profiled unfused launch");
                }
            });
        }, /*warmups=*/1, /*reps=*/1);
        check(cuCtxSynchronize(), "profiled steps");
      };
      profileSteps(false);
      for (int launch = 0; launch < 2; ++launch)
        fusedProfiles[launch] = downloadProfiles(launch == 0 ? k1 : k2, &RankLaunch::profile);
      sideBySide = !k1[0].profiledStages.empty() && !k2[0].profiledStages.empty();
      if (sideBySide) {
        profileSteps(true);
        for (int launch = 0; launch < 2; ++launch)
          unfusedProfiles[launch] =
              downloadProfiles(launch == 0 ? k1 : k2, &RankLaunch::unfusedProfile);
      }
      std::printf("rows %d, one profiled step (cold weights), every rank:\n", rows);
      for (int launch = 0; launch < 2; ++launch) {
        const std::vector<RankLaunch> &ranks = launch == 0 ? k1 : k2;
        const RanksProfile &fused = fusedProfiles[launch];
        for (int r = 0; r < tp; ++r)
          printStageProfile(ranks[r], r, fused.words[r], fused.origin);
        if (!sideBySide)
          continue;
        const RanksProfile &unfused = unfusedProfiles[launch];
        for (int r = 0; r < tp; ++r)
          printSideBySide(ranks[r], r, fused.words[r], fused.origin, unfused.words[r],
                          unfused.origin);
      }
    }

    // Sanity: the reduced layer output agrees across ranks in its real rows
    // (a pad row's is unspecified: its sum is skipped). The floor: every
    // weight byte a rank reads once, the routed experts only for the
    // experts the step's tokens chose, and every distinct KV record the
    // step's keys name (window and compressed), once a rank.
    const Manifest &m2 = k2[0].manifest;
    const int64_t xOutBytes = gpu::argument(m2, "x_out").bytes;
    const size_t realBytes = size_t(xOutBytes / rows * (rows - padRows));
    std::string x0 = gpu::download(k2[0].shared["x_out"], xOutBytes).substr(0, realBytes);
    for (int r = 1; r < tp && !k2Prefix; ++r)
      if (gpu::download(k2[r].shared["x_out"], xOutBytes).substr(0, realBytes) != x0)
        die("rows " + std::to_string(rows) + ": x_out differs across ranks");
    if (k2Prefix)
      std::printf("K2_PREFIX=%zu: K2 ran its first %zu stages (x_out and the floor are not this "
                  "step's)\n", k2Prefix, k2Prefix);
    std::string topk = gpu::download(k2[0].shared["topk_indices"], gpu::argument(m2, "topk_indices").bytes);
    std::set<int> used;
    for (size_t i = 0; i + 4 <= topk.size(); i += 4) {
      float v;
      std::memcpy(&v, topk.data() + i, 4);
      if (v >= 0)  // a pad row's -1
        used.insert(int(v));
    }
    const int64_t experts = gpu::argument(m2, "gate").rows;
    double bytes = 0;
    for (int r = 0; r < tp; ++r)
      for (RankLaunch *l : {&k1[r], &k2[r]})
        for (const Region &reg : l->manifest.arguments) {
          if (reg.kind != "weight" || reg.name == "cos_sin")
            continue;
          const bool routed = reg.name.rfind("w13", 0) == 0 || reg.name.rfind("w2", 0) == 0;
          bytes += routed ? double(reg.bytes) * used.size() / experts : double(reg.bytes);
        }
    const double weightBytes = bytes;
    // The KV records K2's real rows read (pad rows read none): the window
    // through the block table, the compressed keys of a ratio-2 layer (what
    // emit.sh builds) through the top-k list and the compressed block table.
    auto wholeNumbers = [&](const std::string &name) {
      if (!k2[0].shared.count(name))
        die("no input " + name + " in K2");
      const Region &reg = gpu::argument(m2, name);
      return gpu::decodeRegion(reg.format, gpu::download(k2[0].shared[name], reg.bytes));
    };
    const std::vector<float> positions = wholeNumbers("positions"),
                             table = wholeNumbers("block_table"),
                             compressedTable = wholeNumbers("compressed_block_table"),
                             picked = wholeNumbers("index_topk");
    const int64_t pages = gpu::argument(m2, "block_table").cols,
                  picks = gpu::argument(m2, "index_topk").cols;
    // The window's split-K state has a column a 64-key chunk.
    auto windowState = std::find_if(m2.scratch.begin(), m2.scratch.end(),
                                    [](const Region &r) { return r.name == "window_max"; });
    if (windowState == m2.scratch.end())
      die("K2 has no window_max scratch");
    const int64_t windowKeys = windowState->cols * 64;
    std::set<int64_t> windowRecords, compressedRecords;
    auto record = [&](const std::vector<float> &t, int64_t row, int64_t place) {
      return int64_t(t[size_t(row * pages + place / 32)]) * 32 + place % 32;
    };
    for (int64_t row = 0; row < rows - padRows; ++row) {
      const int64_t p = int64_t(positions[size_t(row)]), written = (p + 1) / 2;
      for (int64_t q = std::max<int64_t>(0, p - windowKeys + 1); q <= p; ++q)
        windowRecords.insert(record(table, row, q));
      for (int64_t j = 0; j < std::min(written, picks); ++j)
        if (const int64_t i = int64_t(picked[size_t(row * picks + j)]); i >= 0 && i < written)
          compressedRecords.insert(record(compressedTable, row, i));
    }
    const Region &cache = gpu::argument(m2, "kv_cache");
    const double recordBytes = double(cache.cols) / 32;  // 32 tokens a page
    const double kvBytes =
        double(tp) * recordBytes * double(windowRecords.size() + compressedRecords.size());
    auto keyRecords = [&](const std::string &name) -> size_t {
      return name == "block_table"   ? windowRecords.size()
             : name == "index_topk" ? compressedRecords.size()
                                     : 0;
    };
    bytes += kvBytes;
    const double floorUs = bytes / readRate * 1e6;
    std::printf("       floor bytes: weights %.1f MB, KV records %.1f MB (all ranks)\n",
                weightBytes / 1e6, kvBytes / 1e6);
    // Per stage: the bytes it must read over its span, fused and unfused
    // (the profiled step's timers), where the timed build listed its reads.
    if (k1[0].profiled && !k1[0].stageReads.empty() && !k2[0].stageReads.empty() && !k2Prefix) {
      const double usedShare = double(used.size()) / double(experts);
      std::printf("rows %d, bytes each stage must read / its span (one profiled step, read-only "
                  "rate %.3f TB/s):\n", rows, readRate / 1e12);
      for (int launch = 0; launch < 2; ++launch)
        printStageBandwidth(launch == 0 ? k1 : k2, fusedProfiles[launch],
                            sideBySide ? &unfusedProfiles[launch] : nullptr, readRate, usedShare,
                            keyRecords);
    }
    if (const char *traceDir = std::getenv("BENCH_TRACE"); traceDir && *traceDir && k1[0].profiled) {
      const std::string path = std::string(traceDir) + "/trace.tp" + std::to_string(tp) + ".r" +
                               std::to_string(rows) + ".json";
      const std::vector<RankLaunch> *launches[2] = {&k1, &k2};
      const RanksProfile *unfused[2] = {sideBySide ? &unfusedProfiles[0] : nullptr,
                                        sideBySide ? &unfusedProfiles[1] : nullptr};
      writeTrace(path, launches, fusedProfiles, unfused);
      std::printf("       trace: %s (Chrome/Perfetto JSON: a track per CTA, a slice per stage)\n",
                  path.c_str());
    }
    std::printf("%-6d %12.1f %12.1f %8.2fx %10.1f %8.1f%% %zu of %lld (K2 alone: fused %.1f, "
                "unfused %.1f us)\n",
                rows, fusedUs, unfusedUs, unfusedUs / fusedUs, floorUs, 100.0 * floorUs / fusedUs,
                used.size(), static_cast<long long>(experts), fusedK2Us, unfusedK2Us);
    // The synthetic layer's health: values that are not finite in the
    // router's logits and in the layer's output (every token routing to the
    // same experts suggests that the logits are not all finite).
    auto nonFinite = [&](const std::string &name) {
      const Region &reg = gpu::argument(m2, name);
      const std::string data = gpu::download(k2[0].shared[name], reg.bytes);
      const size_t unit = reg.format == "bf16" ? 2 : 4;
      size_t bad = 0;
      for (size_t i = 0; i + unit <= data.size(); i += unit) {
        uint32_t bits = 0;
        std::memcpy(&bits, data.data() + i, unit);
        if (unit == 2)
          bits <<= 16;
        bad += (bits & 0x7F800000u) == 0x7F800000u;
      }
      return std::to_string(bad) + " of " + std::to_string(data.size() / unit);
    };
    std::printf("       not finite: logits %s, x_out %s\n", nonFinite("logits").c_str(),
                nonFinite("x_out").c_str());
    std::fflush(stdout);
    release();
  }
  return 0;
}
