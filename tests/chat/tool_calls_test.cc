// Tool calls out of generated text: Qwen3's JSON blocks and Qwen3.5's XML blocks, typed by the
// request's schema, with everything that does not parse left as content, and never a throw.
#include "chat/tool_calls.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "support/fixtures.h"

namespace verdict::chat {
namespace {

using nlohmann::ordered_json;

const ordered_json& weather_tools() {
  static const ordered_json tools = ordered_json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
      "properties": {"zone": {"type": "string"}}}}}
  ])");
  return tools;
}

const ordered_json& typed_tools() {
  static const ordered_json tools = ordered_json::parse(R"([
    {"type": "function", "function": {"name": "typed", "parameters": {"type": "object", "properties": {
      "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
      "b": {"type": "boolean"}, "o": {"type": "object"}, "a": {"type": "array"},
      "z": {"type": "null"}, "u": {"type": ["integer", "null"]}, "e": {"enum": ["x", "y"]}}}}}
  ])");
  return tools;
}

std::string json_block(const std::string& name, const std::string& args) {
  return "<tool_call>\n{\"name\": \"" + name + "\", \"arguments\": " + args + "}\n</tool_call>";
}

std::string xml_block(const std::string& name, const std::vector<std::pair<std::string, std::string>>& params) {
  std::string s = "<tool_call>\n<function=" + name + ">\n";
  for (const auto& [k, v] : params) s += "<parameter=" + k + ">\n" + v + "\n</parameter>\n";
  return s + "</function>\n</tool_call>";
}

void expect_id_shape(const std::string& id) {
  ASSERT_EQ(id.size(), 5u + 24u) << id;
  EXPECT_EQ(id.substr(0, 5), "call_") << id;
  for (char c : id.substr(5)) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << id;
}

std::string rstrip(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// ---- Qwen3: JSON ----

TEST(ToolCallsJson, OneCall) {
  const auto r = parse_tool_calls(json_block("get_weather", R"({"city": "Paris"})"), weather_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"Paris"})");
  expect_id_shape(r.calls[0].id);
  EXPECT_EQ(r.content, "");
}

TEST(ToolCallsJson, SeveralCallsAfterText) {
  const std::string text = "Let me check both.\n\n" + json_block("get_weather", R"({"city": "Paris", "days": 3})") +
                           "\n" + json_block("get_time", R"({"zone": "Europe/Paris"})") + "\n";
  const auto r = parse_tool_calls(text, weather_tools());
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"Paris","days":3})");
  EXPECT_EQ(r.calls[1].name, "get_time");
  EXPECT_EQ(r.calls[1].arguments, R"({"zone":"Europe/Paris"})");
  EXPECT_NE(r.calls[0].id, r.calls[1].id);
  EXPECT_EQ(r.content, "Let me check both.");
}

TEST(ToolCallsJson, KeysKeepTheGeneratedOrder) {
  const auto r = parse_tool_calls(json_block("f", R"({"zeta": 1, "alpha": {"y": [1, 2], "b": null}, "mid": "x"})"),
                                  ordered_json());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"zeta":1,"alpha":{"y":[1,2],"b":null},"mid":"x"})");
}

