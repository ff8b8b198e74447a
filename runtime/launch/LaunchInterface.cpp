//===- LaunchInterface.cpp - a launch's kernel manifest, read without LLVM ===//
#include "monodc/runtime/LaunchInterface.h"

#include "monodc/device/epoch_shape.h"

#include <charconv>
#include <sstream>

using namespace monodc::runtime;

namespace {

std::vector<std::string> words(const std::string &line) {
  std::istringstream stream(line);
  std::vector<std::string> result;
  for (std::string word; stream >> word;)
    result.push_back(word);
  return result;
}

bool toInt(const std::string &text, int64_t &out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out >= 0;
}

/// `NAME KIND FORMAT ROWS COLS BYTES [OFFSET]` from word 1 on.
bool readRegion(const std::vector<std::string> &w, bool withOffset, RegionSpec &r) {
  if (w.size() != (withOffset ? 8u : 7u))
    return false;
  r.name = w[1];
  r.kind = w[2];
  r.format = w[3];
  return toInt(w[4], r.rows) && toInt(w[5], r.cols) && toInt(w[6], r.bytes) &&
         (!withOffset || toInt(w[7], r.offset));
}

void printRegion(std::ostringstream &out, const char *tag, const RegionSpec &r) {
  out << tag << " " << r.name << " " << r.kind << " " << r.format << " " << r.rows << " "
      << r.cols << " " << r.bytes;
  if (r.offset >= 0)
    out << " " << r.offset;
  out << "\n";
}

} // namespace

const RegionSpec *LaunchInterface::argument(std::string_view name) const {
  for (const RegionSpec &r : arguments)
    if (r.name == name)
      return &r;
  return nullptr;
}

std::string LaunchInterface::text() const {
  std::ostringstream out;
  out << "kernel " << kernelName << "\ngrid " << grid << "\nblock " << block << "\nrows "
      << rows << "\nscratch_bytes " << scratchBytes << "\nepoch_words " << epochWords
      << "\nstep_tag " << stepTag << "\nends_step " << (endsStep ? 1 : 0) << "\n";
  if (dynamicSharedBytes > 0)
    out << "dynamic_shared_bytes " << dynamicSharedBytes << "\n";
  if (peerSlotBytes > 0)
    out << "ranks " << ranks << "\npeer_slot_bytes " << peerSlotBytes << "\n";
  for (const StageSpec &s : stages)
    out << "stage " << s.index << " " << s.name << " " << s.tasks << "\n";
  for (const WaitSiteSpec &w : waits) {
    out << "wait " << w.site << " " << w.stage << " " << w.flags;
    if (w.peerRank >= 0)
      out << " " << w.peerRank;
    out << "\n";
  }
  // The manifest interleaves arg and scratch lines in region order; the
  // order within each kind is all that matters, and is kept.
  for (const RegionSpec &r : arguments)
    printRegion(out, "arg", r);
  for (const RegionSpec &r : scratch)
    printRegion(out, "scratch", r);
  for (const IndexSpec &index : indexBounds)
    out << "index " << index.name << " " << index.bound
        << (index.rowsOf.empty() ? "" : " " + index.rowsOf) << "\n";
  for (const RegionSpec &r : arguments)
    if (!r.handedFromKernel.empty())
      out << "from " << r.name << " " << r.handedFromKernel << " " << r.handedFromRegion << "\n";
  for (const RegionSpec &r : arguments)
    if (r.stepResult)
      out << "result " << r.name << "\n";
  for (const RegionSpec &r : arguments)
    if (r.rowsAtLaunch)
      out << "rows_at_launch " << r.name << "\n";
  for (const RegionSpec &r : arguments)
    if (r.colsAtLaunch)
      out << "cols_at_launch " << r.name << "\n";
  return out.str();
}

