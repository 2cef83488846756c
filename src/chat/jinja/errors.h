// The errors of the Jinja engine. Every one is a verdict::Error with a complete, user-facing message.
//
//   SyntaxError       the template cannot be loaded: malformed, or it uses something this engine does
//                     not implement (unknown tag, filter, test, function or method). Raised by
//                     Template::parse, i.e. at model load. Message: "line L, column C: ...".
//   RenderError       rendering failed on the data it was given (a type error such as `1 + 'a'`,
//                     calling a missing method, a resource limit). Message: "line L, column C: ...".
//   RaisedException   the template called raise_exception(msg); what() is exactly `msg` (the
//                     template author's message, e.g. "System message must be at the beginning.").
//                     A RenderError subclass, so a caller may catch both as request errors (HTTP 400).
#pragma once
#include <string>

#include "core/error.h"

namespace verdict::chat::jinja {

// 1-based line and column (in bytes) of a token in the template source; 0 when unknown.
struct SourcePos {
  int line = 0;
  int column = 0;
};

// "line L, column C: message" (or just the message when the position is unknown).
std::string at_position(SourcePos pos, const std::string& message);

class SyntaxError : public Error {
 public:
  SyntaxError(SourcePos pos, const std::string& message) : Error(at_position(pos, message)), pos_(pos) {}
  SourcePos pos() const { return pos_; }

 private:
  SourcePos pos_;
};

class RenderError : public Error {
 public:
  explicit RenderError(const std::string& message, SourcePos pos = {})
      : Error(at_position(pos, message)), pos_(pos), bare_(message) {}
  SourcePos pos() const { return pos_; }
  bool has_pos() const { return pos_.line > 0; }
  // The message without the position prefix.
  const std::string& bare_message() const { return bare_; }

 private:
  SourcePos pos_;
  std::string bare_;
};

class RaisedException : public RenderError {
 public:
  explicit RaisedException(const std::string& message) : RenderError(message) {}
};

}  // namespace verdict::chat::jinja
