// The lexical rows of the joint head (clef-decision.md §6.1): rows of the backbone's loaded output
// projection in its stored type, upcast exactly (BF16) or dequantized (a GGUF Q8_0 table).
#include "decision/lexical.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "formats/convert.h"
#include "formats/ggml_quant.h"
#include "formats/tensor_store.h"
#include "support/fixtures.h"

namespace verdict::decision {
namespace {

// clef-tiny's lm_head [768, 64], as stored (BF16) and in fp32.
struct LmHead {
  formats::TensorStore store = formats::TensorStore::open_dir(verdict::testing::fixture("clef-tiny/bf16"));
  const formats::TensorView& table = store.get("lm_head.weight");
  std::vector<float> f32 = formats::to_f32(table);
};

TEST(Lexical, Bf16RowsAreTheStoredRowsUpcast) {
  const LmHead head;
  ASSERT_EQ(head.table.dtype, DType::BF16);
  kernels::WeightMatrix w;
  w.type = kernels::WeightType::BF16;
  w.rows = 768;
  w.cols = 64;
  w.bf16 = reinterpret_cast<const uint16_t*>(head.table.data);
  const LexicalRowFn rows = lexical_rows(w);
  std::vector<float> row(64);
  for (TokenId id : {0, 1, 300, 767}) {
    rows(id, row);
    for (std::size_t k = 0; k < row.size(); ++k)
      ASSERT_EQ(row[k], head.f32[static_cast<std::size_t>(id) * 64 + k]) << id << "," << k;
  }
  EXPECT_THROW(rows(768, row), Error);
  EXPECT_THROW(rows(-1, row), Error);
  std::vector<float> short_row(63);
  EXPECT_THROW(rows(0, short_row), Error);
}

// A GGUF backbone's Q8_0 table: each row is d · q per 32-value block (d the block's fp16 scale).
TEST(Lexical, Q8_0RowsAreDequantizedBlocks) {
  const LmHead head;
  std::vector<uint8_t> blocks(768 * 2 * 34);
  for (std::size_t r = 0; r < 768; ++r)
    formats::ggml_quantize_row(formats::GgmlType::Q8_0, std::span<const float>(head.f32).subspan(r * 64, 64),
                               blocks.data() + r * 68);
  kernels::WeightMatrix w;
  w.type = kernels::WeightType::Q8_0;
  w.rows = 768;
  w.cols = 64;
  w.blocks = blocks.data();
  const LexicalRowFn rows = lexical_rows(w);
  std::vector<float> row(64);
  for (TokenId id : {0, 5, 767}) {
    rows(id, row);
    for (std::size_t k = 0; k < row.size(); ++k) {
      const uint8_t* block = blocks.data() + static_cast<std::size_t>(id) * 68 + (k / 32) * 34;
      const float d = f16_to_f32(static_cast<uint16_t>(block[0] | (block[1] << 8)));
      ASSERT_EQ(row[k], d * static_cast<float>(static_cast<int8_t>(block[2 + k % 32]))) << id << "," << k;
      ASSERT_NEAR(row[k], head.f32[static_cast<std::size_t>(id) * 64 + k], 0.01) << id << "," << k;
    }
  }
}

}  // namespace
}  // namespace verdict::decision
