// A byte-level BPE vocabulary learned from text, in the Hugging Face / GPT-2 conventions: tokens are
// strings over the GPT-2 byte alphabet (each byte mapped to one printable code point), ids 0…255 are the
// 256 single bytes in GPT-2 order, and every later id is the result of one merge, in merge order.
//
// Learning: the text is split into words (a simplified version of the Qwen pre-tokenizer: letters with
// an optional leading space or punctuation mark, single digits, punctuation runs, whitespace runs); the
// most frequent adjacent pair (counting each word by its frequency; ties go to the pair of smaller ids)
// is merged, repeatedly, while some pair occurs at least twice. Deterministic.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace verdict::modelgen {

// The GPT-2 byte alphabet: the UTF-8 text of the code point that stands for byte b.
std::string byte_symbol(unsigned char b);
// The byte that id i (0…255) stands for.
unsigned char byte_of_id(int id);
// A raw byte string in the byte alphabet.
std::string to_byte_symbols(std::string_view bytes);

struct BpeVocab {
  std::vector<std::string> tokens;                          // id -> token (byte-alphabet string)
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order
};

// Learns merges from `text` until the vocabulary holds `max_tokens` tokens (bytes included) or no pair
// occurs twice.
BpeVocab learn_bpe(std::string_view text, std::size_t max_tokens);

}  // namespace verdict::modelgen
