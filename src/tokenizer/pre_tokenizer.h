// Pre-tokenizers of tokenizer.json ("pre_tokenizer"): Split, ByteLevel and Sequence, with Hugging Face
// semantics. A pre-tokenizer cuts one piece of normalized text into smaller pieces (words) and hands
// each, in order and never empty, to the next stage.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/json.h"

namespace verdict::tokenizer {

// A non-owning reference to a callable void(std::string_view), cheap to pass down a pipeline.
class PieceSink {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, PieceSink>>>
  PieceSink(F&& f)  // NOLINT(google-explicit-constructor)
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, std::string_view piece) { (*static_cast<std::remove_reference_t<F>*>(o))(piece); }) {}
  void operator()(std::string_view piece) const { call_(object_, piece); }

 private:
  void* object_;
  void (*call_)(void*, std::string_view);
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits non-empty valid UTF-8 `piece`, calling `next` for every resulting non-empty piece.
  virtual void pre_tokenize(std::string_view piece, PieceSink next) const = 0;
  // Short description: "Split", "ByteLevel", "Sequence[Split,ByteLevel]".
  virtual std::string name() const = 0;
};

// Builds the pre-tokenizer described by `spec`; null JSON gives nullptr (the whole text is one word).
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& spec, const std::string& where);

}  // namespace verdict::tokenizer
