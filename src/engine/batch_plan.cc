#include "engine/batch_plan.h"

#include <algorithm>

namespace verdict::engine {

std::vector<PlannedChunk> plan_step(std::span<const int64_t> remaining, const BatchLimits& limits) {
  std::vector<PlannedChunk> plan;
  int64_t budget = std::max<int64_t>(limits.max_batch_tokens, 1);
  const int64_t chunk = std::max<int64_t>(limits.chunk_tokens, 1);
  for (std::size_t i = 0; i < remaining.size() && budget > 0; ++i) {
    const int64_t n = std::min({remaining[i], chunk, budget});
    if (n <= 0) continue;
    plan.push_back({i, n});
    budget -= n;
  }
  return plan;
}

}  // namespace verdict::engine
