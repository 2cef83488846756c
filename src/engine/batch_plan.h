// Which tokens of which running sequences go into the next forward step: every sequence in
// admission order gets its next chunk (at most `chunk_tokens`) until the step's token budget is
// spent. Long records are thus prefilled chunk by chunk, interleaved with the others.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace verdict::engine {

struct BatchLimits {
  int64_t max_batch_tokens = 8192;  // tokens per forward step, all sequences together
  int64_t chunk_tokens = 512;       // tokens per sequence per step
};

struct PlannedChunk {
  std::size_t sequence = 0;  // index into the `remaining` span
  int64_t tokens = 0;        // > 0
};

// `remaining[i]` = tokens sequence i still has to run (0 = nothing this step).
std::vector<PlannedChunk> plan_step(std::span<const int64_t> remaining, const BatchLimits& limits);

}  // namespace verdict::engine
