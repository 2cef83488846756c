#include "formats/hf_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/error.h"
#include "core/json.h"
#include "core/mapped_file.h"

namespace verdict::formats {
namespace {

// Bounds well above every released model, low enough that derived sizes cannot overflow.
constexpr int64_t kMaxHidden = int64_t{1} << 20;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxIntermediate = int64_t{1} << 22;
constexpr int64_t kMaxHeads = 1024;
constexpr int64_t kMaxHeadDim = 8192;
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxConvKernel = 64;
constexpr int64_t kMaxPositions = int64_t{1} << 31;
constexpr int64_t kMaxMtpLayers = 64;
constexpr int64_t kMaxTokenId = (int64_t{1} << 31) - 1;

std::string brief(const Json& v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

// Typed access to one JSON object, with messages "<file>: <path.key>: <problem>". A null value counts
// as absent (Hugging Face writes `"rope_scaling": null` and the like).
class Reader {
 public:
  Reader(const Json& object, const std::string& what, std::string prefix)
      : object_(&object), what_(&what), prefix_(std::move(prefix)) {}

  const std::string& prefix() const { return prefix_; }
  std::string path(std::string_view key) const { return prefix_ + std::string(key); }

  [[noreturn]] void fail(std::string_view key, const std::string& problem) const {
    throw Error(*what_ + ": " + path(key) + ": " + problem);
  }

  const Json* find(std::string_view key) const {
    const auto it = object_->find(key);
    if (it == object_->end() || it->is_null()) return nullptr;
    return &*it;
  }
  bool has(std::string_view key) const { return find(key) != nullptr; }

  std::optional<int64_t> get_int(std::string_view key) const {
    const Json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return as_int(*v, key);
  }
  int64_t as_int(const Json& v, std::string_view key) const {
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail(key, "value " + brief(v) + " out of range");
      return static_cast<int64_t>(u);
    }
    if (v.is_number_integer()) return v.get<int64_t>();
    fail(key, "expected an integer, got " + std::string(v.type_name()) + " " + brief(v));
  }
  int64_t require_int(std::string_view key, int64_t lo, int64_t hi) const {
    const auto v = get_int(key);
    if (!v) fail(key, "missing (required)");
    return check_range(key, *v, lo, hi);
  }
  std::optional<int64_t> get_int_in(std::string_view key, int64_t lo, int64_t hi) const {
    const auto v = get_int(key);
    if (v) check_range(key, *v, lo, hi);
    return v;
  }
  int64_t check_range(std::string_view key, int64_t v, int64_t lo, int64_t hi) const {
    if (v < lo || v > hi)
      fail(key, "value " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  }

  std::optional<double> get_number(std::string_view key) const {
    const Json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) fail(key, "expected a number, got " + std::string(v->type_name()) + " " + brief(*v));
    const double d = v->get<double>();
    if (!std::isfinite(d)) fail(key, "value " + brief(*v) + " is not finite");
    return d;
  }
  std::optional<bool> get_bool(std::string_view key) const {
    const Json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) fail(key, "expected true or false, got " + std::string(v->type_name()) + " " + brief(*v));
    return v->get<bool>();
  }
  std::optional<std::string> get_string(std::string_view key) const {
    const Json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) fail(key, "expected a string, got " + std::string(v->type_name()) + " " + brief(*v));
    return v->get<std::string>();
  }
  // An optional nested object.
  std::optional<Reader> get_object(std::string_view key) const {
    const Json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_object()) fail(key, "expected an object, got " + std::string(v->type_name()) + " " + brief(*v));
    return Reader(*v, *what_, path(key) + ".");
  }
  // Token ids: one integer or a list of them.
  std::optional<std::vector<int64_t>> get_token_ids(std::string_view key) const {
    const Json* v = find(key);
    if (v == nullptr) return std::nullopt;
    std::vector<int64_t> ids;
    if (v->is_array()) {
      for (std::size_t i = 0; i < v->size(); ++i)
        ids.push_back(check_range(path_index(key, i), as_int((*v)[i], path_index(key, i)), 0, kMaxTokenId));
    } else if (v->is_number()) {
      ids.push_back(check_range(key, as_int(*v, key), 0, kMaxTokenId));
    } else {
      fail(key, "expected a token id or a list of token ids, got " + std::string(v->type_name()) + " " + brief(*v));
    }
    return ids;
  }
  std::vector<int64_t> get_int_list(std::string_view key, int64_t lo, int64_t hi) const {
    std::vector<int64_t> out;
    const Json* v = find(key);
    if (v == nullptr) return out;
    if (!v->is_array()) fail(key, "expected a list of integers, got " + std::string(v->type_name()) + " " + brief(*v));
    for (std::size_t i = 0; i < v->size(); ++i)
      out.push_back(check_range(path_index(key, i), as_int((*v)[i], path_index(key, i)), lo, hi));
    return out;
  }
  static std::string path_index(std::string_view key, std::size_t i) {
    return std::string(key) + "[" + std::to_string(i) + "]";
  }

  const Json& json() const { return *object_; }

 private:
  const Json* object_;
  const std::string* what_;
  std::string prefix_;
};

