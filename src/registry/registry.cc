#include "registry/registry.h"

#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <utility>

#include "chat/model_defaults.h"
#include "core/error.h"
#include "decision/errors.h"
#include "formats/hf_config.h"
#include "models/qwen35/config.h"
#include "models/qwen35/seq_state.h"
#include "registry/model_entry.h"
#include "registry/model_source.h"

namespace verdict::registry {
namespace {

constexpr std::size_t kDefaultMaxLength = 16384;  // Qwen3.5 Clef (systemone-api.md §6)

int64_t modification_time(const std::string& model_path) {
  const std::string dir = backbone_path(model_path);  // a decision folder's .gguf backbone
  if (is_gguf_model(dir)) {
    struct stat st {};
    return ::stat(dir.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_mtime) : 0;
  }
  for (const char* name : {"/model.safetensors", "/model.safetensors.index.json", "/config.json"}) {
    struct stat st {};
    if (::stat((dir + name).c_str(), &st) == 0) return static_cast<int64_t>(st.st_mtime);
  }
  return 0;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string ModelStatus::state_name() const {
  switch (state) {
    case ModelState::kLoading: return "loading";
    case ModelState::kLoaded: return pinned ? "pinned" : "loaded";
    default: return "unloaded";
  }
}

Registry::Registry(RegistryOptions options) : options_(std::move(options)) {
  std::set<std::string> names;
  for (const ModelSpec& spec : options_.models) {
    check_model_name(spec.name);
    if (!names.insert(spec.name).second) throw Error("model name '" + spec.name + "' is registered twice");
    auto entry = std::make_unique<ModelEntry>();
    entry->spec = spec;
    entries_.push_back(std::move(entry));
  }
  std::set<std::string> aliases = {"default"};
  for (const std::string& alias : options_.decision_aliases) {
    if (alias.empty()) throw Error("--decision-alias needs a name");
    if (!aliases.insert(alias).second) throw Error("decision alias '" + alias + "' is given twice");
  }
  for (const std::string& alias : aliases)
    if (names.count(alias)) throw Error("decision alias '" + alias + "' collides with the model of that name");
  const auto decision_model = [&](const std::string& name, const char* flag) {
    const ModelEntry* e = find(name);
    if (e == nullptr) throw Error(std::string(flag) + " " + name + ": no model of that name is registered");
    if (e->spec.kind != ModelKind::kDecision) throw Error(std::string(flag) + " " + name + ": not a decision model");
  };
  if (options_.default_decision_model) {
    decision_model(*options_.default_decision_model, "--default-decision-model");
    default_decision_ = options_.default_decision_model;
  } else {
    for (const auto& e : entries_)
      if (e->spec.kind == ModelKind::kDecision) {
        default_decision_ = e->spec.name;
        break;
      }
  }
  for (const auto& [name, length] : options_.max_length) {
    decision_model(name, "--max-length");
    if (length < 1) throw Error("--max-length " + name + ": the limit must be at least 1");
  }
  for (const std::string& name : options_.pinned) {
    ModelEntry* e = find(name);
    if (e == nullptr) throw Error("--pin " + name + ": no model of that name is registered");
    e->pinned = true;
  }
  if (options_.slots < 1) throw Error("the number of sequences per model must be at least 1");
  if (options_.chat_slots < 1) throw Error("--chat-slots must be at least 1");
  if (options_.chat_context < 2) throw Error("--ctx-size must be at least 2");
  if (options_.max_queue < 1) throw Error("--max-queue must be at least 1");
  budget_ = options_.max_memory_bytes > 0 ? options_.max_memory_bytes : default_memory_budget();
}

Registry::~Registry() {
  std::vector<std::unique_ptr<LoadedModel>> gone;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& e : entries_)
      if (e->state == ModelState::kLoaded) gone.push_back(detach_locked(*e));
  }
  changed_.notify_all();
  if (janitor_.joinable()) janitor_.join();
  gone.clear();
}

void Registry::initialize() {
  for (auto& e : entries_) {
    const std::string& dir = e->spec.path;
    // Computed outside the lock, published under it: /metrics and /v1/models may run meanwhile.
    std::size_t max_length = 0;
    int64_t created = 0;
    MemoryEstimate estimate;
    std::unique_ptr<tokenizer::Tokenizer> tokenizer;
    std::unique_ptr<chat::ChatTemplate> chat_template;
    chat::GenerationOptions defaults;
    const bool is_chat = e->spec.kind == ModelKind::kChat;
    try {
      created = modification_time(dir);
      const formats::ModelConfig model = read_model_config(dir);
      const models::qwen35::Config config = models::qwen35::make_config(model, model_config_path(dir));
      check_gguf_tensor_types(dir, model.text.num_hidden_layers);
      const auto it = options_.max_length.find(e->spec.name);
      max_length = it != options_.max_length.end() ? it->second : is_chat ? options_.chat_context : kDefaultMaxLength;
      const int64_t positions = model.text.max_position_embeddings;
      if (positions > 0 && max_length > static_cast<std::size_t>(positions)) {
        if (it != options_.max_length.end())
          throw Error("--max-length " + std::to_string(max_length) + " exceeds the backbone's max_position_embeddings (" +
                      std::to_string(positions) + ")");
        max_length = static_cast<std::size_t>(positions);
      }
      estimate = estimate_model_memory(dir, config, is_chat ? options_.chat_slots : options_.slots,
                                       static_cast<int64_t>(max_length), options_.batch.max_batch_tokens,
                                       /*output_copy=*/is_chat);
      if (!is_chat && options_.decision_cache_bytes > 0)  // the entries, and the spares that saves reuse
        estimate.prefix_cache = options_.decision_cache_bytes + models::qwen35::spare_snapshot_bytes(config);
      tokenizer = std::make_unique<tokenizer::Tokenizer>(read_model_tokenizer(dir));
      if (is_chat) {
        // A template using something the Jinja engine lacks fails here, at start-up, not per request.
        chat_template = std::make_unique<chat::ChatTemplate>(read_chat_template(dir, *tokenizer));
        defaults = chat::model_generation_defaults(dir, config.eos_token_ids, *tokenizer);
      }
    } catch (const std::exception& ex) {
      throw Error("model '" + e->spec.name + "' (" + dir + "): " + ex.what());
    }
    std::lock_guard lock(mutex_);
    e->max_length = max_length;
    e->created = created;
    e->estimate = estimate;
    e->tokenizer = std::move(tokenizer);
    if (!is_chat) {
      e->pieces = std::make_unique<decision::HfPieceTokenizer>(*e->tokenizer);
      e->encoder = std::make_unique<decision::RecordEncoder>(*e->pieces);
    } else {
      e->chat_template = std::move(chat_template);
      e->generation_defaults = std::move(defaults);
    }
  }
  {
    std::lock_guard lock(mutex_);
    ready_ = true;
  }
  if (options_.ttl) janitor_ = std::thread([this] { janitor(); });
}

bool Registry::ready() const {
  std::lock_guard lock(mutex_);
  return ready_;
}

void Registry::preload(const std::vector<std::string>& names) {
  for (const std::string& name : names)
    if (find(name) == nullptr) throw Error("--preload " + name + ": no model of that name is registered");
  for (const auto& e : entries_) {
    const bool wanted = e->pinned || std::find(names.begin(), names.end(), e->spec.name) != names.end();
    if (!wanted) continue;
    Lease lease = take_lease(*e);
    lease.ensure_loaded();
  }
}

ModelEntry* Registry::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e->spec.name == name) return e.get();
  return nullptr;
}

