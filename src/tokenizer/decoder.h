// Decoders of tokenizer.json ("decoder"). ByteLevel maps each token's byte-level characters back to
// bytes (a token with a character outside the alphabet contributes its own UTF-8, as in Hugging Face),
// the bytes of all tokens are concatenated and repaired lossily. With no decoder, Hugging Face joins the
// token strings with spaces.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "core/json.h"

namespace verdict::tokenizer {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Appends the bytes token string `token` stands for (possibly a partial UTF-8 sequence).
  virtual void append_token_bytes(std::string_view token, std::string& out) const = 0;
  virtual std::string name() const = 0;
};

// Builds the decoder described by `spec`; null JSON gives nullptr (tokens joined with spaces).
std::unique_ptr<Decoder> make_decoder(const Json& spec, const std::string& where);

}  // namespace verdict::tokenizer
