// The Hugging Face tokenizer as a PieceTokenizer: special-token parsing on, no BOS/EOS (§3).
#pragma once
#include "decision/encoder.h"
#include "tokenizer/tokenizer.h"

namespace verdict::decision {

class HfPieceTokenizer final : public PieceTokenizer {
 public:
  // `tokenizer` must outlive this adapter.
  explicit HfPieceTokenizer(const tokenizer::Tokenizer& tokenizer) : tok_(tokenizer) {}
  std::vector<TokenId> encode(std::string_view piece) const override;

 private:
  const tokenizer::Tokenizer& tok_;
};

}  // namespace verdict::decision