std::string Registry::not_found_message(const std::string& requested) const {
  std::vector<std::string> decision_names;
  for (const auto& e : entries_)
    if (e->spec.kind == ModelKind::kDecision) decision_names.push_back(e->spec.name);
  return "model '" + requested + "' not found; available decision models: " +
         (decision_names.empty() ? std::string("(none)") : join(decision_names)) + "; aliases: " + join(aliases());
}

Lease Registry::resolve_decision(const std::string& requested) {
  ModelEntry* e = find(requested);
  if (e == nullptr && default_decision_) {
    const std::vector<std::string> names = aliases();
    if (std::find(names.begin(), names.end(), requested) != names.end()) e = find(*default_decision_);
  }
  if (e == nullptr) throw decision::DecisionError(404, "model_not_found", not_found_message(requested));
  if (e->spec.kind != ModelKind::kDecision)
    throw decision::DecisionError(400, "model_not_decision",
                                  "model '" + e->spec.name + "' is a chat model; use /v1/chat/completions");
  return take_lease(*e);
}

Lease Registry::resolve_chat(const std::optional<std::string>& requested) {
  ModelEntry* e = nullptr;
  std::vector<std::string> chat_names;
  for (const auto& entry : entries_)
    if (entry->spec.kind == ModelKind::kChat) chat_names.push_back(entry->spec.name);
  if (!requested) {
    if (chat_names.empty()) throw decision::DecisionError(404, "model_not_found", "no chat model is served");
    e = find(chat_names.front());
  } else {
    e = find(*requested);
    if (e == nullptr && default_decision_) {
      const std::vector<std::string> names = aliases();
      if (std::find(names.begin(), names.end(), *requested) != names.end()) e = find(*default_decision_);
    }
  }
  if (e == nullptr)
    throw decision::DecisionError(404, "model_not_found",
                                  "model '" + *requested + "' not found; available chat models: " +
                                      (chat_names.empty() ? std::string("(none)") : join(chat_names)));
  if (e->spec.kind != ModelKind::kChat)
    throw decision::DecisionError(400, "model_not_chat",
                                  "Model '" + requested.value_or(e->spec.name) +
                                      "' is not an LLM / chat model. Use /v1/systemone for decision models.");
  return take_lease(*e);
}

