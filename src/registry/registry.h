// The model registry: every model the server knows, its kind, its tokenizer (decision models,
// loaded at start so validation never waits for weights) and its residency.
//
// Residency: models load on first use, on `--preload`/`--pin` at start, or by the admin routes.
// The sum of the estimates of resident models stays within `max_memory_bytes`: loading a model
// that would exceed it first evicts the least recently used idle unpinned models, and when that
// cannot make room the load is refused (InsufficientMemoryError, rule O3). `ttl` unloads idle
// unpinned models.
//
// Leases: a request holds a Lease on its model from validation to response. A leased model is never
// evicted or unloaded; an unload requested meanwhile is deferred until the last lease drops.
// Concurrent first requests for an unloaded model trigger one load; the others wait for it.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "decision/encoder.h"
#include "chat/chat_template.h"
#include "chat/generation.h"
#include "decision/request.h"
#include "engine/scheduler.h"
#include "registry/loaded_model.h"
#include "registry/model_spec.h"

namespace verdict::registry {

struct ModelEntry;  // model_entry.h
class Registry;

enum class ModelState { kUnloaded, kLoading, kLoaded };

// The default prefix cache of each decision model (--decision-cache): the record prefix and a few
// states of clef-flash's size (a snapshot holds the DeltaNet states plus the KV and hidden rows of its
// tokens).
inline constexpr std::size_t kDefaultDecisionCacheBytes = std::size_t{256} << 20;

struct RegistryOptions {
  std::vector<ModelSpec> models;                       // registry order
  std::vector<std::string> decision_aliases = {"jev-latest"};  // besides `default`
  std::optional<std::string> default_decision_model;   // else the first decision model
  std::map<std::string, std::size_t> max_length;       // per model; default 16,384 (Qwen3.5 Clef)
  std::vector<std::string> pinned;                     // loaded at start, never evicted
  std::size_t max_memory_bytes = 0;                    // 0: 75 % of physical memory
  std::optional<std::chrono::milliseconds> ttl;        // unload idle unpinned models after this
  int64_t slots = 4;                                   // sequences prefilled at once, per decision model
  int64_t chat_slots = 16;                             // streams generating at once, per chat model
  std::size_t chat_context = 4096;                     // tokens per chat stream (prompt + completion)
  engine::BatchLimits batch;                           // tokens per step, chunk size
  std::size_t max_queue = 64;                          // requests waiting per model
  std::size_t decision_cache_bytes = kDefaultDecisionCacheBytes;  // prefix cache per decision model (0: none)
  StepModelWrapper wrap_step_model;                    // tests: wraps every loaded step model
  // One line per completed load, failed load, eviction and TTL unload ("model a loaded in 0.52 s (~12.0 MiB)");
  // verdict serve writes them to its log. Called without the registry's lock held.
  std::function<void(const std::string&)> log;
};

struct ModelStatus {
  std::string name;
  std::string path;
  ModelKind kind = ModelKind::kDecision;
  ModelState state = ModelState::kUnloaded;
  bool pinned = false;
  bool unload_pending = false;
  int leases = 0;
  std::size_t max_length = 0;    // decision models
  std::size_t memory_bytes = 0;  // the estimate charged against the budget while resident
  int64_t created = 0;           // Unix seconds of the main weight file's modification time
  uint64_t loads = 0;            // completed loads
  double load_seconds = 0;       // the last completed load's duration (0 before the first)
  std::string last_error;        // the last failed load's reason
  std::optional<engine::SchedulerStats> engine;  // while loaded

  // "unloaded", "loading", "loaded" or "pinned" (a resident pinned model).
  std::string state_name() const;
  bool resident() const { return state == ModelState::kLoaded; }
};

struct MemoryStatus {
  std::size_t budget = 0;
  std::size_t used = 0;  // estimates of resident and loading models
  uint64_t evictions = 0;
};

class Lease {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease();

  explicit operator bool() const { return entry_ != nullptr; }
  const std::string& name() const;
  ModelKind kind() const;
  std::size_t max_length() const;
  // The record encoder (decision models; its tokenizer is resident from start-up).
  const decision::RecordEncoder& encoder() const;
  decision::MediaSupport media() const { return {}; }  // text only until the vision tower exists
  // Chat models (resident from start-up): tokenizer, chat template, generation defaults.
  const tokenizer::Tokenizer& tokenizer() const;
  const chat::ChatTemplate& chat_template() const;
  const chat::GenerationOptions& generation_defaults() const;
  bool resident() const;

