#include "engine/prefix_cache.h"

#include <algorithm>
#include <utility>

namespace verdict::engine {

std::size_t CachedPrefix::bytes() const {
  return tokens.size() * sizeof(TokenId) + rows.size() * sizeof(float) + (state ? state->bytes() : 0);
}

uint64_t PrefixCache::hash(std::span<const TokenId> tokens) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the ids' bytes
  for (TokenId id : tokens) {
    auto v = static_cast<uint32_t>(id);
    for (int b = 0; b < 4; ++b, v >>= 8) {
      h ^= v & 0xffu;
      h *= 1099511628211ull;
    }
  }
  return h;
}

PrefixCache::Entries::iterator PrefixCache::locate_locked(std::span<const TokenId> prefix, uint64_t key) const {
  const auto [first, last] = index_.equal_range(key);
  for (auto it = first; it != last; ++it) {
    const std::vector<TokenId>& held = (*it->second)->tokens;
    if (std::equal(held.begin(), held.end(), prefix.begin(), prefix.end())) return it->second;
  }
  return entries_.end();
}

void PrefixCache::erase_locked(Entries::iterator entry, std::vector<std::shared_ptr<const CachedPrefix>>* dropped) {
  const auto [first, last] = index_.equal_range(hash((*entry)->tokens));
  for (auto it = first; it != last; ++it)
    if (it->second == entry) {
      index_.erase(it);
      break;
    }
  bytes_ -= (*entry)->bytes();
  if (dropped) dropped->push_back(std::move(*entry));
  entries_.erase(entry);
}

std::shared_ptr<const CachedPrefix> PrefixCache::find(std::span<const TokenId> tokens,
                                                      std::span<const int64_t> lengths) {
  std::lock_guard lock(mutex_);
  ++stats_.lookups;
  int64_t best = 0;
  Entries::iterator found = entries_.end();
  for (int64_t n : lengths) {
    if (n <= best || n <= 0 || n > static_cast<int64_t>(tokens.size())) continue;
    const auto prefix = tokens.first(static_cast<std::size_t>(n));
    const auto it = locate_locked(prefix, hash(prefix));
    if (it == entries_.end()) continue;
    best = n;
    found = it;
  }
  if (found == entries_.end()) return nullptr;
  entries_.splice(entries_.begin(), entries_, found);  // most recently used
  ++stats_.hits;
  stats_.hit_tokens += static_cast<uint64_t>(best);
  return *found;
}

bool PrefixCache::contains(std::span<const TokenId> prefix) const {
  std::lock_guard lock(mutex_);
  return locate_locked(prefix, hash(prefix)) != entries_.end();
}

bool PrefixCache::insert(std::shared_ptr<const CachedPrefix> entry,
                         std::vector<std::shared_ptr<const CachedPrefix>>* dropped) {
  if (!entry) return false;
  const std::size_t size = entry->bytes();
  std::lock_guard lock(mutex_);
  const uint64_t key = hash(entry->tokens);
  if (const auto old = locate_locked(entry->tokens, key); old != entries_.end()) erase_locked(old, dropped);
  if (size > capacity_) return false;
  while (bytes_ + size > capacity_ && !entries_.empty()) {
    erase_locked(std::prev(entries_.end()), dropped);
    ++stats_.evictions;
  }
  entries_.push_front(std::move(entry));
  index_.emplace(key, entries_.begin());
  bytes_ += size;
  ++stats_.inserts;
  return true;
}

PrefixCacheStats PrefixCache::stats() const {
  std::lock_guard lock(mutex_);
  PrefixCacheStats s = stats_;
  s.capacity_bytes = capacity_;
  s.bytes = bytes_;
  s.entries = entries_.size();
  return s;
}

}  // namespace verdict::engine
