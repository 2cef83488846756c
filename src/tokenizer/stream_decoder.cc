#include "tokenizer/tokenizer.h"

#include "core/utf8.h"

namespace verdict::tokenizer {

StreamDecoder::StreamDecoder(const Tokenizer& tok, bool skip_special)
    : tok_(&tok), skip_special_(skip_special), spaced_(tok.decoder_name() == "none") {}

std::string StreamDecoder::push(TokenId id) {
  std::string bytes = tok_->token_bytes(id);  // throws for an unknown id
  if (skip_special_ && tok_->is_special(id)) return "";
  if (spaced_ && started_) pending_.push_back(' ');
  started_ = true;
  pending_.append(bytes);

  // Emit every complete sequence; an invalid one becomes U+FFFD at once (no later byte can fix it);
  // a truncated tail that could still complete is held back.
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(pending_.data());
  const std::size_t n = pending_.size();
  std::size_t i = 0;
  while (i < n) {
    const utf8::Seq seq = utf8::classify(p + i, n - i);
    if (seq.status == utf8::SeqStatus::Truncated) break;
    if (seq.status == utf8::SeqStatus::Valid) out.append(pending_, i, seq.len);
    else out.append(utf8::kReplacement);
    i += seq.len;
  }
  pending_.erase(0, i);
  return out;
}

std::string StreamDecoder::finish() {
  std::string out;
  utf8::append_lossy(out, pending_);
  pending_.clear();
  return out;
}

}  // namespace verdict::tokenizer
