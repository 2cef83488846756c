#include "decision/lexical.h"

#include <string>

#include "core/error.h"

namespace verdict::decision {

LexicalRowFn lexical_rows(const kernels::WeightMatrix& table) {
  const kernels::WeightMatrix* t = &table;
  return [t](TokenId id, std::span<float> row) {
    if (id < 0 || id >= t->rows)
      throw Error("lexical row " + std::to_string(id) + " outside the vocabulary [0, " + std::to_string(t->rows) + ")");
    if (static_cast<int64_t>(row.size()) != t->cols)
      throw Error("lexical rows have " + std::to_string(t->cols) + " values, not " + std::to_string(row.size()));
    kernels::dequantize_row(*t, id, row.data());
  };
}

}  // namespace verdict::decision