  // Makes the model resident and returns it: at once when loaded, after the load in progress, or
  // by loading it here (evicting idle models first). `keep_waiting` is polled while another
  // request's load is awaited; when it returns false, WaitAbandoned is thrown. Throws
  // InsufficientMemoryError, LoadFailedError, NotLoadableError.
  LoadedModel& ensure_loaded(const std::function<bool()>& keep_waiting = {});

  // Drops the lease now (the destructor does it otherwise).
  void release();

 private:
  friend class Registry;
  Lease(Registry* registry, ModelEntry* entry) : registry_(registry), entry_(entry) {}
  Registry* registry_ = nullptr;
  ModelEntry* entry_ = nullptr;
};

// What an admin unload did.
enum class UnloadOutcome { kUnloaded, kAlreadyUnloaded, kDeferred };

class Registry {
 public:
  // Checks the configuration (names, aliases, pins, max lengths refer to registered models; no
  // alias collides with a model name). Reads nothing heavy. Throws verdict::Error.
  explicit Registry(RegistryOptions options);
  // Unloads everything. No lease may be outstanding.
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Start-up: reads every model's config, loads decision tokenizers, computes memory estimates and
  // validates max lengths against the backbones. Then ready() is true and the TTL janitor runs.
  // Throws verdict::Error naming the model at fault.
  void initialize();
  bool ready() const;
  // Loads the pinned models and `names` (--preload), in registry order. Throws on failure.
  void preload(const std::vector<std::string>& names);

  // Resolves a trimmed `model` value (systemone-api.md §4) and leases the model. Throws
  // decision::DecisionError 404 model_not_found (M1) or 400 model_not_decision (M2).
  Lease resolve_decision(const std::string& requested);
  // Resolves the `model` of a chat request (nullopt: the first chat model) and leases it. Throws
  // decision::DecisionError 404 model_not_found, or 400 model_not_chat for a decision model.
  Lease resolve_chat(const std::optional<std::string>& requested);
  // Leases a model by canonical name (any kind); DecisionError 404 model_not_found otherwise.
  Lease lease(const std::string& name);

  // Admin operations by canonical name (DecisionError 404 for unknown names).
  ModelStatus load(const std::string& name);
  UnloadOutcome unload(const std::string& name);
  ModelStatus pin(const std::string& name);
  ModelStatus unpin(const std::string& name);

  std::vector<ModelStatus> status() const;
  std::optional<ModelStatus> status(const std::string& name) const;
  MemoryStatus memory() const;
  // The default decision model's canonical name (nullopt without decision models).
  std::optional<std::string> default_decision_model() const;
  // `default` followed by the configured aliases.
  std::vector<std::string> aliases() const;
  // The M1 message for a requested name.
  std::string not_found_message(const std::string& requested) const;
  // True while the default decision model is loading (for /health).
  bool default_model_loading() const;

 private:
  friend class Lease;
  ModelEntry* find(const std::string& name) const;
  Lease take_lease(ModelEntry& entry);
  void drop_lease(ModelEntry& entry);
  LoadedModel& ensure_loaded(ModelEntry& entry, const std::function<bool()>& keep_waiting);
  // Evicts idle models until `entry` fits the budget; their names go to `evicted`.
  std::vector<std::unique_ptr<LoadedModel>> make_room_locked(ModelEntry& entry, std::vector<std::string>& evicted);
  void log(const std::string& line) const;
  std::unique_ptr<LoadedModel> detach_locked(ModelEntry& entry);
  ModelStatus status_locked(const ModelEntry& entry) const;
  void janitor();

  RegistryOptions options_;
  std::vector<std::unique_ptr<ModelEntry>> entries_;
  std::optional<std::string> default_decision_;
  std::size_t budget_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // a load finished, a model was unloaded, or stopping
  std::size_t used_ = 0;
  uint64_t evictions_ = 0;
  bool ready_ = false;
  bool stopping_ = false;
  std::thread janitor_;
};

}  // namespace verdict::registry
