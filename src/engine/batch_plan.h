// Which tokens of which running sequences go into the next forward step: every sequence in
// admission order gets its next piece (at most `chunk_tokens`) until the step's token budget is
// spent. Long records are thus prefilled piece by piece, interleaved with the others.
//
// A piece that is not a sequence's last ends on the sequence's grid: position 0 and each of its seams
// (StepInput::seams), each followed by every StepModel::prefill_alignment() positions. Then how a
// record was cut, which depends on what else was running and on where the prefix cache resumed it, never
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

// Where one sequence stands: `done` of `total` tokens run (`done` on its grid).
struct SequenceWork {
  int64_t done = 0, total = 0;
  std::span<const int64_t> seams{};  // ascending
};

struct PlannedChunk {
  std::size_t sequence = 0;  // index into the span given to plan_step
  int64_t tokens = 0;        // > 0
};

// `chunk_tokens` rounded down to a multiple of `align`, and at least `align`.
int64_t aligned_chunk(int64_t chunk_tokens, int64_t align);

// The largest grid position ≤ pos of a sequence with these seams (see above).
int64_t grid_floor(int64_t pos, std::span<const int64_t> seams, int64_t align);

// The next piece of a sequence with `remaining` tokens to run when at most `room` fit: all of them
// if they fit, else the most that end on the grid of `align` (0: none this step).
int64_t next_piece(int64_t remaining, int64_t room, int64_t align);
// The same for a sequence with seams.
int64_t next_piece(const SequenceWork& work, int64_t room, int64_t align);

// `remaining[i]` = tokens sequence i still has to run (0 = nothing this step); every sequence has
// run a multiple of `align` tokens so far. A budget below `align` is raised to it, so that each step
// makes progress.
std::vector<PlannedChunk> plan_step(std::span<const int64_t> remaining, const BatchLimits& limits, int64_t align = 1);
std::vector<PlannedChunk> plan_step(std::span<const SequenceWork> work, const BatchLimits& limits, int64_t align = 1);

}  // namespace verdict::engine
