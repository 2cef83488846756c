// Which tokens of which running sequences go into the next forward step: every sequence in
// admission order gets its next piece (at most `chunk_tokens`) until the step's token budget is
// spent. Long records are thus prefilled piece by piece, interleaved with the others.
//
// A piece that is not a sequence's last ends on the model's alignment grid (StepModel::
// prefill_alignment): then how a record was cut, which depends on what else was running, never
// changes its results.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace verdict::engine {

struct BatchLimits {
  int64_t max_batch_tokens = 512;   // tokens per forward step, all sequences together (docs/serve.md)
  int64_t chunk_tokens = 512;       // tokens per sequence per step
};

struct PlannedChunk {
  std::size_t sequence = 0;  // index into the `remaining` span
  int64_t tokens = 0;        // > 0
};

// `chunk_tokens` rounded down to a multiple of `align`, and at least `align`.
int64_t aligned_chunk(int64_t chunk_tokens, int64_t align);

// The next piece of a sequence with `remaining` tokens to run when at most `room` fit: all of them
// if they fit, else the most that end on the grid of `align` (0: none this step).
int64_t next_piece(int64_t remaining, int64_t room, int64_t align);

// `remaining[i]` = tokens sequence i still has to run (0 = nothing this step); every sequence has
// run a multiple of `align` tokens so far. A budget below `align` is raised to it, so that each step
// makes progress.
std::vector<PlannedChunk> plan_step(std::span<const int64_t> remaining, const BatchLimits& limits, int64_t align = 1);

}  // namespace verdict::engine
