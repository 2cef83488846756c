// ChatTemplate: where the template comes from, the render context transformers builds, message
// normalisation, and refusals as ChatTemplateError. Expected prompts come from the fixture renders or
// are derived by hand from the template sources.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "core/mapped_file.h"
#include "support/fixtures.h"

namespace verdict::chat {
namespace {

using nlohmann::ordered_json;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "verdict-chat-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path_ + "/" + name) << text; }

 private:
  std::string path_;
};

std::vector<ordered_json> fixture_cases(const std::string& stem) {
  std::ifstream in(testing::fixture("chat-templates/" + stem + ".cases.jsonl"));
  std::vector<ordered_json> cases;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) cases.push_back(ordered_json::parse(line));
  return cases;
}

ChatTemplate fixture_template(const std::string& stem) {
  return ChatTemplate::from_source(read_text_file(testing::fixture("chat-templates/" + stem + ".jinja")),
                                   {{"bos_token", ""}, {"eos_token", "<|im_end|>"}});
}

// The request a client would send for a fixture case's context.
ChatRequest request_for(const ordered_json& context) {
  ChatRequest r;
  r.messages = context.at("messages");
  r.add_generation_prompt = context.at("add_generation_prompt").get<bool>();
  if (context.contains("tools")) r.tools = context.at("tools");
  if (context.contains("enable_thinking")) r.kwargs = ordered_json{{"enable_thinking", context.at("enable_thinking")}};
  return r;
}

TEST(ChatTemplate, RendersEveryFixtureCaseThroughTheRequestPath) {
  for (const std::string stem : {"Qwen-Qwen3-0.6B", "Qwen3.5-4B"}) {
    const ChatTemplate t = fixture_template(stem);
    int index = 0;
    for (const auto& c : fixture_cases(stem)) {
      SCOPED_TRACE(stem + " case " + std::to_string(index++));
      EXPECT_EQ(t.render(request_for(c.at("context"))), c.at("rendered").get<std::string>());
    }
  }
}

TEST(ChatTemplate, ToolCallArgumentsSentAsAJsonStringRenderLikeAnObject) {
  // OpenAI clients send tool_calls[].function.arguments as a JSON string; the fixture used an object.
  for (const std::string stem : {"Qwen-Qwen3-0.6B", "Qwen3.5-4B"}) {
    const ChatTemplate t = fixture_template(stem);
    int checked = 0;
    for (const auto& c : fixture_cases(stem)) {
      if (c.at("name") != "tools_call") continue;
      ChatRequest r = request_for(c.at("context"));
      for (auto& m : r.messages)
        if (m.contains("tool_calls"))
          for (auto& call : m["tool_calls"]) call["function"]["arguments"] = call["function"]["arguments"].dump();
      EXPECT_EQ(t.render(r), c.at("rendered").get<std::string>()) << stem;
      ++checked;
    }
    EXPECT_EQ(checked, 6) << stem;
  }
}

TEST(ChatTemplate, LoadsTheCheckpointTemplateAndSpecialTokens) {
  const ChatTemplate t = ChatTemplate::from_model_dir(testing::fixture("qwen35-tiny"));
  EXPECT_EQ(t.special_tokens().at("eos_token"), "<|im_end|>");
  EXPECT_EQ(t.special_tokens().at("pad_token"), "<|endoftext|>");
  EXPECT_EQ(t.special_tokens().count("bos_token"), 0u);  // null in tokenizer_config.json
  ChatRequest r;
  r.messages = ordered_json::parse(R"([{"role": "user", "content": "Hello world"}])");
  EXPECT_EQ(t.render(r), "<|im_start|>user\nHello world<|im_end|>\n<|im_start|>assistant\n<think>\n");
  r.kwargs = ordered_json{{"enable_thinking", false}};
  EXPECT_EQ(t.render(r), "<|im_start|>user\nHello world<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  r.add_generation_prompt = false;
  EXPECT_EQ(t.render(r), "<|im_start|>user\nHello world<|im_end|>\n");
}

TEST(ChatTemplate, ChatTemplateJinjaTakesPrecedence) {
  TempDir dir;
  dir.write("tokenizer_config.json", R"({"chat_template": "config:{{ messages[0].content }}", "eos_token": "E"})");
  const std::string one_user = R"([{"role": "user", "content": "x"}])";
  ChatRequest r;
  r.messages = ordered_json::parse(one_user);
  EXPECT_EQ(ChatTemplate::from_model_dir(dir.path()).render(r), "config:x");
  dir.write("chat_template.jinja", "file:{{ messages[0].content }}{{ eos_token }}\n");
  EXPECT_EQ(ChatTemplate::from_model_dir(dir.path()).render(r), "file:xE");
}

TEST(ChatTemplate, NamedTemplateListUsesDefaultAndToolUse) {
  const ordered_json config = ordered_json::parse(R"({
    "chat_template": [{"name": "tool_use", "template": "tools:{{ tools | length }}"},
                      {"name": "default", "template": "default:{{ tools is none }}"}],
    "bos_token": {"content": "<s>", "lstrip": false}})");
  const ChatTemplate t = ChatTemplate::from_tokenizer_config(config, "tokenizer_config.json");
  EXPECT_EQ(t.special_tokens().at("bos_token"), "<s>");
  ChatRequest r;
  r.messages = ordered_json::parse(R"([{"role": "user", "content": "x"}])");
  EXPECT_EQ(t.render(r), "default:True");
  r.tools = ordered_json::parse(R"([{"type": "function", "function": {"name": "f"}}])");
  EXPECT_EQ(t.render(r), "tools:1");

  const ordered_json no_default = ordered_json::parse(R"({"chat_template": [{"name": "rag", "template": "x"}]})");
  EXPECT_THROW(ChatTemplate::from_tokenizer_config(no_default, "cfg"), Error);
}