bool valid_bits(int64_t bits) {
  return bits == 2 || bits == 3 || bits == 4 || bits == 5 || bits == 6 || bits == 8;
}
bool valid_group_size(int64_t gs) { return gs == 32 || gs == 64 || gs == 128; }

QuantSpec read_spec(const Reader& r, const QuantSpec* fallback) {
  QuantSpec spec;
  const auto bits = fallback ? r.get_int("bits") : std::optional<int64_t>(r.require_int("bits", 0, 64));
  const auto gs = fallback ? r.get_int("group_size")
                           : std::optional<int64_t>(r.require_int("group_size", 0, 1 << 20));
  const int64_t b = bits ? *bits : fallback->bits;
  const int64_t g = gs ? *gs : fallback->group_size;
  if (!valid_bits(b)) r.fail("bits", "unsupported value " + std::to_string(b) + " (expected 2, 3, 4, 5, 6 or 8)");
  if (!valid_group_size(g))
    r.fail("group_size", "unsupported value " + std::to_string(g) + " (expected 32, 64 or 128)");
  spec.bits = static_cast<int>(b);
  spec.group_size = static_cast<int>(g);
  return spec;
}

void check_mode(const Reader& r) {
  const auto mode = r.get_string("mode");
  if (mode && *mode != "affine")
    r.fail("mode", "unsupported quantization mode '" + *mode + "' (only \"affine\" is supported)");
}

// The MLX `quantization` block: global spec, per-module overrides, unquantized modules.
QuantizationConfig read_quantization(const Reader& q) {
  if (const auto method = q.get_string("quant_method"))
    q.fail("quant_method", "unsupported quantization method '" + *method +
                               "' (only MLX affine quantization is supported)");
  check_mode(q);
  QuantizationConfig cfg;
  cfg.mode = "affine";
  cfg.global = read_spec(q, nullptr);
  const Json& obj = q.json();
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& key = it.key();
    if (key == "bits" || key == "group_size" || key == "mode") continue;
    const Json& v = it.value();
    if (v.is_boolean()) {
      if (!v.get<bool>()) cfg.unquantized.push_back(key);
    } else if (v.is_object() && (v.contains("bits") || v.contains("group_size"))) {
      const auto module = q.get_object(key);
      check_mode(*module);
      cfg.overrides[key] = read_spec(*module, &cfg.global);
    }
  }
  return cfg;
}

LayerType parse_layer_type(const Reader& r, std::string_view key, const Json& v) {
  if (!v.is_string()) r.fail(key, "expected a layer type string, got " + std::string(v.type_name()) + " " + brief(v));
  const auto& s = v.get_ref<const std::string&>();
  if (s == "linear_attention") return LayerType::LinearAttention;
  if (s == "full_attention") return LayerType::FullAttention;
  r.fail(key, "unknown layer type '" + s + "' (expected \"linear_attention\" or \"full_attention\")");
}

