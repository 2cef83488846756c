// Validation: every rule of systemone-api.md §5 from J1 to D5, with status, type, code and the exact
// message, and the rule order.
#include "decision/request.h"

#include <gtest/gtest.h>

#include <string>

#include "decision/render.h"

namespace verdict::decision {
namespace {

// A registry with one decision model "clef" (alias "default") and one chat model "qwen".
ResolvedModel resolve(const std::string& name) {
  if (name == "clef" || name == "default") return {"clef", MediaSupport{}};
  if (name == "clef-vision") return {"clef-vision", MediaSupport{true, false, false}};
  if (name == "qwen")
    throw DecisionError(400, "model_not_decision", "model 'qwen' is a chat model; use /v1/chat/completions");
  throw DecisionError(404, "model_not_found",
                      "model '" + name + "' not found; available decision models: clef; aliases: default");
}

struct Failure {
  int status;
  std::string type, code, message;
};

Failure fail(std::string_view body, const RequestLimits& limits = {}) {
  try {
    parse_request(body, limits, resolve);
  } catch (const DecisionError& e) {
    return {e.status(), e.type(), e.code(), e.what()};
  }
  ADD_FAILURE() << "accepted: " << body;
  return {};
}

void expect_fail(std::string_view body, int status, const std::string& code, const std::string& message,
                 const RequestLimits& limits = {}) {
  const Failure f = fail(body, limits);
  EXPECT_EQ(f.status, status) << body;
  EXPECT_EQ(f.type, "invalid_request_error") << body;
  EXPECT_EQ(f.code, code) << body;
  EXPECT_EQ(f.message, message) << body;
}

TEST(Validation, JsonRules) {
  for (const char* bad : {"", "{", "{\"model\":\"clef\",}", "NaN", "{\"a\":\"\\ud800\"}", "{\"a\":\"\xff\"}",
                          "{\"a\":\"raw\ttab\"}", "{} x"}) {
    expect_fail(bad, 400, "invalid_json", "request body is not valid JSON");
  }
  std::string deep = "{\"model\":\"clef\",\"state\":";
  for (int i = 0; i < 128; ++i) deep += "[";
  for (int i = 0; i < 128; ++i) deep += "]";
  deep += "}";
  expect_fail(deep, 400, "invalid_json", "request body is nested deeper than 128 levels");
  RequestLimits shallow;
  shallow.max_json_depth = 3;
  expect_fail(R"({"a":{"b":{"c":{}}}})", 400, "invalid_json", "request body is nested deeper than 3 levels",
              shallow);
  expect_fail(R"({"model":"clef","state":1E400,"questions":{"q":{"type":"noul"}}})", 400, "invalid_json",
              "request body contains a number too large for a double");
}

TEST(Validation, EnvelopeRules) {
  for (const char* body : {"[]", "\"text\"", "1", "null"}) {
    expect_fail(body, 400, "invalid_request", "request body must be a JSON object");
  }
  for (const char* body :
       {R"({"state":"s"})", R"({"model":5,"state":"s"})", R"({"model":null,"state":"s"})",
        R"({"model":"clef"})", R"({"model":"clef","document":"d"})", R"({"state":"s","questions":{}})"}) {
    expect_fail(body, 400, "missing_field", "model and state are required");
  }
  for (const char* body :
       {R"({"model":"clef","state":"s","truncate":"yes"})", R"({"model":"clef","state":"s","truncate":1})",
        R"({"model":"clef","state":"s","truncate":0})"}) {
    expect_fail(body, 400, "invalid_field", "truncate must be a boolean");
  }
  // V3 comes before model resolution, which comes before the questions.
  expect_fail(R"({"model":"nope","state":"s","truncate":"x"})", 400, "invalid_field",
              "truncate must be a boolean");
  expect_fail(R"({"model":" nope ","state":"s"})", 404, "model_not_found",
              "model 'nope' not found; available decision models: clef; aliases: default");
  EXPECT_EQ(fail(R"({"model":"qwen","state":"s"})").code, "model_not_decision");
}

TEST(Validation, QuestionsRules) {
  for (const char* q : {"", R"(,"questions":{})", R"(,"questions":[{"type":"noul"}])", R"(,"questions":"q")",
                        R"(,"questions":null)"}) {
    expect_fail(std::string(R"({"model":"clef","state":"s")") + q + "}", 400, "missing_questions",
                "at least one question is required");
  }
  RequestLimits two;
  two.max_questions = 2;
  expect_fail(R"({"model":"clef","state":"s","questions":{"a":{"type":"noul"},"b":{"type":"noul"},"c":5}})",
              400, "too_many_questions", "too many questions: 3 given; maximum is 2", two);
  // n counts after duplicate-key resolution.
  EXPECT_NO_THROW(parse_request(
      R"({"model":"clef","state":"s","questions":{"a":{"type":"noul"},"b":{"type":"noul"},"a":{"type":"noul"}}})",
      two, resolve));
}

void expect_question_fail(const std::string& questions, const std::string& code, const std::string& message,
                          const RequestLimits& limits = {}) {
  expect_fail(R"({"model":"clef","state":"s","questions":)" + questions + "}", 400, code, message, limits);
}

TEST(Validation, PerQuestionRules) {
  expect_question_fail(R"({"q":"just text"})", "invalid_question", "q: question must be an object");
  expect_question_fail(R"({"q":["noul"]})", "invalid_question", "q: question must be an object");
  for (const char* t :
       {R"({"q":{}})", R"({"q":{"type":"Noul"}})", R"({"q":{"type":null}})", R"({"q":{"type":1}})",
        R"({"q":{"type":["noul"]}})", R"({"q":{"type":"boolean","criteria":{}}})"}) {
    expect_question_fail(t, "invalid_question_type", "q: type must be noul, choice, or score");
  }
  for (const char* c :
       {R"({"q":{"type":"choice"}})", R"({"q":{"type":"choice","criteria":{}}})",
        R"({"q":{"type":"choice","criteria":null}})", R"({"q":{"type":"choice","criteria":0}})",
        R"({"q":{"type":"choice","criteria":false}})", R"({"q":{"type":"choice","criteria":0.0}})",
        R"({"q":{"type":"choice","criteria":-0.0}})", R"({"q":{"type":"score","criteria":[]}})",
        R"({"q":{"type":"score","criteria":""}})", R"({"q":{"type":"score"}})"}) {
    expect_question_fail(c, "empty_criteria", "q: criteria must not be empty");
  }
  for (const char* c :
       {R"({"q":{"type":"choice","criteria":["a","b"]}})", R"({"q":{"type":"choice","criteria":"abc"}})",
        R"({"q":{"type":"choice","criteria":1}})", R"({"q":{"type":"choice","criteria":true}})"}) {
    expect_question_fail(c, "invalid_criteria",
                         "q: choice criteria must be an object mapping option ids to descriptions");
  }
  RequestLimits small;
  small.max_choice_options = 2;
  small.max_score_levels = 3;
  expect_question_fail(R"({"q":{"type":"choice","criteria":{"a":1,"b":2,"c":3}}})", "too_many_options",
                       "q: too many options per choice: 3 given; maximum is 2", small);
  for (const char* c :
       {R"({"q":{"type":"score","criteria":{"a":1}}})", R"({"q":{"type":"score","criteria":"abc"}})",
        R"({"q":{"type":"score","criteria":3}})"}) {
    expect_question_fail(c, "invalid_criteria", "q: score criteria must be an array of level descriptions");
  }
  expect_question_fail(R"({"q":{"type":"score","criteria":[1,2,3,4]}})", "too_many_levels",
                       "q: too many score levels: 4 given; maximum is 3", small);
  for (const char* c :
       {R"({"q":{"type":"noul","criteria":"yes"}})", R"({"q":{"type":"noul","criteria":[1]}})",
        R"({"q":{"type":"noul","criteria":1}})", R"({"q":{"type":"noul","criteria":true}})"}) {
    expect_question_fail(c, "invalid_criteria",
                         "q: noul criteria must be an object with optional \"true\" and \"false\" keys");
  }
  for (const char* c : {R"({"":{"type":"noul"}})", R"({"":{"type":"noul","instructions":null}})",
                        R"({"":{"type":"noul","instructions":""}})"}) {
    expect_question_fail(c, "empty_question_text",
                         "a question with an empty id needs non-empty instructions");
  }
  // Q5 before Q11; the first failing question wins; ids are embedded raw.
  expect_question_fail(R"({"":{"type":"score"}})", "empty_criteria", ": criteria must not be empty");
  expect_question_fail(R"({"ok":{"type":"noul"},"a":{"type":"choice"},"b":{"type":"bogus"}})",
                       "empty_criteria", "a: criteria must not be empty");
  expect_question_fail(R"({"a\u00e7\u00e3o \"1\"":{"type":"x"}})", "invalid_question_type",
                       "a\xc3\xa7\xc3\xa3o \"1\": type must be noul, choice, or score");
}

