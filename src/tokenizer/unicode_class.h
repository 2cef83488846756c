// Character classes shared by the added-token matcher and the normalizers.
#pragma once

namespace verdict::tokenizer {

// Unicode White_Space (Rust's char::is_whitespace and regex \s).
inline bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

// Rust regex \w: Alphabetic, Mark, Decimal_Number, Connector_Punctuation, Join_Control.
bool is_word_char(char32_t c);

}  // namespace verdict::tokenizer
