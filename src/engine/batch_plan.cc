#include "engine/batch_plan.h"

#include <algorithm>

namespace verdict::engine {

int64_t aligned_chunk(int64_t chunk_tokens, int64_t align) {
  align = std::max<int64_t>(align, 1);
  return std::max(align, chunk_tokens - chunk_tokens % align);
}

int64_t grid_floor(int64_t pos, std::span<const int64_t> seams, int64_t align) {
  align = std::max<int64_t>(align, 1);
  int64_t origin = 0;
  for (int64_t seam : seams)
    if (seam <= pos) origin = std::max(origin, seam);
  return origin + (pos - origin) / align * align;
}

int64_t next_piece(int64_t remaining, int64_t room, int64_t align) {
  return next_piece(SequenceWork{0, std::max<int64_t>(remaining, 0)}, room, align);
}

int64_t next_piece(const SequenceWork& work, int64_t room, int64_t align) {
  const int64_t remaining = work.total - work.done;
  if (remaining <= 0 || room <= 0) return 0;
  const int64_t reach = work.done + std::min(room, remaining);
  if (reach == work.total) return remaining;
  return std::max<int64_t>(grid_floor(reach, work.seams, align) - work.done, 0);
}

std::vector<PlannedChunk> plan_step(std::span<const int64_t> remaining, const BatchLimits& limits, int64_t align) {
  std::vector<SequenceWork> work;
  work.reserve(remaining.size());
  for (int64_t r : remaining) work.push_back({0, std::max<int64_t>(r, 0)});
  return plan_step(std::span<const SequenceWork>(work), limits, align);
}

std::vector<PlannedChunk> plan_step(std::span<const SequenceWork> work, const BatchLimits& limits, int64_t align) {
  align = std::max<int64_t>(align, 1);
  std::vector<PlannedChunk> plan;
  const int64_t chunk = aligned_chunk(limits.chunk_tokens, align);
  int64_t budget = std::max(limits.max_batch_tokens, align);
  for (std::size_t i = 0; i < work.size() && budget > 0; ++i) {
    const int64_t n = next_piece(work[i], std::min(chunk, budget), align);
    if (n <= 0) continue;
    plan.push_back({i, n});
    budget -= n;
  }
  return plan;
}

}  // namespace verdict::engine
