// The GPT-2 byte-level alphabet: every byte maps to one printable code point (bytes_to_unicode), so any
// byte string is a valid UTF-8 string of "byte characters" and back.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace verdict::tokenizer::byte_level {

// The UTF-8 spelling of the character that stands for byte `b` (one or two bytes long).
std::string_view char_for_byte(uint8_t b);

// The byte a code point stands for, or -1 when it is not a byte-level character.
int byte_for_char(char32_t cp);

// Appends the byte-level spelling of every byte of `bytes`.
void encode(std::string_view bytes, std::string& out);

// Maps a byte-level string back to bytes. Returns false (leaving `out` unchanged) when a character is
// not in the alphabet.
bool decode(std::string_view chars, std::string& out);

}  // namespace verdict::tokenizer::byte_level