TEST(ToolCallsJson, ArgumentsAsAStringOrAbsent) {
  auto r = parse_tool_calls(json_block("get_weather", R"("{\"city\": \"Rome\"}")"), weather_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"Rome"})");

  r = parse_tool_calls("<tool_call>\n{\"name\": \"get_time\"}\n</tool_call>", weather_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{}");

  // Arguments that are not an object: not a call.
  const std::string text = json_block("get_weather", "[1, 2]");
  r = parse_tool_calls(text, weather_tools());
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, text);
}

TEST(ToolCallsJson, MalformedJsonStaysContent) {
  const std::string bad = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": Paris}}\n</tool_call>";
  auto r = parse_tool_calls("Sure. " + bad, weather_tools());
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, "Sure. " + bad);

  // A bad block does not spoil a good one after it.
  const std::string good = json_block("get_time", R"({"zone": "UTC"})");
  r = parse_tool_calls(bad + "\n" + good, weather_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "get_time");
  EXPECT_EQ(r.content, bad);

  // Not JSON nor XML inside, a missing name, a name that is not a string.
  for (const std::string& s : {std::string("<tool_call>hello</tool_call>"),
                               std::string("<tool_call>{\"arguments\": {}}</tool_call>"),
                               std::string("<tool_call>{\"name\": 3, \"arguments\": {}}</tool_call>"),
                               std::string("<tool_call>{\"name\": \"\", \"arguments\": {}}</tool_call>"),
                               std::string("<tool_call></tool_call>")}) {
    r = parse_tool_calls(s, ordered_json());
    EXPECT_TRUE(r.calls.empty()) << s;
    EXPECT_EQ(r.content, s);
  }
}

TEST(ToolCallsJson, CloseTagInsideAJsonString) {
  const auto r =
      parse_tool_calls(json_block("f", R"({"note": "ends with </tool_call> here", "n": 1})"), ordered_json());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"note":"ends with </tool_call> here","n":1})");
  EXPECT_EQ(r.content, "");
}

TEST(ToolCallsJson, Unterminated) {
  // Cut by max_tokens in the middle of the arguments: content.
  const std::string cut = "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"ci";
  auto r = parse_tool_calls(cut, weather_tools());
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, cut);
  // Cut right after the open tag.
  r = parse_tool_calls("Checking.\n<tool_call>\n", weather_tools());
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, "Checking.\n<tool_call>");
  // Complete call, only the close tag missing: a call.
  r = parse_tool_calls("Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n",
                       weather_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"Oslo"})");
  EXPECT_EQ(r.content, "Checking.");
}

TEST(ToolCallsJson, UnknownFunctionStaysContent) {
  const std::string text = json_block("launch_rockets", R"({"count": 3})");
  auto r = parse_tool_calls(text, weather_tools());
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, text);
  // Without tools any name is accepted.
  r = parse_tool_calls(text, ordered_json());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "launch_rockets");
  // An empty tools array accepts none.
  r = parse_tool_calls(text, ordered_json::array());
  EXPECT_TRUE(r.calls.empty());
}

TEST(ToolCallsJson, TextAfterAndBetweenCallsIsContent) {
  const std::string text = "A " + json_block("get_time", "{}") + " B " + json_block("get_time", "{}") + " C\n\n";
  const auto r = parse_tool_calls(text, weather_tools());
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.content, "A  B  C");
}

TEST(ToolCalls, PlainTextIsContent) {
  auto r = parse_tool_calls("Just an answer, with <b>markup</b> and < signs.  \n", weather_tools());
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, "Just an answer, with <b>markup</b> and < signs.");
  r = parse_tool_calls("", weather_tools());
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, "");
}

// ---- Qwen3.5: XML ----

TEST(ToolCallsXml, OneCall) {
  const auto r = parse_tool_calls(xml_block("get_weather", {{"city", "Paris"}, {"days", "3"}}), weather_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"Paris","days":3})");
  expect_id_shape(r.calls[0].id);
  EXPECT_EQ(r.content, "");
}

TEST(ToolCallsXml, SeveralCallsAfterText) {
  // As the template renders them: text, "\n\n", blocks separated by "\n".
  const std::string text = "I'll look both up.\n\n" + xml_block("get_time", {{"zone", "UTC"}}) + "\n" +
                           xml_block("get_weather", {{"city", "Lima"}});
  const auto r = parse_tool_calls(text, weather_tools());
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].name, "get_time");
  EXPECT_EQ(r.calls[0].arguments, R"({"zone":"UTC"})");
  EXPECT_EQ(r.calls[1].name, "get_weather");
  EXPECT_EQ(r.calls[1].arguments, R"({"city":"Lima"})");
  EXPECT_NE(r.calls[0].id, r.calls[1].id);
  EXPECT_EQ(r.content, "I'll look both up.");
}

