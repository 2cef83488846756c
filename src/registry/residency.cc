// Residency: loading under the memory budget, LRU eviction of idle models, deferred unloads,
// pins and the TTL janitor. Everything that changes an entry's state holds the registry mutex;
// loading a checkpoint and stopping an engine happen outside it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "core/error.h"
#include "registry/errors.h"
#include "registry/memory.h"
#include "registry/model_entry.h"
#include "registry/registry.h"

namespace verdict::registry {

std::unique_ptr<LoadedModel> Registry::detach_locked(ModelEntry& e) {
  std::unique_ptr<LoadedModel> gone = std::move(e.loaded);
  e.state = ModelState::kUnloaded;
  used_ -= e.charged;
  e.charged = 0;
  e.unload_requested = false;
  changed_.notify_all();
  return gone;
}

void Registry::log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

std::vector<std::unique_ptr<LoadedModel>> Registry::make_room_locked(ModelEntry& e, std::vector<std::string>& evicted) {
  const std::size_t need = e.estimate.total();
  std::vector<std::unique_ptr<LoadedModel>> victims;
  if (used_ + need <= budget_) return victims;

  std::vector<ModelEntry*> idle;
  std::size_t freeable = 0;
  for (auto& other : entries_) {
    if (other.get() == &e || other->state != ModelState::kLoaded || other->pinned || other->leases > 0) continue;
    idle.push_back(other.get());
    freeable += other->charged;
  }
  if (used_ + need > budget_ + freeable) {
    std::string held;
    for (const auto& other : entries_) {
      if (other->charged == 0) continue;
      held += (held.empty() ? "" : ", ") + other->spec.name + " " + format_bytes(other->charged) +
              (other->pinned ? " pinned" : other->leases > 0 ? " leased" : other->state == ModelState::kLoading ? " loading" : "");
    }
    throw InsufficientMemoryError(e.spec.name, "needs " + format_bytes(need) + "; budget " + format_bytes(budget_) +
                                                   ", in use " + format_bytes(used_) + (held.empty() ? "" : " (" + held + ")"));
  }
  std::sort(idle.begin(), idle.end(), [](const ModelEntry* a, const ModelEntry* b) { return a->last_used < b->last_used; });
  for (ModelEntry* victim : idle) {
    if (used_ + need <= budget_) break;
    victims.push_back(detach_locked(*victim));
    evicted.push_back(victim->spec.name);
    ++evictions_;
  }
  return victims;
}

LoadedModel& Registry::ensure_loaded(ModelEntry& e, const std::function<bool()>& keep_waiting) {
  std::unique_lock lock(mutex_);
  const uint64_t attempts_seen = e.load_attempts;
  for (;;) {
    if (e.state == ModelState::kLoaded) {
      e.last_used = ModelEntry::Clock::now();
      return *e.loaded;
    }
    if (e.state == ModelState::kLoading) {
      changed_.wait_for(lock, std::chrono::milliseconds(50));
      if (keep_waiting && !keep_waiting()) throw WaitAbandoned();
      continue;
    }
    // Unloaded. A load this request waited for failed: report it rather than retrying at once.
    if (e.load_attempts != attempts_seen && !e.last_error.empty()) throw LoadFailedError(e.spec.name, e.last_error);
    break;
  }

  std::vector<std::string> evicted;
  std::vector<std::unique_ptr<LoadedModel>> victims = make_room_locked(e, evicted);
  e.state = ModelState::kLoading;
  e.charged = e.estimate.total();
  used_ += e.charged;
  LoadParams params;
  params.slots = e.spec.kind == ModelKind::kChat ? options_.chat_slots : options_.slots;
  params.max_tokens = static_cast<int64_t>(e.max_length);
  params.scheduler.batch = options_.batch;
  params.scheduler.max_queue = options_.max_queue;
  if (e.spec.kind == ModelKind::kDecision) params.scheduler.prefix_cache_bytes = options_.decision_cache_bytes;
  params.wrap = options_.wrap_step_model;
  lock.unlock();

  victims.clear();  // evicted engines stop here, outside the lock
  for (const std::string& name : evicted) log("model " + name + " evicted to make room for " + e.spec.name);
  std::unique_ptr<LoadedModel> loaded;
  std::string error;
  const auto started = std::chrono::steady_clock::now();
  try {
    loaded = LoadedModel::load(e.spec, params);
  } catch (const std::exception& ex) {
    error = ex.what();
    if (error.empty()) error = "unknown error";
  }

  lock.lock();
  ++e.load_attempts;
  if (!loaded) {
    used_ -= e.charged;
    e.charged = 0;
    e.state = ModelState::kUnloaded;
    e.last_error = error;
    changed_.notify_all();
    lock.unlock();
    log("model " + e.spec.name + " failed to load: " + error);
    throw LoadFailedError(e.spec.name, error);
  }
  e.loaded = std::move(loaded);
  e.state = ModelState::kLoaded;
  e.last_error.clear();
  ++e.loads;
  e.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  e.last_used = ModelEntry::Clock::now();
  changed_.notify_all();
  LoadedModel& model = *e.loaded;  // the caller's lease keeps it resident
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", e.load_seconds);
  const std::string line = "model " + e.spec.name + " loaded in " + seconds + " s (~" + format_bytes(e.charged) + ")";
  lock.unlock();
  log(line);
  return model;
}

void Registry::drop_lease(ModelEntry& e) {
  std::unique_ptr<LoadedModel> gone;
  {
    std::lock_guard lock(mutex_);
    --e.leases;
    e.last_used = ModelEntry::Clock::now();
    if (e.leases == 0 && e.unload_requested && !e.pinned && e.state == ModelState::kLoaded) gone = detach_locked(e);
  }
  // A deferred unload completes here, after the last request let go (the engine stops outside the lock).
}

ModelStatus Registry::load(const std::string& name) {
  Lease lease = this->lease(name);
  lease.ensure_loaded();
  std::lock_guard lock(mutex_);
  return status_locked(*find(name));
}

UnloadOutcome Registry::unload(const std::string& name) {
  ModelEntry* e = find(name);
  if (e == nullptr) (void)lease(name);  // throws the 404
  std::unique_ptr<LoadedModel> gone;
  std::lock_guard lock(mutex_);
  if (e->pinned) throw ModelPinnedError(name);
  if (e->state == ModelState::kUnloaded) return UnloadOutcome::kAlreadyUnloaded;
  if (e->state == ModelState::kLoaded && e->leases == 0) {
    gone = detach_locked(*e);
    return UnloadOutcome::kUnloaded;
  }
  e->unload_requested = true;  // leased or loading: done when the last lease drops
  return UnloadOutcome::kDeferred;
}

ModelStatus Registry::pin(const std::string& name) {
  Lease lease = this->lease(name);
  bool was_pinned = false;
  {
    std::lock_guard lock(mutex_);
    was_pinned = lease.entry_->pinned;
    lease.entry_->pinned = true;
    lease.entry_->unload_requested = false;
  }
  try {
    lease.ensure_loaded();
  } catch (...) {
    std::lock_guard lock(mutex_);
    lease.entry_->pinned = was_pinned;
    throw;
  }
  std::lock_guard lock(mutex_);
  return status_locked(*lease.entry_);
}

ModelStatus Registry::unpin(const std::string& name) {
  Lease lease = this->lease(name);
  std::lock_guard lock(mutex_);
  lease.entry_->pinned = false;
  lease.entry_->last_used = ModelEntry::Clock::now();
  return status_locked(*lease.entry_);
}

void Registry::janitor() {
  const auto ttl = *options_.ttl;
  const auto tick = std::clamp<std::chrono::milliseconds>(ttl / 4, std::chrono::milliseconds(10), std::chrono::seconds(1));
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    changed_.wait_for(lock, tick);
    if (stopping_) break;
    std::vector<std::unique_ptr<LoadedModel>> gone;
    std::vector<std::string> names;
    const auto now = ModelEntry::Clock::now();
    for (auto& e : entries_) {
      if (e->state == ModelState::kLoaded && !e->pinned && e->leases == 0 && now - e->last_used >= ttl) {
        gone.push_back(detach_locked(*e));
        names.push_back(e->spec.name);
      }
    }
    if (gone.empty()) continue;
    lock.unlock();
    gone.clear();
    for (const std::string& name : names)
      log("model " + name + " unloaded: idle for the TTL (" + std::to_string(ttl.count()) + " ms)");
    lock.lock();
  }
}

}  // namespace verdict::registry
