#include "decision/head_config.h"

#include "core/error.h"

namespace verdict::decision {

namespace {

// Generous bound that keeps every size product far from overflow.
constexpr std::size_t kMaxDimension = std::size_t{1} << 20;

std::size_t read_dim(const Json& json, const char* key, std::size_t min, const std::string& what) {
  auto it = json.find(key);
  if (it == json.end()) throw Error(what + ": missing key '" + key + "'");
  if (!it->is_number_integer()) throw Error(what + ": '" + key + "' must be an integer");
  const auto v = it->get<int64_t>();
  if (v < static_cast<int64_t>(min) || static_cast<std::size_t>(v) > kMaxDimension) {
    throw Error(what + ": '" + key + "' = " + std::to_string(v) + " is out of range [" + std::to_string(min) +
                ", " + std::to_string(kMaxDimension) + "]");
  }
  return static_cast<std::size_t>(v);
}

}  // namespace

HeadConfig HeadConfig::from_json(const Json& json, const std::string& what) {
  if (!json.is_object()) throw Error(what + ": expected a JSON object");
  HeadConfig c;
  c.hidden_size = read_dim(json, "hidden_size", 1, what);
  c.width = read_dim(json, "width", 1, what);
  c.routing_layers = read_dim(json, "routing_layers", 0, what);
  c.layers = read_dim(json, "layers", 0, what);
  c.heads = read_dim(json, "heads", 1, what);
  c.feedforward = read_dim(json, "feedforward", 1, what);
  if (c.width % c.heads != 0) {
    throw Error(what + ": width " + std::to_string(c.width) + " is not divisible by heads " +
                std::to_string(c.heads));
  }
  return c;
}

HeadConfig HeadConfig::load(const std::string& path) { return from_json(load_json_file(path), path); }

}  // namespace verdict::decision