TEST(Validation, MediaRules) {
  const std::string head = R"({"model":"clef","state":"s","questions":{"q":{"type":"noul"}})";
  expect_fail(head + R"(,"images":"x"})", 400, "invalid_media", "images must be an array");
  expect_fail(head + R"(,"audio":{},"images":"x"})", 400, "invalid_media", "images must be an array");
  expect_fail(head + R"(,"videos":5})", 400, "invalid_media", "videos must be an array");
  expect_fail(head + R"(,"images":["aGk="],"files":["aGk="]})", 400, "invalid_media",
              "send images or files, not both");
  expect_fail(head + R"(,"images":["aGk="]})", 400, "unsupported_media",
              "model 'clef' does not accept images");
  expect_fail(head + R"(,"files":[1]})", 400, "unsupported_media", "model 'clef' does not accept files");
  expect_fail(head + R"(,"audio":["aGk="]})", 400, "unsupported_media", "model 'clef' does not accept audio");
  // Absent, null and [] mean no media.
  EXPECT_NO_THROW(
      parse_request(head + R"(,"images":null,"files":[],"audio":[],"videos":null})", {}, resolve));

  const std::string vision = R"({"model":"clef-vision","state":"s","questions":{"q":{"type":"noul"}})";
  RequestLimits one;
  one.max_images = 1;
  expect_fail(vision + R"(,"images":["aGk=","aGk="]})", 400, "too_many_media",
              "too many images: 2 given; maximum is 1", one);
  expect_fail(vision + R"(,"images":["aGk=",3]})", 400, "invalid_media",
              "images[1]: expected a base64 data URL or a base64 string");
  expect_fail(vision + R"(,"images":["https://example.com/a.png"]})", 400, "invalid_media",
              "images[0]: expected a base64 data URL or a base64 string");
  expect_fail(vision + R"(,"files":["data:image/png,aGk="]})", 400, "invalid_media",
              "files[0]: expected a base64 data URL or a base64 string");
  const DecisionRequest ok =
      parse_request(vision + R"(,"files":["data:image/png;base64,aGk=","aGk"]})", {}, resolve);
  EXPECT_EQ(ok.images.size(), 2u);
}

