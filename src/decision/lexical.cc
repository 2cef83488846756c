#include "decision/lexical.h"

#include <string>

#include "core/error.h"
#include "formats/convert.h"

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

LexicalRowFn lexical_rows(const formats::TensorView& table) {
  if (table.shape.size() != 2 || table.shape[0] <= 0 || table.shape[1] <= 0) {
    throw Error(table.file + ": lexical table " + table.name + " is not a [V, H] matrix");
  }
  if (table.dtype != DType::F32 && table.dtype != DType::BF16 && table.dtype != DType::F16) {
    throw Error(table.file + ": lexical table " + table.name + " has dtype " +
                std::string(dtype_name(table.dtype)) + "; expected F32, BF16 or F16");
  }
  const auto rows = static_cast<std::size_t>(table.shape[0]);
  const auto cols = static_cast<std::size_t>(table.shape[1]);
  const std::size_t row_bytes = cols * dtype_size(table.dtype);
  if (table.nbytes != rows * row_bytes) {
    throw Error(table.file + ": lexical table " + table.name + " has the wrong byte size");
  }
  const formats::TensorView* t = &table;
  return [t, rows, cols, row_bytes](TokenId id, std::span<float> row) {
    if (id < 0 || static_cast<std::size_t>(id) >= rows) {
      throw Error("lexical table " + t->name + ": token id " + std::to_string(id) + " outside [0, " +
                  std::to_string(rows) + ")");
    }
    if (row.size() != cols) {
      throw Error("lexical table " + t->name + ": rows have " + std::to_string(cols) + " values, not " +
                  std::to_string(row.size()));
    }
    formats::TensorView view;
    view.name = t->name;
    view.dtype = t->dtype;
    view.shape = {static_cast<int64_t>(cols)};
    view.data = t->data + static_cast<std::size_t>(id) * row_bytes;
    view.nbytes = row_bytes;
    view.file = t->file;
    formats::to_f32(view, row);
  };
}

const formats::TensorView& find_lexical_table(const formats::TensorStore& store, bool tie_word_embeddings) {
  static const char* const kOutput[] = {"lm_head.weight", "language_model.lm_head.weight"};
  static const char* const kEmbedding[] = {"model.language_model.embed_tokens.weight",
                                           "model.embed_tokens.weight",
                                           "language_model.model.embed_tokens.weight"};
  if (!tie_word_embeddings) {
    for (const char* name : kOutput) {
      if (const formats::TensorView* t = store.find(name)) return *t;
    }
    throw Error("checkpoint has no lm_head.weight (needed for the lexical table of an untied model)");
  }
  for (const char* name : kEmbedding) {
    if (const formats::TensorView* t = store.find(name)) return *t;
  }
  throw Error("checkpoint has no embed_tokens.weight (the lexical table of a tied model)");
}

}  // namespace verdict::decision
