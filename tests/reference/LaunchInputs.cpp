// The regions of a layer's launches (see LaunchInputs.h).
#include "monodc/reference/LaunchInputs.h"

#include <stdexcept>

#include "monodc/formats/AiterShuffle.h"

namespace monodc::reference {
namespace {

void addBlock(LaunchInputs& in, const std::string& name, const BlockScaledE4m3& w) {
  in.bytes.push_back({name, w.codes});
  in.bytes.push_back({name + "_scale", w.scales});
}

// A single expert's weight, at expert `index` of the tensor of every expert:
// the shuffles keep experts apart (the weight's outermost dimension is the
// expert; the scales move whole 32-row blocks, and an expert is whole blocks).
void addExpertWeight(LaunchInputs& in, const std::string& name, const Mxfp4Weights& w, int index) {
  if (w.experts != 1 || w.n % 32 != 0)
    throw std::invalid_argument("expertInputs: " + name + " must be one expert of 32-row blocks");
  const size_t rowBytes = size_t(w.k) / 2, weightBytes = size_t(w.n) * rowBytes;
  in.slices.push_back(
      {name, index * weightBytes,
       formats::shuffleWeight(formats::packE2m1(w.codes, w.n, w.k), 1, w.n, rowBytes)});
  const size_t groups = size_t(w.k) / formats::kMxGroupSize;
  const size_t scaleBytes = size_t(w.n) * formats::paddedScaleCols(groups);
  std::vector<uint8_t> scales = formats::shuffleScales(w.scales, w.n, groups);
  scales.resize(scaleBytes);  // the padding rows of a lone expert
  in.slices.push_back({name + "_scale", index * scaleBytes, std::move(scales)});
}

}  // namespace

void LaunchInputs::append(LaunchInputs more) {
  for (RegionValues& v : more.values) values.push_back(std::move(v));
  for (RegionBytes& b : more.bytes) bytes.push_back(std::move(b));
  for (RegionSlice& s : more.slices) slices.push_back(std::move(s));
}

LaunchInputs k1Inputs(const LayerWeights& w, int rank, const StepInputs& in) {
  LaunchInputs k1;
  k1.values = {{"residual", in.residual}, {"x", in.x},
               {"post_in", in.post},      {"comb_in", in.comb},
               {"pre_in", in.pre},        {"hc_fn", w.attnFn},
               {"hc_base", w.attnBase},   {"hc_scale", w.attnScale},
               {"attn_norm", w.attnNorm}, {"q_norm", w.qNorm},
               {"kv_norm", w.kvNorm},     {"positions", in.positions},
               {"cos_sin", w.cosSin},     {"slot_mapping", in.slots}};
  addBlock(k1, "wqkv", w.wqkv);
  k1.bytes.push_back({"kv_cache", in.window.bytes});
  addBlock(k1, "wq_b", w.ranks[rank].wqb);
  return k1;
}

LaunchInputs ffnHalfInputs(const LayerWeights& w, int rank) {
  LaunchInputs ffn;
  ffn.values = {{"ffn_hc_fn", w.ffnFn},  {"ffn_hc_base", w.ffnBase}, {"ffn_hc_scale", w.ffnScale},
                {"ffn_norm", w.ffnNorm}, {"gate", w.gate},           {"gate_bias", w.bias}};
  addBlock(ffn, "shared_gate_up", w.ranks[rank].sharedGateUp);
  addBlock(ffn, "shared_down", w.ranks[rank].sharedDown);
  return ffn;
}

LaunchInputs k2Inputs(const LayerWeights& w, int rank, const StepInputs& in) {
  LaunchInputs k2;
  k2.values = {{"positions", in.positions},
               {"slot_mapping", in.slots},
               {"cos_sin", w.cosSin},
               {"block_table", in.blockTables},
               {"compressed_block_table", in.compressedBlockTables},
               {"index_topk", in.topk},
               {"attn_sink", w.ranks[rank].sinks}};
  k2.bytes.push_back({"compressed_cache", in.compressed.bytes});
  addBlock(k2, "wo_a", w.ranks[rank].woA);
  addBlock(k2, "wo_b", w.ranks[rank].woB);
  k2.append(ffnHalfInputs(w, rank));
  return k2;
}

LaunchInputs expertInputs(const ExpertWeights& expert, int index) {
  LaunchInputs in;
  addExpertWeight(in, "w13", expert.w13, index);
  addExpertWeight(in, "w2", expert.w2, index);
  return in;
}

LayerOutputs layerOutputs(const std::function<std::vector<float>(const std::string&)>& region) {
  LayerOutputs out;
  out.x = region("x_out");
  out.residual = region("ffn_residual_out");
  out.pre = region("ffn_pre");
  out.post = region("ffn_post");
  out.comb = region("ffn_comb");
  return out;
}

}  // namespace monodc::reference
