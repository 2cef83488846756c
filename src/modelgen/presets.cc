#include "modelgen/presets.h"

#include "core/error.h"

namespace verdict::modelgen {
namespace {

// Spec §1.3: vocab 248,320, hd 256 (rotary 64, M-RoPE [11, 11, 10]), nk 16, dk = dv = 128, K 4.
BackboneShape released(int64_t hidden, int64_t layers, int64_t intermediate, int64_t nq, int64_t nkv, int64_t nv,
                       bool tied) {
  BackboneShape s;
  s.hidden = hidden;
  s.layers = layers;
  s.intermediate = intermediate;
  s.nq = nq;
  s.nkv = nkv;
  s.head_dim = 256;
  s.nk = 16;
  s.nv = nv;
  s.dk = 128;
  s.dv = 128;
  s.vocab = 248320;
  s.tied = tied;
  s.mrope_section = {11, 11, 10};
  return s;
}

// The fixture's qwen35-tiny: H 64, 3 + 1 layers, FFN 192, attention 4/2 × 32, DeltaNet 2/4 × 16, vocab 768.
BackboneShape tiny(bool tied) {
  BackboneShape s;
  s.hidden = 64;
  s.layers = 4;
  s.intermediate = 192;
  s.nq = 4;
  s.nkv = 2;
  s.head_dim = 32;
  s.nk = 2;
  s.nv = 4;
  s.dk = 16;
  s.dv = 16;
  s.vocab = 768;
  s.tied = tied;
  s.mrope_section = {2, 1, 1};
  return s;
}

// The fixture's qwen35-small: H 256, 6 + 2 layers, FFN 768, attention 8/2 × 64, DeltaNet 4/8 × 32, vocab 768.
BackboneShape small(bool tied) {
  BackboneShape s;
  s.hidden = 256;
  s.layers = 8;
  s.intermediate = 768;
  s.nq = 8;
  s.nkv = 2;
  s.head_dim = 64;
  s.nk = 4;
  s.nv = 8;
  s.dk = 32;
  s.dv = 32;
  s.vocab = 768;
  s.tied = tied;
  s.mrope_section = {3, 3, 2};
  return s;
}

std::vector<Preset> make_presets() {
  std::vector<Preset> p;
  p.push_back({"qwen35-0.8b", "Qwen3.5-0.8B shape: H 1024, 24 layers, tied, real tokenizer ids",
               released(1024, 24, 3584, 8, 2, 16, true), TokenizerScheme::Qwen35, std::nullopt});
  p.push_back({"qwen35-2b", "Qwen3.5-2B shape: H 2048, 24 layers, tied, real tokenizer ids",
               released(2048, 24, 6144, 8, 2, 16, true), TokenizerScheme::Qwen35, std::nullopt});
  p.push_back({"qwen35-4b", "Qwen3.5-4B shape: H 2560, 32 layers, tied, real tokenizer ids",
               released(2560, 32, 9216, 16, 4, 32, true), TokenizerScheme::Qwen35, std::nullopt});
  p.push_back({"qwen35-9b", "Qwen3.5-9B shape: H 4096, 32 layers, untied, real tokenizer ids",
               released(4096, 32, 12288, 16, 4, 32, false), TokenizerScheme::Qwen35, std::nullopt});
  p.push_back({"qwen35-tiny", "the fixture qwen35-tiny shape: H 64, 4 layers, tied, vocab 768",
               tiny(true), TokenizerScheme::Compact, std::nullopt});
  p.push_back({"qwen35-small", "the fixture qwen35-small shape: H 256, 8 layers, untied, vocab 768",
               small(false), TokenizerScheme::Compact, std::nullopt});
  p.push_back({"qwen-demo", "the embedded demo chat model (qwen35-small shape, tied, vocab 768)",
               small(true), TokenizerScheme::Compact, std::nullopt});
  p.push_back({"clef-tiny", "the fixture clef-tiny layout: tiny untied backbone + joint head W 32",
               tiny(false), TokenizerScheme::Compact, HeadShape{64, 32, 2, 2, 4, 64}});
  p.push_back({"clef-flash-shape", "clef-flash layout: Qwen3.5-9B backbone + joint head W 1024, F 4096, R 2, Ld 4",
               released(4096, 32, 12288, 16, 4, 32, false), TokenizerScheme::Qwen35,
               HeadShape{4096, 1024, 2, 4, 16, 4096}});
  // Benchmarks: the clef-flash head (as above, on H 1024) over the 0.8B backbone, which a 2-core machine
  // can prefill; the head's cost is clef-flash's but for the six H × W input projections.
  p.push_back({"clef-0.8b", "Qwen3.5-0.8B backbone (untied) + the clef-flash joint head W 1024, F 4096, R 2, Ld 4",
               released(1024, 24, 3584, 8, 2, 16, false), TokenizerScheme::Qwen35,
               HeadShape{1024, 1024, 2, 4, 16, 4096}});
  return p;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = make_presets();
  return kPresets;
}

const Preset& find_preset(std::string_view name) {
  std::string known;
  for (const Preset& p : presets()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw UsageError("unknown preset '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace verdict::modelgen
