// A small multilingual text, written for verdict, from which generated tokenizers learn their merges.
#pragma once
#include <string_view>

namespace verdict::modelgen {

std::string_view training_corpus();

}  // namespace verdict::modelgen