Lease Registry::lease(const std::string& name) {
  ModelEntry* e = find(name);
  if (e == nullptr) throw decision::DecisionError(404, "model_not_found", not_found_message(name));
  return take_lease(*e);
}

Lease Registry::take_lease(ModelEntry& entry) {
  std::lock_guard lock(mutex_);
  ++entry.leases;
  entry.last_used = ModelEntry::Clock::now();
  return Lease(this, &entry);
}

std::optional<std::string> Registry::default_decision_model() const { return default_decision_; }

std::vector<std::string> Registry::aliases() const {
  std::vector<std::string> out = {"default"};
  out.insert(out.end(), options_.decision_aliases.begin(), options_.decision_aliases.end());
  return out;
}

bool Registry::default_model_loading() const {
  if (!default_decision_) return false;
  std::lock_guard lock(mutex_);
  return find(*default_decision_)->state == ModelState::kLoading;
}

ModelStatus Registry::status_locked(const ModelEntry& e) const {
  ModelStatus s;
  s.name = e.spec.name;
  s.path = e.spec.path;
  s.kind = e.spec.kind;
  s.state = e.state;
  s.pinned = e.pinned;
  s.unload_pending = e.unload_requested;
  s.leases = e.leases;
  s.max_length = e.max_length;
  s.memory_bytes = e.estimate.total();
  s.created = e.created;
  s.loads = e.loads;
  s.load_seconds = e.load_seconds;
  s.last_error = e.last_error;
  if (e.state == ModelState::kLoaded && e.loaded) s.engine = e.loaded->scheduler().stats();
  return s;
}

std::vector<ModelStatus> Registry::status() const {
  std::lock_guard lock(mutex_);
  std::vector<ModelStatus> out;
  for (const auto& e : entries_) out.push_back(status_locked(*e));
  return out;
}

std::optional<ModelStatus> Registry::status(const std::string& name) const {
  const ModelEntry* e = find(name);
  if (e == nullptr) return std::nullopt;
  std::lock_guard lock(mutex_);
  return status_locked(*e);
}

MemoryStatus Registry::memory() const {
  std::lock_guard lock(mutex_);
  return {budget_, used_, evictions_};
}

// ---- Lease ----

Lease::Lease(Lease&& other) noexcept : registry_(other.registry_), entry_(other.entry_) {
  other.registry_ = nullptr;
  other.entry_ = nullptr;
}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    registry_ = other.registry_;
    entry_ = other.entry_;
    other.registry_ = nullptr;
    other.entry_ = nullptr;
  }
  return *this;
}

Lease::~Lease() { release(); }

void Lease::release() {
  if (entry_ == nullptr) return;
  registry_->drop_lease(*entry_);
  registry_ = nullptr;
  entry_ = nullptr;
}

const std::string& Lease::name() const { return entry_->spec.name; }

ModelKind Lease::kind() const { return entry_->spec.kind; }

std::size_t Lease::max_length() const { return entry_->max_length; }

const tokenizer::Tokenizer& Lease::tokenizer() const { return *entry_->tokenizer; }

const chat::ChatTemplate& Lease::chat_template() const {
  if (!entry_->chat_template) throw Error("model '" + entry_->spec.name + "' has no chat template");
  return *entry_->chat_template;
}

const chat::GenerationOptions& Lease::generation_defaults() const { return entry_->generation_defaults; }

const decision::RecordEncoder& Lease::encoder() const {
  if (!entry_->encoder) throw Error("model '" + entry_->spec.name + "' has no record encoder");
  return *entry_->encoder;
}

bool Lease::resident() const {
  std::lock_guard lock(registry_->mutex_);
  return entry_->state == ModelState::kLoaded;
}

LoadedModel& Lease::ensure_loaded(const std::function<bool()>& keep_waiting) {
  return registry_->ensure_loaded(*entry_, keep_waiting);
}

}  // namespace verdict::registry