TEST(ToolCallsXml, NoParametersAndSeveralFunctionsInOneBlock) {
  auto r = parse_tool_calls("<tool_call>\n<function=get_time>\n</function>\n</tool_call>", weather_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{}");

  r = parse_tool_calls(
      "<tool_call>\n<function=get_time>\n</function>\n<function=get_weather>\n<parameter=city>\nX\n</parameter>\n"
      "</function>\n</tool_call>",
      weather_tools());
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[1].arguments, R"({"city":"X"})");
}

TEST(ToolCallsXml, ValuesAreRawTextWithOneNewlineStripped) {
  const ordered_json none;
  // Multi-line; only one leading and one trailing newline go.
  auto r = parse_tool_calls(xml_block("f", {{"body", "\nline 1\n  line 2\n"}}), none);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(ordered_json::parse(r.calls[0].arguments)["body"], "\nline 1\n  line 2\n");
  // Without the newlines (the model wrote it inline).
  r = parse_tool_calls("<tool_call><function=f><parameter=a>inline</parameter></function></tool_call>", none);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"a":"inline"})");
  // Empty value.
  r = parse_tool_calls("<tool_call>\n<function=f>\n<parameter=a>\n</parameter>\n</function>\n</tool_call>", none);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"a":""})");
  // Quotes, backslashes and UTF-8 are escaped as JSON wants.
  r = parse_tool_calls(xml_block("f", {{"q", "say \"hi\" \\ café"}}), none);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"q":"say \"hi\" \\ café"})");
}

TEST(ToolCallsXml, NestedAngleBracketsInValues) {
  const std::string html = "<div class=\"a\">\n  <p>x < y && y > z</p>\n</div>";
  const std::string code = "if (a<b) { v.push_back(<T>); }\n<parameter is not a tag here";
  const std::string nested = "docs: write </parameter> to close a parameter";
  const auto r = parse_tool_calls(
      xml_block("write", {{"html", html}, {"code", code}, {"text", nested}, {"tail", "</function> in text"}}),
      ordered_json());
  ASSERT_EQ(r.calls.size(), 1u);
  const auto args = ordered_json::parse(r.calls[0].arguments);
  EXPECT_EQ(args["html"], html);
  EXPECT_EQ(args["code"], code);
  EXPECT_EQ(args["text"], nested);
  EXPECT_EQ(args["tail"], "</function> in text");
  EXPECT_EQ(r.content, "");
}

TEST(ToolCallsXml, SchemaTypedConversion) {
  const auto r = parse_tool_calls(xml_block("typed", {{"s", "42"},
                                                      {"i", "7"},
                                                      {"n", "2.5"},
                                                      {"b", "true"},
                                                      {"o", "{\"k\": [1, \"<v>\"]}"},
                                                      {"a", "[1, 2, 3]"},
                                                      {"z", "null"},
                                                      {"u", "null"},
                                                      {"e", "x"},
                                                      {"extra", "5"}}),
                                  typed_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments,
            R"({"s":"42","i":7,"n":2.5,"b":true,"o":{"k":[1,"<v>"]},"a":[1,2,3],"z":null,"u":null,"e":"x","extra":"5"})");
}

TEST(ToolCallsXml, ValuesThatDoNotFitTheirTypeStayStrings) {
  const auto r = parse_tool_calls(xml_block("typed", {{"i", "2.5"},
                                                      {"n", "many"},
                                                      {"b", "yes"},
                                                      {"o", "[1]"},
                                                      {"a", "{\"not\": \"a list\"}"},
                                                      {"z", "0"},
                                                      {"u", "3"}}),
                                  typed_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments,
            R"({"i":"2.5","n":"many","b":"yes","o":"[1]","a":"{\"not\": \"a list\"}","z":"0","u":3})");
}

