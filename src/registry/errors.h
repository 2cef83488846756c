// What the registry refuses, for the server to turn into status codes (systemone-api.md §9, §12).
// Model resolution itself throws decision::DecisionError (rules M1, M2).
#pragma once
#include <string>

#include "core/error.h"

namespace verdict::registry {

// Rule O3: the model is not resident and the memory budget is held by models that cannot be
// evicted (leased or pinned).
class InsufficientMemoryError : public Error {
 public:
  InsufficientMemoryError(std::string model, const std::string& detail)
      : Error("model '" + model + "' cannot be loaded now: memory budget exhausted; retry later"),
        model_(std::move(model)), detail_(detail) {}
  const std::string& model() const { return model_; }
  // Why, for the log: the budget, what is held and by whom.
  const std::string& detail() const { return detail_; }

 private:
  std::string model_;
  std::string detail_;
};

// Rule I3: the checkpoint failed to load; reason() is the loader's one-line diagnosis.
class LoadFailedError : public Error {
 public:
  LoadFailedError(std::string model, std::string reason)
      : Error("model '" + model + "' failed to load: " + reason), model_(std::move(model)), reason_(std::move(reason)) {}
  const std::string& model() const { return model_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string model_;
  std::string reason_;
};

// A model this server cannot load (a chat model before the chat engine exists).
class NotLoadableError : public Error {
 public:
  explicit NotLoadableError(const std::string& message) : Error(message) {}
};

// A pinned model cannot be unloaded (unpin it first).
class ModelPinnedError : public Error {
 public:
  explicit ModelPinnedError(const std::string& model)
      : Error("model '" + model + "' is pinned; unpin it before unloading it") {}
};

// The caller stopped waiting for a load (its client left or its queue time ran out).
class WaitAbandoned : public Error {
 public:
  WaitAbandoned() : Error("stopped waiting for the model to load") {}
};

}  // namespace verdict::registry
