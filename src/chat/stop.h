// Stop strings on a stream of generated text. Text that could still turn out to be the start of a
// stop string is held back, so a stream never shows any part of a stop string: push() returns only
// text that is final. When a stop string appears (possibly spread over many pushes), push() returns
// the text before it and the matcher is stopped; the stop string and anything after it are dropped
// (OpenAI semantics). finish() releases what is held when generation ends for another reason.
//
// Matching is on bytes; stop strings and input are UTF-8, and held-back text always starts at a
// stop string's first byte, so emitted pieces never split a character.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::chat {

class StopMatcher {
 public:
  // Empty strings are ignored.
  explicit StopMatcher(std::vector<std::string> stops = {});

  std::string push(std::string_view text);
  std::string finish();
  bool stopped() const { return stopped_; }
  // The stop string that matched ("" until one did).
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::size_t longest_ = 0;
  std::string held_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace verdict::chat
