// Memory sizes: parsing `--max-memory`, the machine's RAM, and what a model takes once loaded.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "models/qwen35/config.h"

namespace verdict::registry {

// "8G", "512M", "1.5GiB", "64k", "1073741824" (bytes) or "60%" (of physical memory). Suffixes are
// binary (K = 1024) and case-insensitive; a trailing "B" or "iB" is accepted. Throws verdict::Error.
std::size_t parse_memory_size(std::string_view text);
// "1.5 GiB", "512.0 MiB", "12 B".
std::string format_bytes(std::size_t bytes);

// Physical memory of the machine (0 when unknown).
std::size_t physical_memory_bytes();
// 75 % of physical memory (8 GiB when it cannot be read).
std::size_t default_memory_budget();

struct MemoryEstimate {
  std::size_t weights = 0;      // backbone weights as loaded (mapped files + converted copies)
  std::size_t head = 0;         // joint head, upcast to fp32
  std::size_t state = 0;        // the sequence state pool (KV cache + DeltaNet states of every slot)
  std::size_t activations = 0;  // scratch of one forward step of max_batch_tokens rows
  std::size_t prefix_cache = 0; // a decision model's prefix cache at capacity (--decision-cache)
  std::size_t total() const { return weights + head + state + activations + prefix_cache; }
};

// Bytes of the state pool for `slots` sequences of `max_tokens` tokens (what SeqStatePool holds).
std::size_t state_pool_bytes(const models::qwen35::Config& config, int64_t slots, int64_t max_tokens);

// The estimate for a model: its *.safetensors sizes (a BF16 head counted twice: it is upcast) or what its
// GGUF file's tensors hold once loaded and packed (gguf_weight_bytes), with `output_copy` (chat models) the
// packed copy of the output projection, the state pool and the activations of a full step.
MemoryEstimate estimate_model_memory(const std::string& dir, const models::qwen35::Config& config, int64_t slots,
                                     int64_t max_tokens, int64_t max_batch_tokens, bool output_copy = false);

}  // namespace verdict::registry
