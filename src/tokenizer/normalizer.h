// Normalizers of tokenizer.json ("normalizer"): NFC, NFD, NFKC, NFKD, Lowercase, Strip, Prepend, Replace
// and Sequence, with Hugging Face semantics.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "core/json.h"

namespace verdict::tokenizer {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Writes the normalized form of valid UTF-8 `in` to `out` (replacing its contents).
  virtual void normalize(std::string_view in, std::string& out) const = 0;
  // Short description: "NFC", "Sequence[NFD,Lowercase]".
  virtual std::string name() const = 0;
};

// Builds the normalizer described by `spec`; null JSON gives nullptr (no normalizer).
// Throws verdict::Error("<where>: ...") for an unsupported type or a malformed entry.
std::unique_ptr<Normalizer> make_normalizer(const Json& spec, const std::string& where);

}  // namespace verdict::tokenizer
