// How a batched forward step is laid out: the new tokens of every sequence, concatenated row after
// row. Projections run once over all rows; the mixers walk each sequence's segment with its state.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "models/qwen35/config.h"
#include "models/qwen35/seq_state.h"

namespace verdict::models::qwen35 {

// The new tokens of one sequence inside the batch.
struct Segment {
  int64_t row0 = 0;   // first row in the batch
  int64_t n = 0;      // new tokens
  int64_t slot = 0;   // its SeqStatePool slot
  int64_t start = 0;  // tokens the sequence held before this step (position of its first new token)
  // Where the DeltaNet chunk grid restarts inside the new tokens: offsets in (0, n), ascending (the
  // sequence's seams, SequenceInput::seams). The delta rule runs each stretch between them on its own.
  std::vector<int64_t> restarts{};
  bool chunked = true;  // false: a decoded token (n = 1), run by the delta rule's recurrent form
  // States to save after these offsets in (0, n] (each a restart or n), into snapshots[0 …]: the
  // DeltaNet layers fill their conv and recurrent parts as they pass (SequenceInput::save_at).
  std::vector<int64_t> saves{};
  SeqSnapshot* snapshots = nullptr;
};

// What every layer of one forward step needs besides its weights.
struct StepContext {
  const Config& config;
  SeqStatePool& pool;
  std::span<const Segment> segments;
  int64_t rows = 0;  // Σ n over the segments
  HeadMapping head_mapping = HeadMapping::Grouped;
};

}  // namespace verdict::models::qwen35