TEST(ToolCallsXml, PythonSpellingsFromTheTemplate) {
  // The template writes arguments with `| string`: True, False, None.
  const auto r = parse_tool_calls(xml_block("typed", {{"b", "True"}, {"z", "None"}, {"s", "True"}}), typed_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"b":true,"z":null,"s":"True"})");
}

TEST(ToolCallsXml, WithoutToolsEverythingIsAString) {
  const auto r = parse_tool_calls(xml_block("anything", {{"n", "3"}, {"o", "{}"}}), ordered_json());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"n":"3","o":"{}"})");
}

TEST(ToolCallsXml, UnknownFunctionStaysContent) {
  const std::string text = "Trying.\n\n" + xml_block("get_stock", {{"ticker", "ACME"}});
  const auto r = parse_tool_calls(text, weather_tools());
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, text);
}

TEST(ToolCallsXml, Malformed) {
  for (const std::string& s : {
           // no close for the parameter
           std::string("<tool_call>\n<function=get_time>\n<parameter=zone>\nUTC\n</function>\n</tool_call>"),
           // no close for the function
           std::string("<tool_call>\n<function=get_time>\n<parameter=zone>\nUTC\n</parameter>\n</tool_call>"),
           // text between parameters
           std::string("<tool_call>\n<function=get_time>\nhmm\n<parameter=zone>\nUTC\n</parameter>\n</function>\n"
                       "</tool_call>"),
           // text after the function
           std::string("<tool_call>\n<function=get_time>\n</function>\nand more\n</tool_call>"),
           // empty or multi-line names
           std::string("<tool_call>\n<function=>\n</function>\n</tool_call>"),
           std::string("<tool_call>\n<function=get\n_time>\n</function>\n</tool_call>"),
           std::string("<tool_call>\n<function=get_time>\n<parameter=>\nx\n</parameter>\n</function>\n</tool_call>"),
           std::string("<tool_call>\n<function=get_time\n"),
       }) {
    const auto r = parse_tool_calls(s, weather_tools());
    EXPECT_TRUE(r.calls.empty()) << s;
    EXPECT_EQ(r.content, rstrip(s)) << s;
  }
}

TEST(ToolCallsXml, Unterminated) {
  // Cut inside a value.
  const std::string cut = "On it.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nPar";
  auto r = parse_tool_calls(cut, weather_tools());
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, cut);
  // Cut after a complete first call, inside the second.
  const std::string first = xml_block("get_time", {{"zone", "UTC"}});
  r = parse_tool_calls(first + "\n<tool_call>\n<function=get_weather>\n", weather_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "get_time");
  EXPECT_EQ(r.content, "\n<tool_call>\n<function=get_weather>");  // only trailing whitespace is trimmed
  // Complete function, only "</tool_call>" missing: a call.
  r = parse_tool_calls("<tool_call>\n<function=get_time>\n<parameter=zone>\nUTC\n</parameter>\n</function>\n",
                       weather_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"zone":"UTC"})");
}

TEST(ToolCallsXml, RepeatedParameterKeepsTheLastValue) {
  const auto r = parse_tool_calls(xml_block("f", {{"a", "1"}, {"b", "2"}, {"a", "3"}}), ordered_json());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"a":"3","b":"2"})");
}

TEST(ToolCalls, InvalidUtf8NeverThrows) {
  const std::string bad = "\xff\xfe\xc3";
  auto r = parse_tool_calls(xml_block("f", {{"a", bad}}), ordered_json());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_TRUE(ordered_json::accept(r.calls[0].arguments));
  r = parse_tool_calls(json_block("f", "{\"a\": \"" + bad + "\"}"), ordered_json());
  EXPECT_TRUE(r.calls.empty());  // not valid JSON text
}

TEST(ToolCalls, MalformedToolsArrayIsHarmless) {
  const ordered_json tools = ordered_json::parse(R"([3, null, {"function": 1}, {"function": {"name": 2}},
    {"function": {"name": "f", "parameters": {"properties": {"n": {"type": 5}, "m": "integer"}}}}])");
  const auto r = parse_tool_calls(xml_block("f", {{"n", "1"}, {"m", "2"}}), tools);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"n":"1","m":"2"})");
}

