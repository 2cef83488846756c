// The lexical table: lm_head rows of an untied checkpoint, embedding rows of a tied one.
#include "decision/lexical.h"

#include <gtest/gtest.h>

#include <vector>

#include "formats/convert.h"
#include "support/fixtures.h"

namespace verdict::decision {
namespace {

TEST(Lexical, UntiedCheckpointUsesLmHeadRows) {
  const formats::TensorStore store =
      formats::TensorStore::open_dir(verdict::testing::fixture("clef-tiny/bf16"));
  const formats::TensorView& table = find_lexical_table(store, /*tie_word_embeddings=*/false);
  EXPECT_EQ(table.name, "lm_head.weight");
  const std::vector<float> all = formats::to_f32(table);
  const LexicalRowFn rows = lexical_rows(table);
  std::vector<float> row(64);
  for (TokenId id : {0, 1, 300, 767}) {
    rows(id, row);
    for (std::size_t k = 0; k < row.size(); ++k) {
      ASSERT_EQ(row[k], all[static_cast<std::size_t>(id) * 64 + k]) << id << "," << k;
    }
  }
  EXPECT_THROW(rows(768, row), Error);
  EXPECT_THROW(rows(-1, row), Error);
  std::vector<float> short_row(63);
  EXPECT_THROW(rows(0, short_row), Error);
}

TEST(Lexical, TiedCheckpointUsesTheEmbedding) {
  const formats::TensorStore store = formats::TensorStore::open_dir(verdict::testing::fixture("qwen35-tiny"));
  EXPECT_EQ(find_lexical_table(store, /*tie_word_embeddings=*/true).name,
            "model.language_model.embed_tokens.weight");
  EXPECT_THROW(find_lexical_table(store, /*tie_word_embeddings=*/false), Error);
}

}  // namespace
}  // namespace verdict::decision
