#include "decision/tokenizer_adapter.h"

namespace verdict::decision {

std::vector<TokenId> HfPieceTokenizer::encode(std::string_view piece) const {
  return tok_.encode(piece, /*parse_special=*/true);
}

}  // namespace verdict::decision
