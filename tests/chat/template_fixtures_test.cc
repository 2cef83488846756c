// The two real chat templates (Qwen3-0.6B, Qwen3.5-4B) against the 36 renders of each made by an
// independent implementation (@huggingface/jinja): every case must match byte for byte (or fail
// where the fixture records an error).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "chat/jinja/template.h"
#include "core/mapped_file.h"
#include "support/fixtures.h"

namespace verdict::chat::jinja {
namespace {

using nlohmann::ordered_json;

struct Case {
  std::string name;
  ordered_json context;
  std::string rendered;
  std::string error;
  bool has_error = false;
};

std::vector<Case> load_cases(const std::string& path) {
  std::ifstream in(path);
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const ordered_json j = ordered_json::parse(line);
    Case c;
    c.name = j.at("name").get<std::string>();
    c.context = j.at("context");
    if (!j.at("rendered").is_null()) c.rendered = j.at("rendered").get<std::string>();
    if (!j.at("error").is_null()) {
      c.has_error = true;
      c.error = j.at("error").get<std::string>();
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

void check_template(const std::string& stem) {
  const std::string source = read_text_file(testing::fixture("chat-templates/" + stem + ".jinja"));
  const Template t = Template::parse(source);
  const std::vector<Case> cases = load_cases(testing::fixture("chat-templates/" + stem + ".cases.jsonl"));
  ASSERT_EQ(cases.size(), 36u) << stem;
  int index = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(stem + " case " + std::to_string(index++) + " (" + c.name + ")");
    if (c.has_error) {
      EXPECT_THROW(t.render(c.context), RenderError) << "fixture error: " << c.error;
      continue;
    }
    EXPECT_EQ(t.render(c.context), c.rendered);
  }
}

TEST(TemplateFixtures, Qwen3RendersEveryCaseByteForByte) { check_template("Qwen-Qwen3-0.6B"); }
TEST(TemplateFixtures, Qwen35RendersEveryCaseByteForByte) { check_template("Qwen3.5-4B"); }

}  // namespace
}  // namespace verdict::chat::jinja
