// Generated tokenizers: they load with verdict's tokenizer, round-trip text, put the special tokens at
// the ids of their scheme, and mirror the fixture files.
#include "modelgen/tokenizer_files.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/json.h"
#include "core/mapped_file.h"
#include "modelgen/bpe_trainer.h"
#include "support/fixtures.h"
#include "tokenizer/tokenizer.h"

namespace verdict::modelgen {
namespace {

using tokenizer::Tokenizer;
using tokenizer::TokenId;

const std::vector<std::string>& sample_texts() {
  static const std::vector<std::string> texts = {
      "Hello, world! The order has not arrived yet.",
      "¿Dónde está mi pedido? Llegó el lunes.",
      "客户在星期一早上给客服团队写信。",
      "お客様は月曜日の朝に連絡しました。",
      "Клиент написал в службу поддержки.",
      "Cafe\xCC\x81 and caf\xC3\xA9 (NFD and NFC)",
      "numbers 2024-03-18 12.5% \r\n\ttabs   and  spaces\n\n",
      "emoji 😀👍🏽 and symbols ∑∞ <not a special> it's they'll",
      "{\"ticket\": {\"id\": 48213, \"tags\": [\"shipping\"]}}",
  };
  return texts;
}

void expect_round_trips(const Tokenizer& tok) {
  for (const std::string& text : sample_texts()) {
    const std::vector<TokenId> ids = tok.encode(text);
    EXPECT_FALSE(ids.empty());
    EXPECT_EQ(tok.decode(ids), tok.normalize(text)) << text;
  }
}

const TokenizerFiles& compact_files() {
  static const TokenizerFiles files = make_tokenizer_files(token_layout(TokenizerScheme::Compact));
  return files;
}

const TokenizerFiles& qwen35_files() {
  static const TokenizerFiles files = make_tokenizer_files(token_layout(TokenizerScheme::Qwen35));
  return files;
}

TEST(ByteAlphabet, IsGpt2Order) {
  EXPECT_EQ(byte_symbol('!'), "!");
  EXPECT_EQ(byte_of_id(0), '!');
  EXPECT_EQ(byte_symbol(' '), "\xC4\xA0");   // Ġ
  EXPECT_EQ(byte_symbol('\n'), "\xC4\x8A");  // Ċ
  EXPECT_EQ(byte_of_id(188), 0);             // the first non-printable byte follows the 188 printable ones
  EXPECT_EQ(byte_symbol(0xAD), "\xC5\x83");  // U+0143, the last one
}

TEST(CompactTokenizer, HasTheFixtureSchemeAndLoads) {
  const TokenizerFiles& files = compact_files();
  const Tokenizer tok = Tokenizer::from_json(files.tokenizer_json, "generated tokenizer.json");
  EXPECT_EQ(tok.model_vocab_size(), 756u);
  EXPECT_EQ(tok.vocab_size(), 765u);
  EXPECT_EQ(files.learned_merges, 500u);
  EXPECT_EQ(files.filler_tokens, 0u);
  EXPECT_EQ(tok.token_to_id("<|endoftext|>"), 756);
  EXPECT_EQ(tok.token_to_id("<|im_start|>"), 757);
  EXPECT_EQ(tok.token_to_id("<|im_end|>"), 758);
  EXPECT_EQ(tok.token_to_id("</think>"), 760);
  EXPECT_EQ(tok.token_to_id("<|video_pad|>"), 764);
  EXPECT_EQ(tok.encode("<|im_start|>user\n").front(), 757);
  expect_round_trips(tok);

  // Everything but the vocabulary and merges is the fixture's tokenizer.json.
  Json mine = parse_json(files.tokenizer_json, "generated");
  Json theirs = load_json_file(::verdict::testing::fixture("qwen35-tiny/tokenizer.json"));
  for (Json* j : {&mine, &theirs}) {
    (*j)["model"].erase("vocab");
    (*j)["model"].erase("merges");
  }
  EXPECT_EQ(mine, theirs);
}

TEST(CompactTokenizer, ConfigMirrorsTheFixtureWithTheQwen35Template) {
  const Json mine = parse_json(compact_files().tokenizer_config_json, "generated");
  Json theirs = load_json_file(::verdict::testing::fixture("qwen35-tiny/tokenizer_config.json"));
  EXPECT_EQ(mine["chat_template"].get<std::string>(),
            read_text_file(::verdict::testing::fixture("chat-templates/Qwen3.5-4B.jinja")));
  theirs["chat_template"] = mine["chat_template"];
  EXPECT_EQ(mine, theirs);
}

TEST(Qwen35Tokenizer, PutsTheSpecialTokensAtTheRealIds) {
  const TokenizerFiles& files = qwen35_files();
  const Tokenizer tok = Tokenizer::from_json(files.tokenizer_json, "generated tokenizer.json");
  EXPECT_EQ(tok.model_vocab_size(), 248044u);
  EXPECT_EQ(tok.vocab_size(), 248077u);
  EXPECT_GE(files.learned_merges, 500u);  // every pair seen at least twice in the corpus (871 today)
  EXPECT_EQ(files.learned_merges + 256 + files.filler_tokens, 248044u);
  const char* spec_order[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>",
                              "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>",
                              "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
                              "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>",
                              "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
                              "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>",
                              "<think>", "</think>", "<|audio_start|>", "<|audio_end|>"};
  TokenId id = 248044;
  for (const char* s : spec_order) EXPECT_EQ(tok.token_to_id(s), id++) << s;
  EXPECT_EQ(tok.token_to_id("<|audio_pad|>"), 248076);
  EXPECT_TRUE(tok.is_special(248046));
  EXPECT_FALSE(tok.is_special(248068));  // <think> is not special, as in the Qwen files
  // The minimal turn of spec §13: <|im_start|>user\n … <|im_end|>\n<|im_start|>assistant\n<think>\n
  const std::vector<TokenId> ids = tok.encode("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n");
  EXPECT_EQ(ids.front(), 248045);
  EXPECT_EQ(ids[ids.size() - 2], 248068);
  expect_round_trips(tok);
  // Filler ids decode to readable pseudo-words and are never produced by encoding.
  const std::string filler = tok.decode(std::vector<TokenId>{248043});
  EXPECT_EQ(filler.size(), 7u);
  EXPECT_EQ(filler[0], ' ');
  for (TokenId t : tok.encode(filler)) EXPECT_LT(t, 256 + static_cast<TokenId>(files.learned_merges));
}

TEST(Qwen35Tokenizer, IsDeterministic) {
  const TokenizerFiles again = make_tokenizer_files(token_layout(TokenizerScheme::Qwen35));
  EXPECT_TRUE(again.tokenizer_json == qwen35_files().tokenizer_json);
  EXPECT_TRUE(again.tokenizer_config_json == qwen35_files().tokenizer_config_json);
}

}  // namespace
}  // namespace verdict::modelgen