void read_rope(const Reader& r, TextConfig& t) {
  const auto params = r.get_object("rope_parameters");
  const auto scaling = r.get_object("rope_scaling");

  // rope_type: "default" (plain or M-RoPE) is all Qwen3.5 uses; scaled variants change the frequencies.
  for (const auto* block : {params ? &*params : nullptr, scaling ? &*scaling : nullptr}) {
    if (block == nullptr) continue;
    for (std::string_view key : {"rope_type", "type"}) {
      const auto type = block->get_string(key);
      if (type && *type != "default" && *type != "mrope")
        block->fail(key, "unsupported rope type '" + *type + "' (only \"default\" is supported)");
    }
  }

  std::optional<double> theta = params ? params->get_number("rope_theta") : std::nullopt;
  if (!theta) theta = r.get_number("rope_theta");
  if (theta) {
    if (!(*theta > 0)) (params && params->has("rope_theta") ? *params : r).fail("rope_theta", "must be positive");
    t.rope_theta = *theta;
  }

  const Reader* prf_reader = nullptr;
  if (params && params->has("partial_rotary_factor")) prf_reader = &*params;
  else if (r.has("partial_rotary_factor")) prf_reader = &r;
  else if (scaling && scaling->has("partial_rotary_factor")) prf_reader = &*scaling;
  if (prf_reader != nullptr) {
    const double prf = *prf_reader->get_number("partial_rotary_factor");
    if (!(prf > 0.0 && prf <= 1.0))
      prf_reader->fail("partial_rotary_factor", "value " + std::to_string(prf) + " outside (0, 1]");
    t.partial_rotary_factor = prf;
  }

  const Reader* mrope_reader = nullptr;
  if (params && params->has("mrope_section")) mrope_reader = &*params;
  else if (scaling && scaling->has("mrope_section")) mrope_reader = &*scaling;
  if (mrope_reader != nullptr) t.mrope_section = mrope_reader->get_int_list("mrope_section", 0, kMaxHeadDim);

  std::optional<bool> interleaved = params ? params->get_bool("mrope_interleaved") : std::nullopt;
  if (!interleaved && scaling) interleaved = scaling->get_bool("mrope_interleaved");
  t.mrope_interleaved = interleaved.value_or(false);

  const int64_t rd = t.rotary_dim();
  const std::string_view prf_key = "partial_rotary_factor";
  const Reader& prf_owner = prf_reader != nullptr ? *prf_reader : r;
  if (rd <= 0)
    prf_owner.fail(prf_key, "rotary dim head_dim " + std::to_string(t.head_dim) + " × " +
                                std::to_string(t.partial_rotary_factor) + " is zero");
  if (rd % 2 != 0)
    prf_owner.fail(prf_key, "rotary dim head_dim " + std::to_string(t.head_dim) + " × " +
                                std::to_string(t.partial_rotary_factor) + " = " + std::to_string(rd) + " is odd");
  if (mrope_reader != nullptr && !t.mrope_section.empty()) {
    int64_t sum = 0;
    for (int64_t s : t.mrope_section) sum += s;
    if (sum != rd / 2)
      mrope_reader->fail("mrope_section", "sections sum to " + std::to_string(sum) + ", expected rotary dim / 2 = " +
                                              std::to_string(rd / 2));
  }
}

