// One registered model (internal to the registry). The static part is set by initialize(); the
// residency part is guarded by the registry's mutex.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "chat/chat_template.h"
#include "chat/generation.h"
#include "decision/encoder.h"
#include "decision/tokenizer_adapter.h"
#include "registry/loaded_model.h"
#include "registry/memory.h"
#include "registry/model_spec.h"
#include "registry/registry.h"
#include "tokenizer/tokenizer.h"

namespace verdict::registry {

struct ModelEntry {
  using Clock = std::chrono::steady_clock;

  ModelSpec spec;
  // Set by initialize().
  std::size_t max_length = 0;
  int64_t created = 0;
  MemoryEstimate estimate;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
  std::unique_ptr<decision::HfPieceTokenizer> pieces;
  std::unique_ptr<decision::RecordEncoder> encoder;
  std::unique_ptr<chat::ChatTemplate> chat_template;  // chat models
  chat::GenerationOptions generation_defaults;         // chat models

  // Residency (registry mutex).
  ModelState state = ModelState::kUnloaded;
  std::unique_ptr<LoadedModel> loaded;
  std::size_t charged = 0;        // bytes counted in the registry's `used` (reserved while loading)
  bool pinned = false;
  bool unload_requested = false;
  int leases = 0;
  Clock::time_point last_used = Clock::now();
  uint64_t loads = 0;
  double load_seconds = 0;        // the last completed load's duration
  uint64_t load_attempts = 0;     // completed attempts, successful or not
  std::string last_error;         // reason of the last failed attempt ("" after a success)
};

}  // namespace verdict::registry
