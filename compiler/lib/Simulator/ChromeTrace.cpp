//===- ChromeTrace.cpp - simulator schedules as a Chrome/Perfetto trace ---===//
#include "monodc/Simulator/ChromeTrace.h"

#include "llvm/Support/JSON.h"

#include <set>
#include <utility>

using namespace monodc::sim;

void monodc::sim::writeChromeTrace(llvm::raw_ostream &os, llvm::ArrayRef<TraceRun> runs) {
  llvm::json::OStream json(os);
  json.object([&] {
    json.attributeArray("traceEvents", [&] {
      auto metadata = [&](llvm::StringRef what, int64_t pid, int64_t tid, const std::string &name) {
        json.object([&] {
          json.attribute("name", what);
          json.attribute("ph", "M");
          json.attribute("pid", pid);
          json.attribute("tid", tid);
          json.attributeObject("args", [&] { json.attribute("name", name); });
        });
      };
      for (size_t i = 0; i < runs.size(); ++i) {
        const TraceRun &run = runs[i];
        // A process per (run, rank), named; a thread per CTA that ran.
        const int64_t firstPid = static_cast<int64_t>(i) * run.ranks;
        for (int64_t r = 0; r < run.ranks; ++r)
          metadata("process_name", firstPid + r, 0, run.label + ", rank " + std::to_string(r));
        std::set<std::pair<int64_t, int64_t>> ctas;
        for (const TraceSlice &s : run.slices)
          if (ctas.insert({s.rank, s.cta}).second)
            metadata("thread_name", firstPid + s.rank, s.cta, "CTA " + std::to_string(s.cta));
        for (const TraceSlice &s : run.slices)
          json.object([&] {
            const bool wait = !s.flags.empty();
            json.attribute("name", wait ? "wait " + s.flags
                                        : s.stage + " " + std::to_string(s.task));
            json.attribute("cat", wait ? "wait" : "task");
            json.attribute("ph", "X");
            json.attribute("pid", firstPid + s.rank);
            json.attribute("tid", s.cta);
            json.attribute("ts", s.begin);
            json.attribute("dur", s.end - s.begin);
            json.attributeObject("args", [&] {
              json.attribute("stage", s.stage);
              json.attribute("task", s.task);
            });
          });
      }
    });
  });
  os << "\n";
}