ModelConfig parse_model_config_impl(std::string_view json_text, const std::string& what) {
  const Json root = parse_json(json_text, what);
  if (!root.is_object()) throw Error(what + ": config is not a JSON object");
  const Reader top(root, what, "");

  ModelConfig cfg;
  cfg.model_type = top.get_string("model_type").value_or("");
  if (const Json* arch = top.find("architectures")) {
    if (!arch->is_array()) top.fail("architectures", "expected a list of strings");
    for (std::size_t i = 0; i < arch->size(); ++i) {
      const Json& a = (*arch)[i];
      if (!a.is_string()) top.fail(Reader::path_index("architectures", i), "expected a string, got " + brief(a));
      cfg.architectures.push_back(a.get<std::string>());
    }
  }

  const auto nested = top.get_object("text_config");
  cfg.nested_text_config = nested.has_value();
  const Reader& r = nested ? *nested : top;
  TextConfig& t = cfg.text;

  t.model_type = r.get_string("model_type").value_or(cfg.model_type);
  t.hidden_size = r.require_int("hidden_size", 1, kMaxHidden);
  t.num_hidden_layers = r.require_int("num_hidden_layers", 1, kMaxLayers);
  t.intermediate_size = r.require_int("intermediate_size", 1, kMaxIntermediate);
  t.num_attention_heads = r.require_int("num_attention_heads", 1, kMaxHeads);
  t.num_key_value_heads = r.require_int("num_key_value_heads", 1, kMaxHeads);
  if (t.num_attention_heads % t.num_key_value_heads != 0)
    r.fail("num_key_value_heads", std::to_string(t.num_key_value_heads) + " does not divide num_attention_heads " +
                                      std::to_string(t.num_attention_heads));
  if (const auto hd = r.get_int_in("head_dim", 1, kMaxHeadDim)) {
    t.head_dim = *hd;
  } else {
    if (t.hidden_size % t.num_attention_heads != 0)
      r.fail("num_attention_heads", std::to_string(t.num_attention_heads) + " does not divide hidden_size " +
                                        std::to_string(t.hidden_size) + " (and head_dim is absent)");
    t.head_dim = t.hidden_size / t.num_attention_heads;
  }
  t.vocab_size = r.require_int("vocab_size", 1, kMaxVocab);

  // Layer pattern: layer_types is authoritative; else every interval-th layer is full attention.
  if (const auto interval = r.get_int_in("full_attention_interval", 1, kMaxLayers)) t.full_attention_interval = *interval;
  if (const Json* lt = r.find("layer_types")) {
    if (!lt->is_array()) r.fail("layer_types", "expected a list of strings, got " + std::string(lt->type_name()));
    if (static_cast<int64_t>(lt->size()) != t.num_hidden_layers)
      r.fail("layer_types", "has " + std::to_string(lt->size()) + " entries, num_hidden_layers is " +
                                std::to_string(t.num_hidden_layers));
    for (std::size_t i = 0; i < lt->size(); ++i)
      t.layer_types.push_back(parse_layer_type(r, Reader::path_index("layer_types", i), (*lt)[i]));
  } else {
    for (int64_t i = 0; i < t.num_hidden_layers; ++i)
      t.layer_types.push_back((i + 1) % t.full_attention_interval == 0 ? LayerType::FullAttention
                                                                       : LayerType::LinearAttention);
  }

  // Gated DeltaNet geometry: required as soon as one layer is linear attention.
  const bool has_linear = t.count(LayerType::LinearAttention) > 0;
  auto linear_dim = [&](std::string_view key, int64_t hi) -> int64_t {
    if (has_linear) return r.require_int(key, 1, hi);
    return r.get_int_in(key, 1, hi).value_or(0);
  };
  t.linear_num_key_heads = linear_dim("linear_num_key_heads", kMaxHeads);
  t.linear_num_value_heads = linear_dim("linear_num_value_heads", kMaxHeads);
  t.linear_key_head_dim = linear_dim("linear_key_head_dim", kMaxHeadDim);
  t.linear_value_head_dim = linear_dim("linear_value_head_dim", kMaxHeadDim);
  t.linear_conv_kernel_dim = linear_dim("linear_conv_kernel_dim", kMaxConvKernel);
  if (t.linear_num_key_heads > 0 && t.linear_num_value_heads % t.linear_num_key_heads != 0)
    r.fail("linear_num_value_heads", std::to_string(t.linear_num_value_heads) +
                                         " is not a multiple of linear_num_key_heads " +
                                         std::to_string(t.linear_num_key_heads));

  if (const auto eps = r.get_number("rms_norm_eps")) {
    if (!(*eps > 0.0 && *eps < 1.0)) r.fail("rms_norm_eps", "value " + std::to_string(*eps) + " outside (0, 1)");
    t.rms_norm_eps = *eps;
  }
  read_rope(r, t);

  t.max_position_embeddings = r.get_int_in("max_position_embeddings", 0, kMaxPositions).value_or(0);
  t.mtp_num_hidden_layers = r.get_int_in("mtp_num_hidden_layers", 0, kMaxMtpLayers).value_or(0);
  t.hidden_act = r.get_string("hidden_act").value_or("silu");
  t.output_gate_type = r.get_string("output_gate_type");

  // tie_word_embeddings: the text config's, else the root's; a nested config must agree with the root.
  const auto tie_text = r.get_bool("tie_word_embeddings");
  const auto tie_root = nested ? top.get_bool("tie_word_embeddings") : tie_text;
  if (tie_text && tie_root && *tie_text != *tie_root)
    r.fail("tie_word_embeddings", std::string(*tie_text ? "true" : "false") +
                                      " disagrees with the top-level tie_word_embeddings " +
                                      (*tie_root ? "true" : "false"));
  t.tie_word_embeddings = tie_text ? *tie_text : tie_root.value_or(false);

  std::optional<std::string> dtype = r.get_string("dtype");
  if (!dtype) dtype = r.get_string("torch_dtype");
  if (!dtype && nested) dtype = top.get_string("dtype");
  if (!dtype && nested) dtype = top.get_string("torch_dtype");
  t.dtype = dtype.value_or("");

  std::optional<std::vector<int64_t>> eos = r.get_token_ids("eos_token_id");
  if (!eos && nested) eos = top.get_token_ids("eos_token_id");
  t.eos_token_ids = eos.value_or(std::vector<int64_t>{});

  // MLX quantization: `quantization`, mirrored in `quantization_config` (which other tools use for
  // their own, unsupported, schemes).
  if (const auto q = top.get_object("quantization")) cfg.quantization = read_quantization(*q);
  else if (const auto qc = top.get_object("quantization_config")) cfg.quantization = read_quantization(*qc);
  return cfg;
}

