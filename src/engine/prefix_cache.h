// The prefix cache of one model's decisions (clef-decision.md §5, "Prefix cache"): saved sequence
// states at a record's seams, each with the final-norm hidden rows of the tokens before it, so that a
// record beginning with the same tokens starts from there (usage.cached_tokens).
//
// An entry is keyed by its exact token ids. The engine saves one at a seam of a running record when
// none is held for that prefix, and a new record resumes from the longest held prefix that ends at one
// of its own seams. Because a record's results depend on its seams and not on where it was cut
// (batch_plan.h), a record resumed from the cache gets the rows it would have computed, bit for bit.
// Entries are dropped least recently used first to stay within the byte capacity.
//
// Thread-safe: the engine thread finds and inserts; stats() may be read from any thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/step_model.h"

namespace verdict::engine {

struct CachedPrefix {
  std::vector<TokenId> tokens;                  // the prefix
  std::shared_ptr<const StateSnapshot> state;   // the sequence's state after it
  std::vector<float> rows;                      // [tokens, hidden size]
  std::size_t bytes() const;
};

struct PrefixCacheStats {
  std::size_t capacity_bytes = 0, bytes = 0, entries = 0;
  uint64_t lookups = 0, hits = 0;   // records that looked, and that resumed from an entry
  uint64_t hit_tokens = 0;          // tokens not run thanks to the cache
  uint64_t inserts = 0, evictions = 0;
};

class PrefixCache {
 public:
  explicit PrefixCache(std::size_t capacity_bytes) : capacity_(capacity_bytes) {}

  std::size_t capacity_bytes() const { return capacity_; }

  // The longest held prefix of `tokens` whose length is one of `lengths`, or nullptr (counted as a
  // lookup, and as a hit when found).
  std::shared_ptr<const CachedPrefix> find(std::span<const TokenId> tokens, std::span<const int64_t> lengths);
  // Whether `prefix` is held (not counted; does not refresh its recency).
  bool contains(std::span<const TokenId> prefix) const;
  // Holds a new entry (replacing one with the same tokens), then drops the least recently used others
  // until the bytes fit; an entry larger than the whole capacity is not held. False when not held.
  // With `dropped`, the entries let go are moved there, so that the caller frees their memory later
  // (outside its own lock).
  bool insert(std::shared_ptr<const CachedPrefix> entry,
              std::vector<std::shared_ptr<const CachedPrefix>>* dropped = nullptr);

  PrefixCacheStats stats() const;

 private:
  using Entries = std::list<std::shared_ptr<const CachedPrefix>>;  // most recently used first
  static uint64_t hash(std::span<const TokenId> tokens);
  Entries::iterator locate_locked(std::span<const TokenId> prefix, uint64_t key) const;
  void erase_locked(Entries::iterator entry, std::vector<std::shared_ptr<const CachedPrefix>>* dropped);

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  mutable Entries entries_;
  std::unordered_multimap<uint64_t, Entries::iterator> index_;
  std::size_t bytes_ = 0;
  PrefixCacheStats stats_;
};

}  // namespace verdict::engine