// ---- Round trip through the fixture templates ----

// Renders an assistant turn with tool calls through a Qwen template, then parses the rendered turn
// back: the calls (names, arguments) come back as they went in.
void round_trip(const std::string& stem) {
  std::ifstream in(testing::fixture("chat-templates/" + stem + ".jinja"));
  ASSERT_TRUE(in) << stem;
  std::stringstream source;
  source << in.rdbuf();
  const ChatTemplate t = ChatTemplate::from_source(source.str(), {{"eos_token", "<|im_end|>"}});

  ChatRequest request;
  request.tools = typed_tools();
  request.add_generation_prompt = false;
  const ordered_json args1 = ordered_json::parse(
      R"({"s": "multi\nline <b>text</b>", "i": -12, "n": 0.25, "b": false, "o": {"k": [1, "x"]}, "a": ["p", 2]})");
  const ordered_json args2 = ordered_json::parse(R"({"e": "y", "z": null})");
  request.messages = ordered_json::array();
  request.messages.push_back({{"role", "user"}, {"content", "go"}});
  request.messages.push_back(
      {{"role", "assistant"},
       {"content", "Calling."},
       {"tool_calls", ordered_json::array({{{"type", "function"}, {"function", {{"name", "typed"}, {"arguments", args1}}}},
                                           {{"type", "function"}, {"function", {{"name", "typed"}, {"arguments", args2}}}}})}});
  const std::string rendered = t.render(request);

  // Each turn: "<|im_start|>ROLE\n...<|im_end|>".
  std::vector<ToolCall> calls;
  std::size_t pos = 0;
  while ((pos = rendered.find("<|im_start|>", pos)) != std::string::npos) {
    pos += std::string("<|im_start|>").size();
    const std::size_t end = rendered.find("<|im_end|>", pos);
    ASSERT_NE(end, std::string::npos);
    const std::string turn = rendered.substr(pos, end - pos);
    const auto r = parse_tool_calls(turn, request.tools);
    if (turn.starts_with("assistant\n")) {
      EXPECT_TRUE(r.content.ends_with("Calling.")) << r.content;
      for (const auto& c : r.calls) calls.push_back(c);
    } else {
      EXPECT_TRUE(r.calls.empty()) << "the system prompt's example is not a call:\n" << turn;
    }
  }
  ASSERT_EQ(calls.size(), 2u) << rendered;
  EXPECT_EQ(calls[0].name, "typed");
  EXPECT_EQ(ordered_json::parse(calls[0].arguments), args1) << calls[0].arguments;
  EXPECT_EQ(ordered_json::parse(calls[1].arguments), args2) << calls[1].arguments;
  EXPECT_EQ(calls[0].arguments, args1.dump());  // same key order
}

TEST(ToolCallsFixtures, Qwen3RoundTrip) { round_trip("Qwen-Qwen3-0.6B"); }
TEST(ToolCallsFixtures, Qwen35RoundTrip) { round_trip("Qwen3.5-4B"); }

// ---- Streaming: where a block starts ----

TEST(ToolCallStart, FindsTheBlockOrAPartialPrefix) {
  const auto npos = std::string::npos;
  EXPECT_EQ(tool_call_start(""), npos);
  EXPECT_EQ(tool_call_start("Hello there."), npos);
  EXPECT_EQ(tool_call_start("Hello <b>"), npos);
  EXPECT_EQ(tool_call_start("a < b"), npos);
  EXPECT_EQ(tool_call_start("Let me check.\n<tool_call>\n{\"na"), 14u);
  EXPECT_EQ(tool_call_start("<tool_call>"), 0u);
  EXPECT_EQ(tool_call_start("x <tool_call> y <tool_call>"), 2u);
  // Every proper prefix of the tag at the end is held back.
  const std::string tag = "<tool_call>";
  for (std::size_t n = 1; n < tag.size(); ++n) {
    const std::string text = "Sure" + tag.substr(0, n);
    EXPECT_EQ(tool_call_start(text), 4u) << text;
  }
  EXPECT_EQ(tool_call_start("<"), 0u);
  EXPECT_EQ(tool_call_start("a <tool"), 2u);
  EXPECT_EQ(tool_call_start("a <tool_x"), npos);
  EXPECT_EQ(tool_call_start("</tool_call>"), npos);
  // "<t" after an earlier "<": the later, still-possible start.
  EXPECT_EQ(tool_call_start("1 < 2 <t"), 6u);
}