GenerationConfig parse_generation_config_impl(std::string_view json_text, const std::string& what) {
  const Json root = parse_json(json_text, what);
  if (!root.is_object()) throw Error(what + ": generation config is not a JSON object");
  const Reader r(root, what, "");
  GenerationConfig g;
  g.eos_token_ids = r.get_token_ids("eos_token_id").value_or(std::vector<int64_t>{});
  g.bos_token_id = r.get_int_in("bos_token_id", 0, kMaxTokenId);
  g.pad_token_id = r.get_int_in("pad_token_id", 0, kMaxTokenId);
  g.temperature = r.get_number("temperature");
  if (g.temperature && *g.temperature < 0.0) r.fail("temperature", "must not be negative");
  g.top_p = r.get_number("top_p");
  if (g.top_p && !(*g.top_p >= 0.0 && *g.top_p <= 1.0)) r.fail("top_p", "value outside [0, 1]");
  g.repetition_penalty = r.get_number("repetition_penalty");
  if (g.repetition_penalty && !(*g.repetition_penalty > 0.0)) r.fail("repetition_penalty", "must be positive");
  g.top_k = r.get_int_in("top_k", 0, std::numeric_limits<int32_t>::max());
  g.do_sample = r.get_bool("do_sample");
  return g;
}

}  // namespace

int64_t TextConfig::rotary_dim() const {
  // Python's int(head_dim * partial_rotary_factor): truncation.
  return static_cast<int64_t>(static_cast<double>(head_dim) * partial_rotary_factor);
}

int64_t TextConfig::count(LayerType type) const {
  return static_cast<int64_t>(std::count(layer_types.begin(), layer_types.end(), type));
}

ModelConfig parse_model_config(std::string_view json_text, const std::string& what) {
  try {
    return parse_model_config_impl(json_text, what);
  } catch (const Json::exception& e) {
    throw Error(what + ": " + e.what());
  }
}

ModelConfig load_model_config(const std::string& path) { return parse_model_config(read_text_file(path), path); }

GenerationConfig parse_generation_config(std::string_view json_text, const std::string& what) {
  try {
    return parse_generation_config_impl(json_text, what);
  } catch (const Json::exception& e) {
    throw Error(what + ": " + e.what());
  }
}

GenerationConfig load_generation_config(const std::string& path) {
  return parse_generation_config(read_text_file(path), path);
}

}  // namespace verdict::formats
