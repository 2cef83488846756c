// Python `str` semantics on UTF-8 strings: lengths, indices and slices count code points; whitespace
// is str.isspace(); case mappings are Unicode simple mappings (utf8proc). Bytes that are not valid
// UTF-8 count as one code point each and are copied through unchanged.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::chat::jinja::text {

struct Decoded {
  char32_t cp = 0;
  std::size_t len = 1;
  bool valid = false;
};

// The code point starting at byte i (i < s.size()).
Decoded decode_at(std::string_view s, std::size_t i);
void append_utf8(std::string& out, char32_t cp);

// Number of code points.
std::size_t length(std::string_view s);
// Byte offset of every code point, then s.size().
std::vector<std::size_t> boundaries(std::string_view s);

// Python str.isspace() for one code point.
bool is_space(char32_t cp);

// str.strip()/lstrip()/rstrip(): `chars` absent strips whitespace, else any of its code points.
std::string strip(std::string_view s, bool left, bool right, std::optional<std::string_view> chars = std::nullopt);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
// str.title(): the first cased letter after an uncased character is titlecased, other letters lowered.
std::string title(std::string_view s);
// str.capitalize(): first code point upper, the rest lower.
std::string capitalize(std::string_view s);
// str.islower()/isupper(): at least one cased character and no cased character of the other case.
bool is_lower(std::string_view s);
bool is_upper(std::string_view s);
bool is_alpha(std::string_view s);
bool is_digit(std::string_view s);
bool is_alnum(std::string_view s);
bool is_all_space(std::string_view s);

// str.replace(old, new, count); count < 0 replaces all. An empty `old` inserts `new` around every
// code point, as Python does. Stops (throws RenderError) past `max_bytes`.
std::string replace(std::string_view s, std::string_view old_sub, std::string_view new_sub, int64_t count,
                    std::size_t max_bytes);
// str.split(sep, maxsplit) and str.rsplit(); sep absent splits on whitespace runs. An empty sep
// is a RenderError ("empty separator").
std::vector<std::string> split(std::string_view s, std::optional<std::string_view> sep, int64_t maxsplit);
std::vector<std::string> rsplit(std::string_view s, std::optional<std::string_view> sep, int64_t maxsplit);
// str.splitlines() (without keepends): \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85, U+2028, U+2029.
std::vector<std::string> splitlines(std::string_view s);
// str.count(sub): non-overlapping occurrences (an empty sub counts len + 1).
int64_t count(std::string_view s, std::string_view sub);
// str.find(sub)/rfind(sub): code point index, or -1.
int64_t find(std::string_view s, std::string_view sub);
int64_t rfind(std::string_view s, std::string_view sub);

}  // namespace verdict::chat::jinja::text
