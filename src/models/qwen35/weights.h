// The Qwen3.5 text weights in the layout the kernels consume, loaded from a Hugging Face or MLX
// safetensors checkpoint (spec §9.1, §9.2). Every tensor's shape is checked against the config
// (spec §1.3); an inconsistent checkpoint is refused with the tensor, expected and found shapes.
//
// Storage: F32 and BF16 matrices are read in place from the memory-mapped files (BF16 is upcast
// inside the matmul kernel, accumulating in fp32); MLX affine matrices stay packed and are
// dequantized on the fly by the kernel (their scales and biases are converted to fp32 at load).
// Vectors (norms, conv taps, A_log, dt_bias) are converted to fp32 at load. Zero-centred norm
// weights are stored as their full scale 1 + w (MLX files already hold it: spec §9.2).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/gguf.h"
#include "formats/hf_config.h"
#include "formats/tensor_store.h"
#include "kernels/ops.h"
#include "models/qwen35/config.h"

namespace verdict::models::qwen35 {

// A weight matrix and the storage its view points into (converted copies, MLX scales). Move-only:
// moving keeps the vectors' buffers, so the view stays valid.
struct Matrix {
  kernels::WeightMatrix view;
  std::vector<float> f32;
  std::vector<uint16_t> bf16;
  std::vector<uint32_t> packed;
  std::vector<float> scales, biases;
  kernels::PackedWeight repacked;  // the kernels' packed copy (view.pack points into it), when packed

  Matrix() = default;
  Matrix(Matrix&&) = default;
  Matrix& operator=(Matrix&&) = default;
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
};

struct DeltaNetWeights {
  Matrix in_proj_qkv;          // [conv_dim, H], rows Q, K, V
  Matrix in_proj_z;            // [value_dim, H]
  Matrix in_proj_b;            // [nv, H]
  Matrix in_proj_a;            // [nv, H]
  Matrix out_proj;             // [H, value_dim]
  std::vector<float> conv;     // [K, conv_dim] (taps major); tap K−1 multiplies the current token
  std::vector<float> a_log;    // [nv]
  std::vector<float> dt_bias;  // [nv]
  std::vector<float> norm;     // [dv], plain weight of the gated RMSNorm
};

struct AttentionWeights {
  Matrix q_proj;               // [2·nq·hd, H], query and gate interleaved per head
  Matrix k_proj, v_proj;       // [nkv·hd, H]
  Matrix o_proj;               // [H, nq·hd]
  std::vector<float> q_norm;   // [hd], full scale 1 + w
  std::vector<float> k_norm;   // [hd], full scale 1 + w
};

struct MlpWeights {
  Matrix gate_proj, up_proj;   // [I, H]
  Matrix down_proj;            // [H, I]
};

struct LayerWeights {
  std::vector<float> input_norm;  // [H], full scale
  std::vector<float> post_norm;   // [H], full scale
  DeltaNetWeights deltanet;       // set for DeltaNet layers
  AttentionWeights attention;     // set for full-attention layers
  MlpWeights mlp;
};

// The kernels' type for a GGUF tensor type verdict loads (nullopt for the others).
std::optional<kernels::WeightType> gguf_weight_type(formats::GgmlType t);
// Those types' names, for messages: "F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, BF16,
// IQ4_NL, IQ4_XS" (in ggml's type-id order).
std::string gguf_weight_type_names();

class Weights {
 public:
  // Opens the safetensors of `dir` and loads every text tensor. Throws verdict::Error.
  static std::unique_ptr<Weights> load(const std::string& dir, const Config& config,
                                       const formats::ModelConfig& model);
  // Loads a llama.cpp `qwen35` GGUF file (spec §9.3; weights_gguf.cc). The value heads stay in the
  // file's tiled order (head_mapping = Tiled); matrices are used in place from the mapped file.
  static std::unique_ptr<Weights> load_gguf(std::unique_ptr<formats::GgufFile> file, const Config& config);

  Matrix embed;                   // [V, H]
  Matrix lm_head;                 // [V, H]; unset (rows 0) when the embeddings are tied
  std::vector<float> final_norm;  // [H], full scale
  std::vector<LayerWeights> layers;

  std::string prefix;             // "model.language_model.", "model." or "language_model.model."
  bool norms_folded = false;      // the file stored 1 + w (MLX)
  bool quantized = false;         // some matrix is MLX-quantized
  // Which key head a DeltaNet value head reads in this file's order: Grouped for Hugging Face and
  // MLX files, Tiled for GGUF files (whose value heads llama.cpp's converter reordered).
  HeadMapping head_mapping = HeadMapping::Grouped;

  // Repacks the layer matrices for the fast GEMMs (kernels::pack), and with `output` the output
  // projection too, unless $VERDICT_PACK=0 (kernels::pack_enabled). Packed BF16 matrices round the
  // activations to bf16 and packed quantized ones to int8 per 32-column block, as llama.cpp does and
  // close to the reference, which runs its backbone in bf16 (docs/performance.md, "Numerical contract");
  // VERDICT_PACK=0 keeps exact fp32 activations. Tied embeddings get the packed copy on `embed` itself:
  // matmul reads it, while dequantize_row (the embedding lookup) reads the rows as loaded.
  // The stored rows of a packed layer matrix are not read again (matmul reads the packed copy), so their
  // pages of the mapped file leave resident memory (they come back from the file if ever read); the
  // embedding rows stay, as the lookups read them.
  void pack_matrices(bool output);

  // Bytes the matrices hold once loaded (and packed): each packed matrix its packed copy (its mapped rows
  // are dropped), every other matrix its stored rows, each matrix the copies it owns (converted rows, MLX
  // scales and biases), the embeddings their stored rows (lookups read them) plus their packed copy when
  // they are the packed output projection. Norm vectors and conv taps not included.
  std::size_t held_bytes() const;

  // The output projection: lm_head, or the embeddings when tied.
  const kernels::WeightMatrix& output() const { return lm_head.view.rows > 0 ? lm_head.view : embed.view; }

 private:
  std::unique_ptr<formats::TensorStore> store_;  // the mapped files the views point into
  std::unique_ptr<formats::GgufFile> gguf_;      // or the mapped GGUF file
};

}  // namespace verdict::models::qwen35
