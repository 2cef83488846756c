// Model presets for `verdict make-model`: the real shapes of the released Qwen3.5 dense models (spec
// qwen35.md §1.3), small shapes for tests and demos, and Clef decision models (a Qwen3.5 backbone plus
// the joint schema head of clef-decision.md §6).
//
// Choices shared by every preset (documented in the generated files' shapes, not hidden):
//  * `mtp_num_hidden_layers` is 0 and no `mtp.*` tensors are written (as in the Clef releases; the base
//    Qwen3.5 releases carry one MTP layer that only speculative decoding would use);
//  * no vision tensors are written; config.json still carries a small placeholder `vision_config`, as the
//    fixture checkpoints do, so the file has the release's structure;
//  * the tokenizer scheme decides the ids: `Qwen35` puts the 33 special tokens at their real ids
//    248044…248076 (regular tokens 0…248043, embedding rows 248320); `Compact` is the fixture scheme
//    (756 regular tokens, nine special tokens from 756, rows padded to 768).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::modelgen {

struct BackboneShape {
  int64_t hidden = 0;        // H
  int64_t layers = 0;        // L
  int64_t intermediate = 0;  // I
  int64_t nq = 0, nkv = 0, head_dim = 0;
  int64_t nk = 0, nv = 0, dk = 0, dv = 0;
  int64_t conv_kernel = 4;
  int64_t vocab = 0;         // embedding rows
  bool tied = false;
  std::vector<int64_t> mrope_section;  // sums to rotary_dim / 2
  int64_t full_attention_interval = 4;
  double partial_rotary_factor = 0.25;

  bool is_attention(int64_t layer) const { return (layer + 1) % full_attention_interval == 0; }
  int64_t key_dim() const { return nk * dk; }
  int64_t value_dim() const { return nv * dv; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
};

// joint_head_config.json (clef-decision.md §6.1).
struct HeadShape {
  int64_t hidden = 0, width = 0, routing_layers = 0, layers = 0, heads = 0, feedforward = 0;
};

enum class TokenizerScheme { Qwen35, Compact };

struct Preset {
  std::string name;
  std::string summary;
  BackboneShape backbone;
  TokenizerScheme tokenizer = TokenizerScheme::Compact;
  std::optional<HeadShape> head;  // decision models only
};

// Every preset, in the order `make-model --help` lists them.
const std::vector<Preset>& presets();
// Throws verdict::UsageError listing the known names when `name` is unknown.
const Preset& find_preset(std::string_view name);

}  // namespace verdict::modelgen
