// Random weights and step inputs of a whole layer in the real formats, for
// the layer tests (the simulator at the tiny config, the GPU at full size):
// deterministic in the seed, with magnitudes that keep every stage in range.
#pragma once

#include <random>
#include <vector>

#include "monodc/reference/Layer.h"

namespace monodc::reference {

// f32 [positions][ropeDim]: row p holds cos(p w_j) for j < ropeDim / 2, then
// sin(p w_j), w_j = 10000^(-2j / ropeDim).
std::vector<float> ropeTable(int ropeDim, int positions);

// A cache whose every slot holds the record of a random bf16 key.
KvCache randomKvCache(const KvRecordLayout& layout, int pages, std::mt19937& rng);

// Everything but the routed experts (randomExperts gives those).
LayerWeights randomLayerWeights(const LayerDims& dims, unsigned seed);

// Expert `expert` of rank `rank`: uniformly random e2m1 codes under E8M0
// scales drawn around the magnitude of a well-scaled layer, from a generator
// of its own (seed, rank, expert), so any subset of the experts can be made.
ExpertWeights randomExpert(const LayerDims& dims, unsigned seed, int rank, int expert);
ExpertSource randomExperts(const LayerDims& dims, unsigned seed);

// The compressed keys a step's tokens read are, by default, those of a
// ratio-2 layer.
inline constexpr int kCompressRatio = 2;

// One step of `rows` tokens of separate requests: token 0 at position 0 (one
// key, no compressed row), the others anywhere in the RoPE table. Each token
// owns min(5, pages / rows) cache pages (a 128-key window spans at most 5)
// around which its newest logical pages wrap, so its key, inserted at its
// position, lands where no other token writes; older window pages, where the
// token owns fewer than 5, are read from pages owned by none (or any, when
// all are owned); the block table's later logical pages name random pages.
// The top-k list names random compressed rows written so far, as many as a
// layer of `compressRatio` reads (1 or 2; 0: none), a sixteenth of them -1,
// through a compressed block table of random pages.
StepInputs randomStep(const LayerDims& dims, int rows, unsigned seed,
                      int compressRatio = kCompressRatio);

// New compressed-key inputs of `in` for a layer of `compressRatio`: a
// compressed block table of random pages and a top-k list as randomStep
// makes them, for the positions `in` holds.
void randomCompressedKeys(const LayerDims& dims, StepInputs& in, int compressRatio,
                          std::mt19937& rng);

// `real` with rows inserted at `padAt` (indices of the padded step) that
// hold `garbage` in every per-row input and block tables and top-k lists
// naming real pages and rows; marked as pad rows by slot -1 and position -1
// when `marked` (docs/numerics.md section 7).
StepInputs padStep(const StepInputs& real, const std::vector<int>& padAt, float garbage,
                   bool marked = true);

}  // namespace monodc::reference
