#include "test_tokenizers.h"

#include <memory>

#include "support/fixtures.h"

namespace verdict::tokenizer::testing {

const Tokenizer& qwen3() {
  static const std::unique_ptr<Tokenizer> tok = std::make_unique<Tokenizer>(
      Tokenizer::from_file(verdict::testing::fixture("qwen3-tokenizer/tokenizer.json")));
  return *tok;
}

const Tokenizer& qwen35_tiny() {
  static const std::unique_ptr<Tokenizer> tok = std::make_unique<Tokenizer>(
      Tokenizer::from_file(verdict::testing::fixture("qwen35-tiny/tokenizer.json")));
  return *tok;
}

Tokenizer from_text(const std::string& json) { return Tokenizer::from_json(json, "test.json"); }

std::string tiny_json(const std::string& model_fields, const std::string& added_tokens,
                      const std::string& normalizer, const std::string& pre_tokenizer,
                      const std::string& decoder) {
  return R"({"version": "1.0", "truncation": null, "padding": null, "added_tokens": )" + added_tokens +
         R"(, "normalizer": )" + normalizer + R"(, "pre_tokenizer": )" + pre_tokenizer +
         R"(, "post_processor": null, "decoder": )" + decoder + R"(, "model": {"type": "BPE", )" +
         model_fields + "}}";
}

}  // namespace verdict::tokenizer::testing
