#include "registry/loaded_model.h"

#include <string>
#include <utility>

#include "core/error.h"
#include "engine/qwen35_step_model.h"
#include "decision/lexical.h"
#include "registry/model_source.h"

namespace verdict::registry {

std::unique_ptr<LoadedModel> LoadedModel::load(const ModelSpec& spec, const LoadParams& params) {
  std::unique_ptr<LoadedModel> m(new LoadedModel());
  models::qwen35::LoadOptions options;
  options.pack_output = spec.kind == ModelKind::kChat;  // decisions read hidden states, never logits
  m->backbone_ = models::qwen35::Backbone::load(backbone_path(spec.path), options);
  if (spec.kind == ModelKind::kChat) {
    m->start_engine(spec, params);
    return m;
  }
  m->head_ = std::make_unique<decision::JointHead>(decision::JointHead::load_dir(spec.path));

  const int64_t hidden = m->backbone_->config().hidden;
  if (static_cast<int64_t>(m->head_->config().hidden_size) != hidden)
    throw Error("joint head hidden size " + std::to_string(m->head_->config().hidden_size) +
                " does not match the backbone's " + std::to_string(hidden));

  m->lexical_ = decision::lexical_rows(m->backbone_->weights().output());

  m->start_engine(spec, params);
  return m;
}

void LoadedModel::start_engine(const ModelSpec& spec, const LoadParams& params) {
  std::unique_ptr<engine::StepModel> step =
      std::make_unique<engine::Qwen35StepModel>(*backbone_, params.slots, params.max_tokens);
  if (params.wrap) step = params.wrap(spec.name, std::move(step));
  engine::SchedulerOptions options = params.scheduler;
  options.name = spec.name;
  scheduler_ = std::make_unique<engine::Scheduler>(std::move(step), options);
}

LoadedModel::~LoadedModel() { scheduler_.reset(); }

}  // namespace verdict::registry
