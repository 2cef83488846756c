// Stop strings: never shown partially, found across any chunking, held text released at the end.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat/stop.h"

namespace verdict::chat {
namespace {

// Feeds `chunks`, returns everything emitted (push + finish) and whether it stopped.
std::pair<std::string, bool> feed(const std::vector<std::string>& stops, const std::vector<std::string>& chunks) {
  StopMatcher m(stops);
  std::string out;
  for (const auto& c : chunks) out += m.push(c);
  out += m.finish();
  return {out, m.stopped()};
}

TEST(StopMatcher, StopsBeforeTheStopString) {
  StopMatcher m({"STOP"});
  EXPECT_EQ(m.push("hello STOP world"), "hello ");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "STOP");
  EXPECT_EQ(m.push("more"), "");
  EXPECT_EQ(m.finish(), "");
}

TEST(StopMatcher, AStopStringAcrossChunksIsNeverEmitted) {
  StopMatcher m({"STOP"});
  EXPECT_EQ(m.push("hel"), "hel");
  EXPECT_EQ(m.push("lo ST"), "lo ");  // "ST" may start the stop string
  EXPECT_EQ(m.push("O"), "");
  EXPECT_EQ(m.push("P!"), "");
  EXPECT_TRUE(m.stopped());
}

TEST(StopMatcher, FalseStartsAreReleased) {
  StopMatcher m({"STOP"});
  EXPECT_EQ(m.push("ST"), "");
  EXPECT_EQ(m.push("ART"), "START");
  EXPECT_FALSE(m.stopped());
}

TEST(StopMatcher, HeldTextIsFlushedAtTheEnd) {
  StopMatcher m({"STOP"});
  EXPECT_EQ(m.push("abc S"), "abc ");
  EXPECT_EQ(m.finish(), "S");
  EXPECT_FALSE(m.stopped());
}

TEST(StopMatcher, TheEarliestStopStringWins) {
  EXPECT_EQ(feed({"world", "lo w"}, {"hello world"}).first, "hel");
  StopMatcher m({"ab", "abc"});
  EXPECT_EQ(m.push("xabc"), "x");
  EXPECT_EQ(m.matched(), "abc");  // both start at 1: the longer is reported
}

TEST(StopMatcher, OverlappingPrefixes) {
  StopMatcher m({"aab"});
  EXPECT_EQ(m.push("a"), "");
  EXPECT_EQ(m.push("a"), "");
  EXPECT_EQ(m.push("a"), "a");
  EXPECT_EQ(m.push("b"), "");
  EXPECT_TRUE(m.stopped());
}

TEST(StopMatcher, EveryChunkingGivesTheSameResult) {
  const std::string text = "The quick <|end|> brown fox";
  const std::vector<std::string> stops = {"<|end|>", "fox"};
  const std::string want = "The quick ";
  for (std::size_t i = 0; i <= text.size(); ++i) {
    for (std::size_t j = i; j <= text.size(); ++j) {
      const auto [out, stopped] = feed(stops, {text.substr(0, i), text.substr(i, j - i), text.substr(j)});
      EXPECT_EQ(out, want) << i << "," << j;
      EXPECT_TRUE(stopped);
    }
  }
  std::vector<std::string> bytes;
  for (const char c : text) bytes.emplace_back(1, c);
  EXPECT_EQ(feed(stops, bytes).first, want);
}

TEST(StopMatcher, WithoutStopsTextPassesThrough) {
  StopMatcher m;
  EXPECT_EQ(m.push("abc"), "abc");
  StopMatcher empty({""});
  EXPECT_EQ(empty.push("abc"), "abc");
}

TEST(StopMatcher, MultibyteStopStrings) {
  StopMatcher m({"\xc3\xa9!"});
  EXPECT_EQ(m.push("caf"), "caf");
  EXPECT_EQ(m.push("\xc3\xa9"), "");
  EXPECT_EQ(m.push("!"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(feed({"\xc3\xa9!"}, {"caf\xc3\xa9", " ok"}).first, "caf\xc3\xa9 ok");
}

}  // namespace
}  // namespace verdict::chat
