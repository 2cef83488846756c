#include "tokenizer/decoder.h"

#include "tokenizer/byte_level.h"
#include "tokenizer/json_fields.h"

namespace verdict::tokenizer {

namespace {

class ByteLevelDecoder final : public Decoder {
 public:
  void append_token_bytes(std::string_view token, std::string& out) const override {
    if (!byte_level::decode(token, out)) out.append(token);
  }
  std::string name() const override { return "ByteLevel"; }
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const Json& spec, const std::string& where) {
  if (spec.is_null()) return nullptr;
  const std::string type = detail::type_of(spec, where);
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  detail::fail(where, "unsupported decoder type '" + type + "'");
}

}  // namespace verdict::tokenizer
