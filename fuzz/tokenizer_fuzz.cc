// libFuzzer target for the tokenizer: any bytes are encoded (special-token parsing on and off), decoded
// and stream-decoded. The tokenizer comes from $VERDICT_TOKENIZER (absolute or relative to the working
// directory), default ../shared/fixtures/qwen35-tiny/tokenizer.json.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace {

using verdict::tokenizer::StreamDecoder;
using verdict::tokenizer::Tokenizer;
using verdict::tokenizer::TokenId;

const Tokenizer& tokenizer() {
  static const std::unique_ptr<Tokenizer> tok = [] {
    const char* env = std::getenv("VERDICT_TOKENIZER");
    const std::string path = env != nullptr && *env != '\0' ? env : "../shared/fixtures/qwen35-tiny/tokenizer.json";
    try {
      return std::make_unique<Tokenizer>(Tokenizer::from_file(path));
    } catch (const verdict::Error& e) {
      std::fprintf(stderr, "tokenizer_fuzz: cannot load tokenizer: %s\n", e.what());
      std::abort();
    }
  }();
  return *tok;
}

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "tokenizer_fuzz: invariant violated: %s\n", what);
    std::abort();
  }
}

bool valid_utf8(std::string_view s) {
  // Independent of the library's validator: decode and re-check ranges.
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
    for (std::size_t k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0u) != 0x80u) return false;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Tokenizer& tok = tokenizer();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string normalized = tok.normalize(input);
  check(valid_utf8(normalized), "normalize() output is valid UTF-8");
  for (bool parse_special : {true, false}) {
    const std::vector<TokenId> ids = tok.encode(input, parse_special);
    for (TokenId id : ids) check(id >= 0 && static_cast<std::size_t>(id) < tok.vocab_size(), "id in range");
    const std::string text = tok.decode(ids);  // must not throw for produced ids
    check(valid_utf8(text), "decode() output is valid UTF-8");
    check(text == normalized, "decode(encode(x)) == normalize(x)");
    StreamDecoder stream(tok);
    std::string streamed;
    for (TokenId id : ids) {
      const std::string piece = stream.push(id);
      check(valid_utf8(piece), "stream piece is valid UTF-8");
      streamed += piece;
    }
    streamed += stream.finish();
    check(streamed == text, "stream decode equals decode");
    (void)tok.decode(ids, true);
  }
  return 0;
}
