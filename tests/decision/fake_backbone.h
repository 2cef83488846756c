// The deterministic stand-ins of the clef-systemone fixture (fixtures/README.md, "clef-systemone"):
// the byte_special tokenizer, the mix32 hash, the `hash` and `const` fake backbones and their
// lexical tables.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "decision/decision.h"
#include "decision/encoder.h"

namespace verdict::decision::testing {

// lowbias32.
uint32_t mix32(uint32_t x);

// UTF-8 bytes as ids 0–255, the nine Qwen special strings as ids 256–264.
ByteTokenizer byte_special_tokenizer();

// Backbone `hash` (seed s): causal, row p depends on tokens 0..p.
HiddenRows hash_backbone(std::span<const TokenId> ids, std::size_t hidden_size, uint32_t seed);
// Backbone `const` (seed s): every row the same.
HiddenRows const_backbone(std::size_t rows, std::size_t hidden_size, uint32_t seed);
// Lexical table `hash`: E[v][k].
float hash_lexical(TokenId v, std::size_t k);

}  // namespace verdict::decision::testing
