// The tokenizer block of a GGUF file (`tokenizer.ggml.*`), both ways, for byte-level BPE tokenizers
// (Qwen2/Qwen3/Qwen3.5 family):
//
//  * gguf_tokenizer_metadata(): what llama.cpp's convert_hf_to_gguf.py writes from a checkpoint folder
//    (tokenizer.json, tokenizer_config.json, config.json): model "gpt2"; `pre` chosen from the Split
//    regex of tokenizer.json ("qwen35" for the Qwen3.5 pattern, "qwen2" for the Qwen2/Qwen3 one; any
//    other pattern is refused, as llama.cpp refuses an unknown pre-tokenizer); one token per id below
//    vocab_size ("[PAD<id>]", type UNUSED, for ids the tokenizer does not define), type CONTROL for
//    special added tokens and added tokens that look like `<|...|>`, USER_DEFINED for other added
//    tokens, NORMAL for the rest; merges as "a b"; special token ids (bos, eos, unk, sep, pad, cls,
//    mask) from tokenizer_config.json, then config.json; add_*_token flags; the chat template.
//  * tokenizer_json_from_gguf(): the reverse, a tokenizer.json text that the tokenizer library loads:
//    NORMAL tokens form the BPE vocabulary, CONTROL tokens become special added tokens, USER_DEFINED
//    tokens non-special added tokens, UNUSED ids are left out; the pre-tokenizer is the Split regex of
//    `tokenizer.ggml.pre` (qwen35, qwen2) + ByteLevel, with the NFC normalizer those tokenizer.json
//    files declare (llama.cpp itself skips NFC); decoder ByteLevel.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "formats/gguf.h"
#include "formats/gguf_value.h"

namespace verdict::formats {

enum class GgufTokenType : int32_t { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

// Metadata entries in the order llama.cpp writes them. `dir` holds tokenizer.json (required),
// tokenizer_config.json and config.json (optional). Throws verdict::Error naming the file.
std::vector<std::pair<std::string, GgufValue>> gguf_tokenizer_metadata(const std::string& dir, int64_t vocab_size);

// A tokenizer.json text for the file's tokenizer block. Throws verdict::Error naming the file.
std::string tokenizer_json_from_gguf(const GgufFile& file);

// The tokenizer of a GGUF model file, as tokenizer.json text. The rule: a `tokenizer.json` in the
// same folder as the .gguf file is used when present (it is the original, with the exact Hugging Face
// semantics); otherwise the text is rebuilt from the file's metadata (tokenizer_json_from_gguf).
// `source` receives the path actually used. Throws verdict::Error.
std::string gguf_model_tokenizer_json(const std::string& gguf_path, std::string* source = nullptr);

}  // namespace verdict::formats