Result<LaunchInterface> LaunchInterface::parse(std::string_view text) {
  std::istringstream stream{std::string(text)};
  LaunchInterface result;
  int lineNumber = 0;
  bool sawKernel = false, sawGrid = false, sawBlock = false, sawEpoch = false;
  for (std::string line; std::getline(stream, line);) {
    ++lineNumber;
    std::vector<std::string> w = words(line);
    if (w.empty())
      continue;
    const std::string &tag = w[0];
    bool ok = true;
    if (tag == "kernel") {
      ok = w.size() == 2;
      result.kernelName = ok ? w[1] : "";
      sawKernel = true;
    } else if (tag == "grid") {
      ok = w.size() == 2 && toInt(w[1], result.grid);
      sawGrid = true;
    } else if (tag == "block") {
      ok = w.size() == 2 && toInt(w[1], result.block);
      sawBlock = true;
    } else if (tag == "rows") {
      ok = w.size() == 2 && toInt(w[1], result.rows);
    } else if (tag == "scratch_bytes") {
      ok = w.size() == 2 && toInt(w[1], result.scratchBytes);
    } else if (tag == "dynamic_shared_bytes") {
      ok = w.size() == 2 && toInt(w[1], result.dynamicSharedBytes) && result.dynamicSharedBytes > 0;
    } else if (tag == "ranks") {
      ok = w.size() == 2 && toInt(w[1], result.ranks) && result.ranks >= 1;
    } else if (tag == "peer_slot_bytes") {
      ok = w.size() == 2 && toInt(w[1], result.peerSlotBytes);
    } else if (tag == "epoch_words") {
      ok = w.size() == 2 && toInt(w[1], result.epochWords);
      sawEpoch = true;
    } else if (tag == "step_tag") {
      ok = w.size() == 2 && toInt(w[1], result.stepTag) &&
           (result.stepTag == 1 || result.stepTag == 2);
    } else if (tag == "ends_step") {
      int64_t ends = 0;
      ok = w.size() == 2 && toInt(w[1], ends) && (ends == 0 || ends == 1);
      result.endsStep = ends == 1;
    } else if (tag == "index") {
      // `index NAME BOUND [REGION]`: REGION an argument declared before.
      IndexSpec index;
      ok = (w.size() == 3 || w.size() == 4) && toInt(w[2], index.bound) && index.bound > 0;
      if (ok && w.size() == 4) {
        const RegionSpec *counted = result.argument(w[3]);
        ok = counted && counted->rows > 0 && index.bound % counted->rows == 0;
        index.rowsOf = w[3];
      }
      index.name = ok ? w[1] : "";
      result.indexBounds.push_back(std::move(index));
    } else if (tag == "stage") {
      StageSpec s;
      ok = w.size() == 4 && toInt(w[1], s.index) && toInt(w[3], s.tasks);
      s.name = ok ? w[2] : "";
      result.stages.push_back(std::move(s));
    } else if (tag == "wait") {
      WaitSiteSpec site;
      // `wait SITE STAGE FLAGS`, and the rank polled where it is a peer's.
      ok = (w.size() == 4 || (w.size() == 5 && toInt(w[4], site.peerRank))) &&
           toInt(w[1], site.site) && site.site == static_cast<int64_t>(result.waits.size());
      site.stage = ok ? w[2] : "";
      site.flags = ok ? w[3] : "";
      result.waits.push_back(std::move(site));
    } else if (tag == "from" || tag == "result" || tag == "rows_at_launch" ||
               tag == "cols_at_launch") {
      // `from INPUT KERNEL OUTPUT`, `result OUTPUT`: a step's memory flow;
      // `rows_at_launch REGION`, `cols_at_launch REGION`: rows or columns the
      // caller gives at each launch. About an argument the manifest declared
      // before.
      RegionSpec *arg = w.size() > 1 ? result.argument(w[1]) : nullptr;
      if (tag == "from") {
        ok = w.size() == 4 && arg && arg->kind == "input";
        if (ok) {
          arg->handedFromKernel = w[2];
          arg->handedFromRegion = w[3];
        }
      } else if (tag == "result") {
        ok = w.size() == 2 && arg && arg->kind == "output";
        if (ok)
          arg->stepResult = true;
      } else if (tag == "rows_at_launch") {
        ok = w.size() == 2 && arg &&
             (arg->kind == "input" || arg->kind == "output" || arg->kind == "weight") &&
             !arg->rowsAtLaunch && !arg->colsAtLaunch;
        if (ok)
          arg->rowsAtLaunch = true;
      } else {
        ok = w.size() == 2 && arg && arg->kind == "input" && !arg->rowsAtLaunch &&
             !arg->colsAtLaunch;
        if (ok)
          arg->colsAtLaunch = true;
      }
    } else if (tag == "arg" || tag == "scratch") {
      RegionSpec r;
      ok = readRegion(w, tag == "scratch", r);
      (tag == "arg" ? result.arguments : result.scratch).push_back(std::move(r));
    } else {
      return makeError("bad kernel manifest, line " + std::to_string(lineNumber) +
                       ": unknown line '" + line +
                       "' (known: kernel, grid, block, rows, scratch_bytes, epoch_words, "
                       "step_tag, ends_step, dynamic_shared_bytes, ranks, peer_slot_bytes, stage, wait, "
                       "arg, index, scratch, from, result, rows_at_launch, cols_at_launch)");
    }
    if (!ok)
      return makeError("bad kernel manifest, line " + std::to_string(lineNumber) +
                       ": cannot read '" + line + "'");
  }
  if (!sawKernel || !sawGrid || !sawBlock || !sawEpoch)
    return makeError("bad kernel manifest: it needs kernel, grid, block and epoch_words lines");
  // The launcher reads the wait-fault record at the end of the epoch buffer.
  if (result.grid < 1 || result.epochWords != mono_epoch_words(result.grid))
    return makeError("bad kernel manifest: epoch_words " + std::to_string(result.epochWords) +
                     " is not the epoch buffer of grid " + std::to_string(result.grid) + " (" +
                     std::to_string(result.grid < 1 ? 0 : mono_epoch_words(result.grid)) +
                     " words: epoch, arrivals, a mark per CTA, 256 counters, the wait-fault "
                     "record); a manifest from another monodc version?");
  return result;
}
