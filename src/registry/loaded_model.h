// A decision model made resident: the Qwen3.5 backbone, the joint head, the lexical rows of the
// output projection and the engine (scheduler thread + state pool) that runs the backbone. It is
// destroyed only when no request holds a lease on it (registry.h).
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
  int64_t slots = 4;           // sequences prefilled at once
  int64_t max_tokens = 16384;  // the model's max_length: the longest record a slot holds
  engine::SchedulerOptions scheduler;
  StepModelWrapper wrap;       // optional
};

class LoadedModel {
 public:
  // Loads the backbone and the head of a decision checkpoint and starts its engine thread. Throws
  // verdict::Error with a one-line diagnosis (rule I3's {reason}).
  static std::unique_ptr<LoadedModel> load(const ModelSpec& spec, const LoadParams& params);
  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  engine::Scheduler& scheduler() { return *scheduler_; }
  const engine::Scheduler& scheduler() const { return *scheduler_; }
  const decision::JointHead& head() const { return *head_; }
  // Lexical rows for the head: rows of lm_head (or of the embeddings when tied), upcast to fp32.
  const decision::LexicalRowFn& lexical() const { return lexical_; }

 private:
  LoadedModel() = default;

  std::unique_ptr<models::qwen35::Backbone> backbone_;
  std::unique_ptr<decision::JointHead> head_;
  decision::LexicalRowFn lexical_;
  // Declared last, destroyed first: the engine thread stops before the backbone goes.
  std::unique_ptr<engine::Scheduler> scheduler_;
};

}  // namespace verdict::registry
