// A Hugging Face `tokenizers` tokenizer loaded from tokenizer.json: normalizer, pre-tokenizer,
// byte-level BPE model, added tokens and decoder, all as declared in the file (nothing per model is
// hard-coded). encode() gives the same ids as Hugging Face `tokenizers` with add_special_tokens=false
// and special-token parsing on.
//
// Invalid UTF-8 in the input is not an error: each maximal invalid subsequence is replaced by U+FFFD
// (the WHATWG / Python "replace" rule) before anything else, then the text is tokenized as usual.
//
// A Tokenizer is immutable once loaded and safe to use from many threads at once (its word cache is
// internally locked). Supported parts: normalizers NFC/NFD/NFKC/NFKD/Lowercase/Strip/Prepend/Replace/
// Sequence; pre-tokenizers Split/ByteLevel/Sequence; the BPE model; the ByteLevel decoder (or none).
// Anything else is refused at load time. Truncation, padding and the post-processor are not applied.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::tokenizer {

using TokenId = int32_t;

struct AddedToken {
  TokenId id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
  bool normalized = false;
};

class TokenizerImpl;

class Tokenizer {
 public:
  // Loads tokenizer.json; throws verdict::Error naming the file on anything unsupported or malformed.
  static Tokenizer from_file(const std::string& path);
  // Loads from the JSON text; `what` names the source in errors.
  static Tokenizer from_json(std::string_view json_text, const std::string& what);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Text -> ids. Added tokens written in the text are matched as single ids (Hugging Face semantics
  // for lstrip/rstrip/single_word/normalized). With parse_special = false, special added tokens are
  // treated as plain text (non-special added tokens are still matched, as in Hugging Face).
  std::vector<TokenId> encode(std::string_view text, bool parse_special = true) const;

  // Ids -> text through the file's decoder. Invalid UTF-8 produced by a partial byte sequence is
  // replaced by U+FFFD (as Hugging Face's lossy decode does). skip_special drops special added tokens.
  // Throws verdict::Error for an id outside the vocabulary.
  std::string decode(std::span<const TokenId> ids, bool skip_special = false) const;

  // The normalizer applied to `text` (what decode(encode(x)) gives back for plain text).
  std::string normalize(std::string_view text) const;

  // Number of ids: max(id) + 1 over the model vocabulary and the added tokens.
  std::size_t vocab_size() const;
  // Size of the model's own vocabulary (without added tokens).
  std::size_t model_vocab_size() const;
  std::optional<TokenId> token_to_id(std::string_view token) const;
  // The token string as stored (byte-level form), "" if unknown.
  std::string id_to_token(TokenId id) const;
  // Raw bytes a token decodes to (for streaming and the Clef lexical table).
  std::string token_bytes(TokenId id) const;
  bool is_special(TokenId id) const;
  const std::vector<AddedToken>& added_tokens() const;

  // Short descriptions for `verdict info`: "NFC", "Sequence[Split,ByteLevel]", "BPE", "ByteLevel".
  std::string normalizer_name() const;
  std::string pre_tokenizer_name() const;
  std::string model_type() const;
  std::string decoder_name() const;

 private:
  explicit Tokenizer(std::unique_ptr<TokenizerImpl> impl);
  std::unique_ptr<TokenizerImpl> impl_;
};

// Incremental detokenizer for streaming: push ids one at a time and receive only complete UTF-8;
// an incomplete multi-byte sequence is held back until it completes (or replaced by U+FFFD when it
// cannot complete, or at finish()).
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok, bool skip_special = false);
  // Returns the text that became complete with this id (possibly empty).
  std::string push(TokenId id);
  // Flushes what is held back (an incomplete sequence becomes U+FFFD).
  std::string finish();

 private:
  const Tokenizer* tok_;
  bool skip_special_;
  std::string pending_;
  bool spaced_ = false;   // the file has no decoder: tokens are joined with spaces, as decode() does
  bool started_ = false;  // a token has been emitted (for the spacing above)
};

}  // namespace verdict::tokenizer
