#include "tokenizer/normalizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <vector>

#include "tokenizer/json_fields.h"
#include "tokenizer/regex.h"
#include "tokenizer/unicode_class.h"
#include "core/utf8.h"

namespace verdict::tokenizer {

namespace {

using detail::fail;

// Unicode normalization through utf8proc. ASCII needs no work, and a boundary just before an ASCII
// character is safe for every form (no ASCII character is the second half of a composition and all are
// starters), so only the non-ASCII runs, each with the ASCII character before it, go through utf8proc.
class UnicodeForm final : public Normalizer {
 public:
  UnicodeForm(std::string name, utf8proc_option_t options) : name_(std::move(name)), options_(options) {}

  void normalize(std::string_view in, std::string& out) const override {
    out.clear();
    out.reserve(in.size() + in.size() / 8);
    std::size_t i = 0;
    const std::size_t n = in.size();
    while (i < n) {
      std::size_t j = i;
      while (j < n && static_cast<unsigned char>(in[j]) < 0x80) ++j;
      if (j == n) {
        out.append(in.substr(i));
        break;
      }
      // in[j] starts a non-ASCII run; keep the ASCII character before it with the run.
      std::size_t run_start = j > i ? j - 1 : j;
      out.append(in.substr(i, run_start - i));
      std::size_t k = j;
      while (k < n && static_cast<unsigned char>(in[k]) >= 0x80) ++k;
      transform(in.substr(run_start, k - run_start), out);
      i = k;
    }
  }

  std::string name() const override { return name_; }

 private:
  void transform(std::string_view run, std::string& out) const {
    utf8proc_uint8_t* result = nullptr;
    const utf8proc_ssize_t len =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(run.data()),
                     static_cast<utf8proc_ssize_t>(run.size()), &result, options_);
    if (len < 0 || result == nullptr) {
      out.append(run);  // cannot happen for valid UTF-8 short of memory exhaustion
    } else {
      out.append(reinterpret_cast<const char*>(result), static_cast<std::size_t>(len));
    }
    std::free(result);
  }

  std::string name_;
  utf8proc_option_t options_;
};

// Rust's char::to_lowercase per character: the simple mapping, plus U+0130 -> "i\u0307".
class Lowercase final : public Normalizer {
 public:
  void normalize(std::string_view in, std::string& out) const override {
    out.clear();
    out.reserve(in.size());
    std::size_t i = 0;
    while (i < in.size()) {
      const auto b = static_cast<unsigned char>(in[i]);
      if (b < 0x80) {
        out.push_back(b >= 'A' && b <= 'Z' ? static_cast<char>(b + 32) : static_cast<char>(b));
        ++i;
        continue;
      }
      const char32_t cp = utf8::next_code_point(in, i);
      if (cp == 0x130) {
        out.append("i\xCC\x87");
        continue;
      }
      utf8::append_code_point(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
    }
  }
  std::string name() const override { return "Lowercase"; }
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string_view in, std::string& out) const override {
    std::size_t begin = 0, end = in.size();
    if (left_) {
      while (begin < end) {
        std::size_t next = begin;
        if (!is_white_space(utf8::next_code_point(in, next))) break;
        begin = next;
      }
    }
    if (right_) {
      while (end > begin) {
        std::size_t prev = end;
        if (!is_white_space(utf8::prev_code_point(in, prev))) break;
        end = prev;
      }
    }
    out.assign(in.substr(begin, end - begin));
  }
  std::string name() const override { return "Strip"; }

 private:
  bool left_, right_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string_view in, std::string& out) const override {
    out.clear();
    if (in.empty()) return;  // Hugging Face leaves an empty string alone
    out.append(prefix_).append(in);
  }
  std::string name() const override { return "Prepend"; }

 private:
  std::string prefix_;
};

class Replace final : public Normalizer {
 public:
  Replace(Regex pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void normalize(std::string_view in, std::string& out) const override {
    out.clear();
    std::size_t prev = 0;
    pattern_.for_each_match(in, [&](std::size_t s, std::size_t e) {
      out.append(in.substr(prev, s - prev)).append(content_);
      prev = e;
    });
    out.append(in.substr(prev));
  }
  std::string name() const override { return "Replace"; }

 private:
  Regex pattern_;
  std::string content_;
};

class NormalizerSequence final : public Normalizer {
 public:
  explicit NormalizerSequence(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void normalize(std::string_view in, std::string& out) const override {
    std::string tmp(in);
    for (const auto& step : steps_) {
      step->normalize(tmp, out);
      tmp.swap(out);
    }
    out.swap(tmp);
  }
  std::string name() const override {
    std::string s = "Sequence[";
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      if (i > 0) s.push_back(',');
      s.append(steps_[i]->name());
    }
    s.push_back(']');
    return s;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

// {"String": "..."} or {"Regex": "..."}.
Regex make_pattern(const Json& spec, const std::string& where) {
  const Json* pattern = detail::member(spec, "pattern");
  if (pattern == nullptr || !pattern->is_object() || pattern->size() != 1)
    fail(where, "\"pattern\" must be {\"String\": ...} or {\"Regex\": ...}");
  if (const Json* s = detail::member(*pattern, "String"); s != nullptr && s->is_string())
    return Regex::from_literal(s->get<std::string>(), where);
  if (const Json* r = detail::member(*pattern, "Regex"); r != nullptr && r->is_string())
    return Regex::from_pattern(r->get<std::string>(), where);
  fail(where, "\"pattern\" must be {\"String\": ...} or {\"Regex\": ...}, got " + detail::show(*pattern));
}

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const Json& spec, const std::string& where) {
  if (spec.is_null()) return nullptr;
  const std::string type = detail::type_of(spec, where);
  if (type == "NFC") return std::make_unique<UnicodeForm>("NFC", static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (type == "NFD") return std::make_unique<UnicodeForm>("NFD", static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE));
  if (type == "NFKC")
    return std::make_unique<UnicodeForm>("NFKC", static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
  if (type == "NFKD")
    return std::make_unique<UnicodeForm>("NFKD", static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT));
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "Strip")
    return std::make_unique<Strip>(detail::get_bool(spec, "strip_left", true, where),
                                   detail::get_bool(spec, "strip_right", true, where));
  if (type == "Prepend") return std::make_unique<Prepend>(detail::get_string(spec, "prepend", where));
  if (type == "Replace")
    return std::make_unique<Replace>(make_pattern(spec, where), detail::get_string(spec, "content", where));
  if (type == "Sequence") {
    const Json* list = detail::member(spec, "normalizers");
    if (list == nullptr || !list->is_array()) fail(where, "Sequence needs a \"normalizers\" array");
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string at = where + ".normalizers[" + std::to_string(i) + "]";
      auto step = make_normalizer((*list)[i], at);
      if (step == nullptr) fail(at, "null normalizer in Sequence");
      steps.push_back(std::move(step));
    }
    return std::make_unique<NormalizerSequence>(std::move(steps));
  }
  fail(where, "unsupported normalizer type '" + type + "'");
}

}  // namespace verdict::tokenizer
