// A model made resident: the Qwen3.5 backbone and the engine (scheduler thread + state pool) that
// runs it; for a decision model also the joint head and the lexical rows of the output projection.
// (A chat model's tokenizer, template and generation defaults are read at start-up and live in the
// registry entry.) It is destroyed only when no request holds a lease on it (registry.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "decision/head.h"
#include "engine/scheduler.h"
#include "engine/step_model.h"
#include "models/qwen35/backbone.h"
#include "registry/model_spec.h"

namespace verdict::registry {

// Wraps the step model a loaded model runs on (tests use it to slow down or hold forward steps).
using StepModelWrapper =
    std::function<std::unique_ptr<engine::StepModel>(const std::string& model, std::unique_ptr<engine::StepModel>)>;

struct LoadParams {
  int64_t slots = 4;           // sequences in flight at once (decision records or chat streams)
  int64_t max_tokens = 16384;  // tokens one slot holds: a decision model's max_length, a chat model's context
  engine::SchedulerOptions scheduler;
  StepModelWrapper wrap;       // optional
};

class LoadedModel {
 public:
  // Loads the backbone (and, for a decision checkpoint, the head) and starts its engine thread.
  // Throws verdict::Error with a one-line diagnosis (rule I3's {reason}).
  static std::unique_ptr<LoadedModel> load(const ModelSpec& spec, const LoadParams& params);
  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  engine::Scheduler& scheduler() { return *scheduler_; }
  const engine::Scheduler& scheduler() const { return *scheduler_; }
  bool is_decision() const { return head_ != nullptr; }
  // Decision models only.
  const decision::JointHead& head() const { return *head_; }
  // Lexical rows for the head: rows of lm_head (or of the embeddings when tied), upcast to fp32.
  const decision::LexicalRowFn& lexical() const { return lexical_; }

 private:
  LoadedModel() = default;
  void start_engine(const ModelSpec& spec, const LoadParams& params);

  std::unique_ptr<models::qwen35::Backbone> backbone_;
  std::unique_ptr<decision::JointHead> head_;
  decision::LexicalRowFn lexical_;
  // Declared last, destroyed first: the engine thread stops before the backbone goes.
  std::unique_ptr<engine::Scheduler> scheduler_;
};

}  // namespace verdict::registry