TEST(ChatTemplate, TemplatesThatCannotLoadNameTheFileAndPosition) {
  TempDir dir;
  dir.write("tokenizer_config.json",
            R"({"chat_template": "{% for m in messages %}\n{{ m | frobnicate }}{% endfor %}"})");
  try {
    ChatTemplate::from_model_dir(dir.path());
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              dir.path() + "/tokenizer_config.json: chat template: line 2, column 8: unknown filter 'frobnicate'");
  }
  TempDir empty;
  empty.write("tokenizer_config.json", R"({"eos_token": "E"})");
  EXPECT_THROW(ChatTemplate::from_model_dir(empty.path()), Error);
  TempDir nothing;
  EXPECT_THROW(ChatTemplate::from_model_dir(nothing.path()), Error);
}

TEST(ChatTemplate, RefusalsAreChatTemplateErrorsWithTheTemplatesMessage) {
  const ChatTemplate t = fixture_template("Qwen3.5-4B");
  auto message_of = [&](const char* messages) {
    ChatRequest r;
    r.messages = ordered_json::parse(messages);
    try {
      t.render(r);
    } catch (const ChatTemplateError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message_of(R"([{"role": "user", "content": "a"}, {"role": "system", "content": "late"}])"),
            "System message must be at the beginning.");
  EXPECT_EQ(message_of(R"([{"role": "system", "content": "only"}])"), "No user query found in messages.");
  EXPECT_EQ(message_of(R"([])"), "No messages provided.");
  EXPECT_EQ(message_of(R"([{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}])"),
            "Unexpected message role.");
  EXPECT_EQ(message_of(R"([{"role": "user", "content": 5}])"), "Unexpected content type.");
  EXPECT_EQ(message_of(R"({"role": "user"})"), "'messages' must be an array");

  ChatRequest r;
  r.messages = ordered_json::parse(R"([{"role": "user", "content": "a"}])");
  r.kwargs = ordered_json{{"messages", ordered_json::array()}};
  EXPECT_THROW(t.render(r), ChatTemplateError);
}

TEST(ChatTemplate, ContentPartsFollowWhatTheTemplateUnderstands) {
  const ChatTemplate qwen3 = fixture_template("Qwen-Qwen3-0.6B");
  const ChatTemplate qwen35 = fixture_template("Qwen3.5-4B");
  EXPECT_FALSE(qwen3.takes_content_parts());
  EXPECT_TRUE(qwen35.takes_content_parts());
  ChatRequest r;
  r.add_generation_prompt = false;
  r.messages = ordered_json::parse(
      R"([{"role": "user", "content": [{"type": "text", "text": "Hello"}, {"type": "text", "text": "world"}]}])");
  // Qwen3 treats content as a string: the parts are joined with "\n" first.
  EXPECT_EQ(qwen3.render(r), "<|im_start|>user\nHello\nworld<|im_end|>\n");
  // Qwen3.5 walks the parts itself and writes their texts back to back.
  EXPECT_EQ(qwen35.render(r), "<|im_start|>user\nHelloworld<|im_end|>\n");
  r.messages = ordered_json::parse(
      R"([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "?"}]}])");
  try {
    qwen3.render(r);
    FAIL() << "rendered";
  } catch (const ChatTemplateError& e) {
    EXPECT_STREQ(e.what(), "content parts of type 'image_url' are not supported by this model");
  }
  EXPECT_EQ(qwen35.render(r), "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>?<|im_end|>\n");
}

}  // namespace
}  // namespace verdict::chat