TEST(ToolCallStart, StreamingSplitMatchesTheWholeText) {
  // Streaming content up to tool_call_start, then parsing the rest at the end, gives the content
  // the whole-text parse gives.
  const std::string text = "Here goes.\n\n" + json_block("get_time", R"({"zone": "UTC"})");
  std::string streamed;
  std::size_t sent = 0;
  for (std::size_t i = 1; i <= text.size(); ++i) {
    const std::string_view seen(text.data(), i);
    const std::size_t start = tool_call_start(seen);
    const std::size_t safe = start == std::string::npos ? i : start;
    if (safe > sent) {
      streamed += text.substr(sent, safe - sent);
      sent = safe;
    }
  }
  EXPECT_EQ(streamed, "Here goes.\n\n");
  const auto r = parse_tool_calls(text.substr(sent), weather_tools());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(rstrip(streamed + r.content), parse_tool_calls(text, weather_tools()).content);
}

// ---- Randomized: never throws, always well-formed ----

TEST(ToolCallsFuzz, RandomPiecesNeverThrowAndGiveValidCalls) {
  const std::vector<std::string> pieces = {
      "<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>", "get_weather",
      "typed", "f", ">", "<", "\n", " ", "{", "}", "[", "]", "\"", ":", ",", "\"name\"", "\"arguments\"",
      "\"get_time\"", "city", "i", "o", "3", "-1.5e3", "true", "null", "True", "\\", "\xff", "\xc3\xa9", "text",
      "<tool_", "_call>", "{\"name\": \"f\", \"arguments\": {}}", "{\"a\": 1}"};
  ordered_json tools = weather_tools();
  for (const auto& t : typed_tools()) tools.push_back(t);
  tools.push_back({{"type", "function"}, {"function", {{"name", "f"}}}});
  std::mt19937 rng(12345);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> len(0, 60);
  std::uniform_int_distribution<int> byte(0, 255);
  std::set<std::string> ids;
  std::size_t total_calls = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string text;
    const int n = len(rng);
    for (int k = 0; k < n; ++k) {
      if (k % 7 == 6)
        text += static_cast<char>(byte(rng));
      else
        text += pieces[pick(rng)];
    }
    if (iter % 3 == 0) text = xml_block("typed", {{"o", text}, {"i", text}}) + text;  // well-formed around noise
    if (iter % 5 == 0) text = text.substr(0, text.size() / 2);                        // cut anywhere
    ParsedToolCalls r;
    ASSERT_NO_THROW(r = parse_tool_calls(text, iter % 2 ? tools : ordered_json())) << text;
    ASSERT_NO_THROW((void)tool_call_start(text));
    for (const auto& c : r.calls) {
      const auto args = ordered_json::parse(c.arguments, nullptr, false);
      ASSERT_TRUE(args.is_object()) << c.arguments;
      ASSERT_FALSE(c.name.empty());
      expect_id_shape(c.id);
      EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id " << c.id;
      ++total_calls;
    }
    if (r.calls.empty()) {
      EXPECT_EQ(r.content, rstrip(text));
    }
    // The content is never longer than the text.
    EXPECT_LE(r.content.size(), text.size());
  }
  EXPECT_GT(total_calls, 100u);  // the generator does produce calls
}

}  // namespace
}  // namespace verdict::chat
