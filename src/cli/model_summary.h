// What `verdict info` reports about a checkpoint folder, gathered from its files.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/model_files.h"
#include "core/json.h"
#include "formats/hf_config.h"

namespace verdict::cli {

struct TokenizerSummary {
  std::size_t vocab_size = 0;        // ids the tokenizer can produce (max id + 1)
  std::size_t model_vocab_size = 0;  // BPE vocabulary without added tokens
  std::size_t added_tokens = 0;
  std::string normalizer, pre_tokenizer, model, decoder;
  std::vector<std::pair<std::string, int32_t>> special_tokens;  // content, id
  std::optional<std::string> eos_token, bos_token, pad_token;   // from tokenizer_config.json
  bool chat_template = false;
};

struct HeadSummary {  // the Clef joint schema head of a decision model
  Json config;
  int64_t parameters = 0;
  std::size_t tensors = 0;
  std::size_t bytes = 0;         // as stored
  std::size_t loaded_bytes = 0;  // once loaded (decision::JointHead::loaded_bytes, as the memory budget charges it)
  std::map<std::string, int64_t> dtypes;
};

struct ModelSummary {
  std::string path;
  ModelKind kind = ModelKind::Chat;
  bool random_weights = false;  // written by `verdict make-model`
  formats::ModelConfig config;
  std::map<std::string, int64_t> dtypes;  // stored dtype -> tensor count (text model)
  std::size_t tensors = 0;
  std::size_t skipped_tensors = 0;            // vision / MTP
  int64_t parameters = 0;                     // text model, logical (quantized counted unpacked)
  int64_t embedding_parameters = 0;
  std::size_t weight_bytes = 0;               // text-model tensors as stored (memory-mapped)
  // The backbone's tensors as the loader holds them on this CPU (registry::gguf_weight_bytes or
  // safetensors_weight_bytes: the kernels' packed copies instead of the matrices they replace).
  std::size_t loaded_weight_bytes = 0;
  std::optional<int64_t> gguf_file_type;      // a GGUF backbone's general.file_type
  std::vector<std::string> unsupported_types;  // a GGUF backbone's tensor types the loader cannot compute with
  std::optional<TokenizerSummary> tokenizer;
  std::optional<HeadSummary> head;

  std::size_t memory_bytes() const { return weight_bytes + (head ? head->bytes : 0); }
  std::size_t loaded_bytes() const { return loaded_weight_bytes + (head ? head->loaded_bytes : 0); }
};

// Reads DIR's config, safetensors headers, tokenizer and head. Throws verdict::Error naming the file.
ModelSummary summarize_model(const std::string& dir);

std::string layer_pattern(const formats::TextConfig& text);  // e.g. "LLLA LLLA" (L = DeltaNet, A = attention)
Json summary_to_json(const ModelSummary& s);
std::string summary_to_text(const ModelSummary& s);

}  // namespace verdict::cli
