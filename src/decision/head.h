// JointSchemaHead (clef-decision.md §6): scores every option of every question of one record from
// the backbone's final-norm hidden rows. The matrices stay in their stored precision (BF16, F16 or F32 on disk)
// and are upcast exactly inside the products, the vectors are upcast to fp32 at load; the forward pass runs in
// fp32 (the default) or in fp64 (tests and goldens, §7), with the same results as from fp32 copies.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "decision/encoder.h"
#include "decision/head_config.h"

namespace verdict::decision {

struct HeadWeights;  // head_weights.h

enum class HeadPrecision { kF32, kF64 };

// Writes the lexical row of a token (its `lm_head.weight` row, or the embedding row when the
// checkpoint ties them) into `row` (hidden_size floats).
using LexicalRowFn = std::function<void(TokenId id, std::span<float> row)>;

struct HeadInput {
  std::span<const float> hidden;               // [L, hidden_size] row-major final-norm hidden rows
  std::span<const TokenId> input_ids;          // [L]
  std::span<const EncodedQuestion> questions;  // type_id, spans (absolute, half-open)
  LexicalRowFn lexical;
};

// Logits per question, in the head's option order (length N_i each).
using QuestionLogits = std::vector<std::vector<double>>;

class JointHead {
 public:
  // `dir`/joint_head_config.json + `dir`/joint_head.safetensors.
  static JointHead load_dir(const std::string& dir);
  // Strict loading: every tensor of §6.2 present with its shape, no other tensor.
  static JointHead load(const std::string& config_path, const std::string& weights_path);

  JointHead(JointHead&&) noexcept;
  JointHead& operator=(JointHead&&) noexcept;
  ~JointHead();

  const HeadConfig& config() const { return config_; }
  // Scalars as loaded (prior_logit_scale, joint_logit_scale, residual_gate).
  float prior_logit_scale() const;
  float joint_logit_scale() const;
  float residual_gate() const;
  // Bytes the loaded parameters take (the matrices as stored, the vectors in fp32).
  std::size_t weight_bytes() const;
  // weight_bytes() of the head `weights_path` would load, from its header alone. Throws verdict::Error
  // when the file cannot be read as safetensors.
  static std::size_t loaded_bytes(const std::string& weights_path);

  // Runs the head on one record. Throws verdict::Error for inconsistent input (hidden size, spans
  // outside the record or empty, a question without options, a type id outside 0..2).
  QuestionLogits forward(const HeadInput& input, HeadPrecision precision = HeadPrecision::kF32) const;

 private:
  JointHead(HeadConfig config, std::unique_ptr<HeadWeights> weights);
  HeadConfig config_;
  std::unique_ptr<HeadWeights> weights_;
};

}  // namespace verdict::decision
