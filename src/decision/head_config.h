// joint_head_config.json (clef-decision.md §6.1): six required integer keys.
#pragma once
#include <cstddef>
#include <string>

#include "core/json.h"

namespace verdict::decision {

struct HeadConfig {
  std::size_t hidden_size = 0;     // H, must equal the backbone hidden size
  std::size_t width = 0;           // W
  std::size_t routing_layers = 0;  // R (evidence layers)
  std::size_t layers = 0;          // Ld (field layers)
  std::size_t heads = 0;           // nh, divides W
  std::size_t feedforward = 0;     // F

  std::size_t head_dim() const { return width / heads; }

  // Validates the six keys (present, non-negative integers; hidden_size, width, heads and
  // feedforward at least 1; width divisible by heads). `what` names the source in errors.
  static HeadConfig from_json(const Json& json, const std::string& what);
  static HeadConfig load(const std::string& path);

  bool operator==(const HeadConfig&) const = default;
};

}  // namespace verdict::decision
