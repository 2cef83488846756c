// The OpenAI request parser: what it accepts and how the request overrides the model's defaults.
// (Refusal messages over HTTP are tested in tests/server/chat_test.cc.)
#include "chat/openai_request.h"

#include <gtest/gtest.h>

namespace verdict::chat {
namespace {

std::string refusal(std::string_view body, Endpoint endpoint = Endpoint::kChat) {
  try {
    parse_completion_request(body, endpoint);
  } catch (const RequestError& e) {
    return e.param() + ": " + e.what();
  }
  return "accepted";
}

TEST(OpenAiRequest, ChatFieldsAreRead) {
  const CompletionRequest r = parse_completion_request(
      R"({"model":" qwen ","messages":[{"role":"developer","content":"Be brief."},{"role":"user","content":"Hi"}],
          "max_completion_tokens":7,"max_tokens":99,"temperature":0.5,"top_p":0.9,"top_k":-1,"min_p":0.1,
          "presence_penalty":1,"frequency_penalty":-1,"repetition_penalty":1.2,"seed":42,"stop":"END",
          "logprobs":true,"top_logprobs":3,"stream":true,"stream_options":{"include_usage":true},
          "chat_template_kwargs":{"enable_thinking":false},
          "tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto","user":"ignored"})",
      Endpoint::kChat);
  EXPECT_EQ(r.model, "qwen");
  EXPECT_EQ(r.chat.messages[0]["role"], "system");  // developer → system
  EXPECT_EQ(r.max_tokens, 7);                        // max_completion_tokens wins
  EXPECT_EQ(r.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(r.stream && r.include_usage && r.logprobs && r.tools_given);
  EXPECT_EQ(r.top_logprobs, 3);
  EXPECT_EQ(r.chat.kwargs["enable_thinking"], false);

  GenerationOptions defaults;
  defaults.sampling.temperature = 0.6;
  defaults.sampling.top_k = 20;
  defaults.stop_ids = {5};
  const GenerationOptions o = apply(r, defaults, 4);
  EXPECT_EQ(o.max_tokens, 4);  // capped by the room left in the context
  EXPECT_DOUBLE_EQ(o.sampling.temperature, 0.5);
  EXPECT_EQ(o.sampling.top_k, 0);  // -1 = off
  EXPECT_DOUBLE_EQ(o.sampling.min_p, 0.1);
  EXPECT_EQ(o.sampling.seed, 42u);
  EXPECT_EQ(o.stop_ids, std::vector<TokenId>{5});
}

TEST(OpenAiRequest, DefaultsComeFromTheModelWhenTheRequestIsSilent) {
  const CompletionRequest r = parse_completion_request(R"({"messages":[{"role":"user","content":"Hi"}]})", Endpoint::kChat);
  EXPECT_FALSE(r.model.has_value());
  GenerationOptions defaults;
  defaults.sampling.temperature = 0.6;
  defaults.sampling.top_p = 0.95;
  const GenerationOptions o = apply(r, defaults, 1000);
  EXPECT_EQ(o.max_tokens, 1000);
  EXPECT_DOUBLE_EQ(o.sampling.temperature, 0.6);
  EXPECT_DOUBLE_EQ(o.sampling.top_p, 0.95);
  EXPECT_TRUE(o.split_reasoning);
}

TEST(OpenAiRequest, CompletionPrompts) {
  EXPECT_EQ(parse_completion_request(R"({"prompt":"Once"})", Endpoint::kCompletions).prompt_text, "Once");
  EXPECT_EQ(parse_completion_request(R"({"prompt":["Once"]})", Endpoint::kCompletions).prompt_text, "Once");
  const CompletionRequest ids = parse_completion_request(R"({"prompt":[1,2,3],"logprobs":2,"ignore_eos":true})", Endpoint::kCompletions);
  EXPECT_EQ(ids.prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_TRUE(ids.logprobs);
  EXPECT_EQ(ids.top_logprobs, 2);
  GenerationOptions defaults;
  defaults.stop_ids = {9};
  const GenerationOptions o = apply(ids, defaults, 10);
  EXPECT_TRUE(o.stop_ids.empty());        // ignore_eos
  EXPECT_FALSE(o.split_reasoning);        // plain completions never split reasoning
}

TEST(OpenAiRequest, RefusalsNameTheField) {
  EXPECT_EQ(refusal("[1]"), ": request body must be a JSON object, got an array");
  EXPECT_EQ(refusal(R"({"messages":[{"role":"user"}]})"), "messages[0].content: messages[0].content is required for role 'user'");
  EXPECT_EQ(refusal(R"({"messages":[{"role":"user","content":5}]})"),
            "messages[0].content: messages[0].content must be a string, an array of parts or null");
  EXPECT_EQ(refusal(R"({"messages":[{"role":"user","content":"x"}],"top_p":0})"), "top_p: 'top_p' must be in (0, 1], got 0");
  EXPECT_EQ(refusal(R"({"messages":[{"role":"user","content":"x"}],"stream_options":{}})"),
            "stream_options: 'stream_options' is only allowed with 'stream': true");
  EXPECT_EQ(refusal(R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}})"),
            "response_format: response_format 'json_object' is not supported (only \"text\")");
  EXPECT_EQ(refusal(R"({"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]})"),
            "tools[0]: tools[0] must be {\"type\": \"function\", \"function\": {...}}");
  EXPECT_EQ(refusal(R"({"prompt":"x","echo":true})", Endpoint::kCompletions), "echo: 'echo' is not supported");
  EXPECT_EQ(refusal(R"({"prompt":["a","b"]})", Endpoint::kCompletions), "prompt: only one prompt per request is supported");
  EXPECT_EQ(refusal(R"({"prompt":[-1]})", Endpoint::kCompletions), "prompt: a token-id prompt must hold non-negative integers");
  EXPECT_EQ(refusal(R"({"messages":[{"role":"user","content":[{"type":"text","text":"?"},{"type":"image_url","image_url":{"url":"x"}}]}]})"),
            "messages[0].content: messages[0].content parts of type 'image_url' are not supported: this model takes text only");
  EXPECT_EQ(refusal(R"({"messages":[{"role":"user","content":[{"type":"text","text":"?"}]}]})"), "accepted");
  EXPECT_EQ(refusal(std::string(200, '[')), ": request body nests deeper than 128 levels");
  EXPECT_EQ(refusal(R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"none","tools":[]})"), "accepted");
}

}  // namespace
}  // namespace verdict::chat
