#include "engine/batch_plan.h"

#include <algorithm>

namespace verdict::engine {

int64_t aligned_chunk(int64_t chunk_tokens, int64_t align) {
  align = std::max<int64_t>(align, 1);
  return std::max(align, chunk_tokens - chunk_tokens % align);
}

int64_t next_piece(int64_t remaining, int64_t room, int64_t align) {
  if (remaining <= room) return std::max<int64_t>(remaining, 0);
  align = std::max<int64_t>(align, 1);
  return std::max<int64_t>(room - room % align, 0);
}

std::vector<PlannedChunk> plan_step(std::span<const int64_t> remaining, const BatchLimits& limits, int64_t align) {
  align = std::max<int64_t>(align, 1);
  std::vector<PlannedChunk> plan;
  const int64_t chunk = aligned_chunk(limits.chunk_tokens, align);
  int64_t budget = std::max(limits.max_batch_tokens, align);
  for (std::size_t i = 0; i < remaining.size() && budget > 0; ++i) {
    const int64_t n = next_piece(remaining[i], std::min(chunk, budget), align);
    if (n <= 0) continue;
    plan.push_back({i, n});
    budget -= n;
  }
  return plan;
}

}  // namespace verdict::engine