TEST(Validation, EveryOtherTopLevelFieldIsIgnored) {
  const DecisionRequest r = parse_request(
      R"({"id":"rec-1","model":" default ","seed":3,"stream":true,"x_extra":{"a":[1]},"state":null,"truncate":null,"questions":{"q":{"type":"noul","other":1}}})",
      {}, resolve);
  EXPECT_EQ(r.model, " default ");
  EXPECT_TRUE(r.state.is_null());
  EXPECT_FALSE(r.truncate.has_value());
  EXPECT_TRUE(
      parse_request(R"({"model":"clef","state":"","truncate":false,"questions":{"q":{"type":"noul"}}})", {},
                    resolve)
          .truncate == std::optional<bool>(false));
}

TEST(Options, PerTypeOrderAndInstructionFallback) {
  const DecisionRequest r = parse_request(
      R"({"model":"clef","state":"s","questions":{
        "c":{"type":"choice","criteria":{"é":"e","A":null,"z":{"b":2,"a":1},"10":["x"],"9":""}},
        "n":{"type":"noul","criteria":{"false":null,"true":"", "maybe":"ignored"},"instructions":0},
        "d":{"type":"noul","criteria":{}},
        "s":{"type":"score","criteria":["lo",null,3],"instructions":false},
        "dup":{"type":"choice","criteria":{"x":"X one","y":"Y","x":"X two"},"instructions":"   "}}})",
      {}, resolve);
  ASSERT_EQ(r.questions.size(), 5u);
  const Question& c = r.questions[0];
  EXPECT_EQ(c.type, QuestionType::kChoice);
  std::vector<std::string> ids;
  for (const Option& o : c.options) ids.push_back(o.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"10", "9", "A", "z", "\xc3\xa9"}));
  EXPECT_EQ(c.request_order, (std::vector<std::size_t>{4, 2, 3, 0, 1}));
  EXPECT_FALSE(c.options[2].description.has_value());
  EXPECT_EQ(render(c.instruction), "c");

  const Question& n = r.questions[1];
  ASSERT_EQ(n.options.size(), 2u);
  EXPECT_EQ(n.options[0].id, "true");
  EXPECT_EQ(render(*n.options[0].description), "");
  EXPECT_FALSE(n.options[1].description.has_value());
  EXPECT_EQ(render(n.instruction), "0");

  const Question& d = r.questions[2];
  EXPECT_EQ(render(*d.options[0].description), kNoulTrueDefault);
  EXPECT_EQ(render(*d.options[1].description), kNoulFalseDefault);

  const Question& s = r.questions[3];
  EXPECT_EQ(s.options.size(), 3u);
  EXPECT_EQ(s.options[2].id, "2");
  EXPECT_FALSE(s.options[1].description.has_value());
  EXPECT_EQ(s.levels.size(), 3u);
  EXPECT_TRUE(s.levels[1].is_null());
  EXPECT_EQ(render(s.instruction), "false");

  const Question& dup = r.questions[4];
  ASSERT_EQ(dup.options.size(), 2u);
  EXPECT_EQ(render(*dup.options[0].description), "X two");
  EXPECT_EQ(render(dup.instruction), "   ");
}

TEST(Shortcut, StateTextAndQuestionsJson) {
  const std::string body = shortcut_request_body(
      "default", "Hola\n\"x\"", R"({"urgente":{"type":"noul"},"b":{"type":"score","criteria":[1.0,2]}})");
  EXPECT_EQ(
      body,
      R"({"model":"default","state":"Hola\n\"x\"","questions":{"urgente":{"type":"noul"},"b":{"type":"score","criteria":[1.0,2]}}})");
  const DecisionRequest r = parse_request(body, {}, resolve);
  EXPECT_EQ(r.state.as_string(), "Hola\n\"x\"");
  EXPECT_EQ(r.questions.size(), 2u);
  EXPECT_THROW(shortcut_request_body("default", "s", "{"), DecisionError);
}

TEST(Trim, AsciiWhitespaceOnly) {
  EXPECT_EQ(trim_ascii_whitespace(" \t\r\n clef \n"), "clef");
  EXPECT_EQ(trim_ascii_whitespace("\xc2\xa0"
                                  "clef"),
            "\xc2\xa0"
            "clef");
  EXPECT_EQ(trim_ascii_whitespace("   "), "");
}

}  // namespace
}  // namespace verdict::decision
