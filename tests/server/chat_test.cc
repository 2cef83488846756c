// /v1/chat/completions and /v1/completions over real HTTP, on the qwen35-tiny fixture checkpoint
// (a chat model) next to clef-tiny (a decision model): greedy ids against the fixture's golden
// decode, streams against whole answers, stop strings, limits, errors, disconnects, and chat
// streams running beside decisions.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "core/mapped_file.h"
#include "core/utf8.h"
#include "support/fixtures.h"
#include "test_server.h"

namespace verdict::server::testing {
namespace {

using Json = nlohmann::ordered_json;

registry::RegistryOptions chat_registry(std::size_t context = 4096) {
  registry::RegistryOptions o = clef_tiny_registry();
  o.models.push_back({"tiny-chat", verdict::testing::fixture("qwen35-tiny"), registry::ModelKind::kChat});
  o.chat_slots = 16;
  o.chat_context = context;
  return o;
}

const Json& golden() {
  static const Json g = Json::parse(read_text_file(verdict::testing::fixture("qwen35-tiny/golden.json")));
  return g;
}

Json post(httplib::Client& client, const std::string& path, const Json& body, int expect_status = 200) {
  const auto res = client.Post(path.c_str(), body.dump(), "application/json");
  EXPECT_TRUE(res);
  if (!res) return Json();
  EXPECT_EQ(res->status, expect_status) << res->body;
  return Json::parse(res->body);
}

// The SSE events of a streamed response, parsed ("[DONE]" kept as a string).
struct Stream {
  int status = 0;
  std::string content_type;
  std::vector<Json> events;
  bool done = false;
};

Stream post_stream(httplib::Client& client, const std::string& path, const Json& body) {
  Stream s;
  std::string raw;
  const auto res = client.Post(path.c_str(), body.dump(), "application/json");
  EXPECT_TRUE(res);
  if (!res) return s;
  s.status = res->status;
  s.content_type = res->get_header_value("Content-Type");
  raw = res->body;
  std::size_t at = 0;
  while (at < raw.size()) {
    const std::size_t end = raw.find("\n\n", at);
    if (end == std::string::npos) {
      ADD_FAILURE() << "unterminated SSE event: " << raw.substr(at);
      break;
    }
    const std::string event = raw.substr(at, end - at);
    at = end + 2;
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    const std::string data = event.substr(6);
    if (data == "[DONE]") {
      EXPECT_FALSE(s.done);
      s.done = true;
      continue;
    }
    EXPECT_FALSE(s.done) << "event after [DONE]";
    s.events.push_back(Json::parse(data));
  }
  return s;
}

// What a chat stream's deltas add up to.
struct Collected {
  std::string content, reasoning, finish_reason;
  std::vector<int> token_ids;
  Json usage;
};

Collected collect(const Stream& s) {
  Collected c;
  for (const Json& e : s.events) {
    if (e.contains("usage") && e["usage"].is_object()) c.usage = e["usage"];
    for (const Json& choice : e["choices"]) {
      if (choice.contains("delta")) {
        const Json& d = choice["delta"];
        if (d.contains("content") && d["content"].is_string()) c.content += d["content"].get<std::string>();
        if (d.contains("reasoning_content")) c.reasoning += d["reasoning_content"].get<std::string>();
      }
      if (choice.contains("text")) c.content += choice["text"].get<std::string>();
      if (choice.contains("token_ids"))
        for (const Json& id : choice["token_ids"]) c.token_ids.push_back(id.get<int>());
      if (!choice["finish_reason"].is_null()) {
        EXPECT_TRUE(c.finish_reason.empty()) << "two finish reasons";
        c.finish_reason = choice["finish_reason"].get<std::string>();
      }
    }
  }
  return c;
}

Json greedy_request(const Json& prompt, int max_tokens) {
  return Json{{"model", "tiny-chat"}, {"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0},
              {"return_token_ids", true}};
}

class ChatHttp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new TestServer(chat_registry(), test_server_options()); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static TestServer* server_;
};
TestServer* ChatHttp::server_ = nullptr;

TEST_F(ChatHttp, GreedyDecodeEqualsTheFixtureGoldenIds) {
  httplib::Client client = server_->client();
  for (const Json& p : golden()["prompts"]) {
    SCOPED_TRACE(p["name"].get<std::string>());
    const Json res = post(client, "/v1/completions", greedy_request(p["ids"], 16));
    ASSERT_TRUE(res.contains("choices")) << res.dump();
    EXPECT_EQ(res["choices"][0]["token_ids"], p["greedy"]["ids"]);
    EXPECT_EQ(res["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(res["usage"]["prompt_tokens"], p["ids"].size());
    EXPECT_EQ(res["usage"]["completion_tokens"], 16);
    EXPECT_EQ(res["usage"]["total_tokens"], p["ids"].size() + 16);
    EXPECT_EQ(res["object"], "text_completion");

    // The same through a stream.
    Json streamed = greedy_request(p["ids"], 16);
    streamed["stream"] = true;
    const Stream s = post_stream(client, "/v1/completions", streamed);
    EXPECT_EQ(s.status, 200);
    EXPECT_TRUE(s.done);
    const Collected c = collect(s);
    EXPECT_EQ(Json(c.token_ids), p["greedy"]["ids"]);
    EXPECT_EQ(c.content, res["choices"][0]["text"].get<std::string>());
    EXPECT_EQ(c.finish_reason, "length");
  }
}

TEST_F(ChatHttp, StreamedChunksConcatenateToTheWholeAnswer) {
  httplib::Client client = server_->client();
  for (const Json& sampling : {Json{{"temperature", 0}}, Json{{"temperature", 0.9}, {"top_p", 0.95}, {"seed", 7}}}) {
    Json body{{"model", "tiny-chat"},
              {"messages", Json::array({Json{{"role", "system"}, {"content", "Be brief."}},
                                        Json{{"role", "user"}, {"content", "Name three colours."}}})},
              {"max_tokens", 40}};
    body.update(sampling);
    const Json whole = post(client, "/v1/chat/completions", body);
    ASSERT_TRUE(whole.contains("choices")) << whole.dump();
    EXPECT_EQ(whole["object"], "chat.completion");
    const Json& message = whole["choices"][0]["message"];
    EXPECT_EQ(message["role"], "assistant");
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
    const Stream s = post_stream(client, "/v1/chat/completions", body);
    EXPECT_EQ(s.status, 200);
    EXPECT_EQ(s.content_type.rfind("text/event-stream", 0), 0u);
    EXPECT_TRUE(s.done);
    ASSERT_GE(s.events.size(), 3u);
    EXPECT_EQ(s.events.front()["choices"][0]["delta"]["role"], "assistant");
    EXPECT_EQ(s.events.front()["object"], "chat.completion.chunk");
    EXPECT_TRUE(s.events.back()["choices"].empty());  // the usage chunk
    const Collected c = collect(s);
    EXPECT_EQ(c.content, message["content"].get<std::string>());
    EXPECT_EQ(c.reasoning, message.value("reasoning_content", std::string()));
    EXPECT_EQ(c.finish_reason, whole["choices"][0]["finish_reason"]);
    EXPECT_EQ(c.usage, whole["usage"]);
    for (const Json& e : s.events) EXPECT_EQ(e["id"], s.events.front()["id"]);
  }
}

TEST_F(ChatHttp, StopStringsEndTheGenerationWithoutLeaking) {
  httplib::Client client = server_->client();
  const Json& p = golden()["prompts"][1];
  const std::string text = post(client, "/v1/completions", greedy_request(p["ids"], 16))["choices"][0]["text"];
  // A stop string from the middle of the greedy text, on character boundaries.
  std::size_t from = text.size() / 3;
  while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
  std::size_t to = from;
  for (int chars = 0; chars < 2 && to < text.size(); ++chars) to += utf8::sequence_length(static_cast<unsigned char>(text[to]));
  const std::string stop = text.substr(from, to - from);
  ASSERT_TRUE(utf8::is_valid(stop));
  const std::string expected = text.substr(0, text.find(stop));

  Json body = greedy_request(p["ids"], 16);
  body["stop"] = Json::array({"never-generated-text", stop});
  const Json res = post(client, "/v1/completions", body);
  EXPECT_EQ(res["choices"][0]["text"], expected);
  EXPECT_EQ(res["choices"][0]["finish_reason"], "stop");

  body["stream"] = true;
  const Stream s = post_stream(client, "/v1/completions", body);
  const Collected c = collect(s);
  EXPECT_EQ(c.content, expected);
  EXPECT_EQ(c.finish_reason, "stop");
  for (const Json& e : s.events)
    for (const Json& choice : e["choices"]) EXPECT_EQ(choice["text"].get<std::string>().find(stop), std::string::npos);
}

TEST_F(ChatHttp, MaxTokensEndsWithLength) {
  httplib::Client client = server_->client();
  const Json res = post(client, "/v1/chat/completions",
                        {{"messages", Json::array({Json{{"role", "user"}, {"content", "Hi"}}})},
                         {"max_completion_tokens", 3},
                         {"temperature", 0},
                         {"ignore_eos", true}});
  EXPECT_EQ(res["model"], "tiny-chat");  // no model given: the first chat model
  EXPECT_EQ(res["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(res["usage"]["completion_tokens"], 3);
}

TEST_F(ChatHttp, LogprobsReportTheChosenTokenAndItsAlternatives) {
  httplib::Client client = server_->client();
  const Json res = post(client, "/v1/chat/completions",
                        {{"model", "tiny-chat"},
                         {"messages", Json::array({Json{{"role", "user"}, {"content", "Hello"}}})},
                         {"max_tokens", 6},
                         {"temperature", 0},
                         {"ignore_eos", true},
                         {"logprobs", true},
                         {"top_logprobs", 3}});
  const Json& content = res["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 6u) << res.dump();
  for (const Json& entry : content) {
    ASSERT_EQ(entry["top_logprobs"].size(), 3u);
    // Greedy: the chosen token is the most likely one.
    EXPECT_EQ(entry["token"], entry["top_logprobs"][0]["token"]);
    EXPECT_DOUBLE_EQ(entry["logprob"].get<double>(), entry["top_logprobs"][0]["logprob"].get<double>());
    EXPECT_LE(entry["logprob"].get<double>(), 0.0);
    EXPECT_GE(entry["top_logprobs"][0]["logprob"].get<double>(), entry["top_logprobs"][1]["logprob"].get<double>());
    EXPECT_TRUE(entry["bytes"].is_array());
  }
}

TEST_F(ChatHttp, ModelKindsAreExclusive) {
  httplib::Client client = server_->client();
  const auto chat = client.Post("/v1/chat/completions",
                                R"({"model":"clef-tiny","messages":[{"role":"user","content":"Hi"}]})", "application/json");
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->status, 400);
  EXPECT_EQ(chat->body,
            R"({"error":{"message":"Model 'clef-tiny' is not an LLM / chat model. Use /v1/systemone for decision models.","type":"invalid_request_error","code":"model_not_chat"}})");
  const auto decide = post_systemone(client, R"({"model":"tiny-chat","state":"x","questions":{"q":{"type":"noul"}}})");
  ASSERT_TRUE(decide);
  EXPECT_EQ(decide->status, 400);
  EXPECT_EQ(decide->body,
            R"({"error":{"message":"model 'tiny-chat' is a chat model; use /v1/chat/completions","type":"invalid_request_error","code":"model_not_decision"}})");
  const Json missing = post(client, "/v1/chat/completions",
                            {{"model", "ghost"}, {"messages", Json::array({Json{{"role", "user"}, {"content", "Hi"}}})}}, 404);
  EXPECT_EQ(missing["error"]["code"], "model_not_found");
}

TEST_F(ChatHttp, MalformedRequestsAre400WithTheFieldNamed) {
  httplib::Client client = server_->client();
  const Json user = Json::array({Json{{"role", "user"}, {"content", "Hi"}}});
  const std::vector<std::pair<Json, std::string>> cases = {
      {Json{{"model", "tiny-chat"}}, "'messages' is required"},
      {Json{{"messages", Json::array()}}, "'messages' must hold at least one message"},
      {Json{{"messages", user}, {"n", 2}}, "only n = 1 is supported"},
      {Json{{"messages", user}, {"temperature", 3}}, "'temperature' must be in [0, 2], got 3"},
      {Json{{"messages", user}, {"top_logprobs", 2}}, "'top_logprobs' needs 'logprobs': true"},
      {Json{{"messages", Json::array({Json{{"role", "robot"}, {"content", "x"}}})}},
       "messages[0].role 'robot' is not one of system, developer, user, assistant, tool"},
      {Json{{"messages", user}, {"stop", 5}}, "'stop' must be a string or an array of strings, got a number"},
      {Json{{"messages", user}, {"max_tokens", 0}}, "'max_tokens' must be in [1, 2147483647], got 0"},
      // A text-only model refuses media parts rather than rendering an empty placeholder (qwen35.md §13).
      {Json{{"messages", Json::array({Json{{"role", "user"},
                                           {"content", Json::array({Json{{"type", "image_url"},
                                                                         {"image_url", Json{{"url", "x"}}}}})}}})}},
       "messages[0].content parts of type 'image_url' are not supported: this model takes text only"},
  };
  for (const auto& [body, message] : cases) {
    const Json res = post(client, "/v1/chat/completions", body, 400);
    EXPECT_EQ(res["error"]["message"], message) << body.dump();
    EXPECT_EQ(res["error"]["type"], "invalid_request_error");
  }
  const auto not_json = client.Post("/v1/chat/completions", "{nope", "application/json");
  ASSERT_TRUE(not_json);
  EXPECT_EQ(not_json->status, 400);
  // What the template refuses is a 400 too (the fixture's template concatenates content strings).
  const Json refused = post(client, "/v1/chat/completions",
                            {{"messages", Json::array({Json{{"role", "user"}, {"content", "Hi"}},
                                                       Json{{"role", "assistant"}, {"content", nullptr}}})}},
                            400);
  EXPECT_EQ(refused["error"]["type"], "invalid_request_error") << refused.dump();
}

TEST(ChatHttpContext, APromptThatFillsTheContextIs400AndACompletionStopsAtIt) {
  TestServer server(chat_registry(/*context=*/80), test_server_options());
  httplib::Client client = server.client();
  const Json& p300 = golden()["prompts"][2];
  const Json res = post(client, "/v1/completions", greedy_request(p300["ids"], 4), 400);
  EXPECT_EQ(res["error"]["code"], "context_length_exceeded");
  EXPECT_EQ(res["error"]["message"],
            "This model's maximum context length is 80 tokens. However, your prompt is 300 tokens, leaving no room "
            "for the completion.");
  const Json& p64 = golden()["prompts"][1];
  Json body = greedy_request(p64["ids"], 1000);
  body["ignore_eos"] = true;
  const Json capped = post(client, "/v1/completions", body);
  EXPECT_EQ(capped["usage"]["completion_tokens"], 80 - 64);
  EXPECT_EQ(capped["choices"][0]["finish_reason"], "length");
}

TEST_F(ChatHttp, AClientThatDisconnectsStopsItsGeneration) {
  const auto before = server_->registry().status("tiny-chat");
  const uint64_t cancelled_before = before && before->engine ? before->engine->generations_cancelled : 0;
  const int fd = connect_loopback(server_->port());
  ASSERT_GE(fd, 0);
  const std::string body = R"({"model":"tiny-chat","prompt":"Once upon a time","max_tokens":100000,"ignore_eos":true,"stream":true})";
  const std::string request = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  char buf[4096];
  ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);  // the stream has started
  ::close(fd);
  bool cancelled = false;
  for (int i = 0; i < 500 && !cancelled; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const auto st = server_->registry().status("tiny-chat");
    cancelled = st && st->engine && st->engine->generations_cancelled > cancelled_before;
  }
  EXPECT_TRUE(cancelled);
  const auto after = server_->registry().status("tiny-chat");
  EXPECT_EQ(after->engine->generations_running, 0u);
}

TEST_F(ChatHttp, SixteenStreamsAndConcurrentDecisionsAllComplete) {
  const std::string decision =
      R"({"model":"clef-tiny","state":"The invoice was charged twice.","questions":{"urgent":{"type":"noul"}}})";
  std::string expected_decision;
  {
    httplib::Client client = server_->client();
    const auto res = post_systemone(client, decision);
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200);
    expected_decision = comparable_response(res->body).dump();
  }
  std::vector<std::future<Collected>> streams;
  for (int i = 0; i < 16; ++i) {
    streams.push_back(std::async(std::launch::async, [i] {
      httplib::Client client = server_->client();
      const Json body{{"model", "tiny-chat"},
                      {"messages", Json::array({Json{{"role", "user"}, {"content", "Story number " + std::to_string(i)}}})},
                      {"max_tokens", 48},
                      {"ignore_eos", true},
                      {"seed", i},
                      {"stream", true}};
      const Stream s = post_stream(client, "/v1/chat/completions", body);
      EXPECT_TRUE(s.done);
      return collect(s);
    }));
  }
  std::vector<std::future<std::string>> decisions;
  for (int i = 0; i < 8; ++i) {
    decisions.push_back(std::async(std::launch::async, [&decision] {
      httplib::Client client = server_->client();
      const auto res = post_systemone(client, decision);
      EXPECT_TRUE(res);
      if (!res) return std::string();
      EXPECT_EQ(res->status, 200) << res->body;
      return comparable_response(res->body).dump();
    }));
  }
  for (auto& d : decisions) EXPECT_EQ(d.get(), expected_decision);
  for (auto& s : streams) {
    const Collected c = s.get();
    EXPECT_EQ(c.finish_reason, "length");
  }
  const auto st = server_->registry().status("tiny-chat");
  ASSERT_TRUE(st && st->engine);
  EXPECT_GT(st->engine->max_step_sequences, 1);  // streams shared decode steps
}

TEST_F(ChatHttp, MetricsCountCompletionsAndTokens) {
  httplib::Client client = server_->client();
  const Json res = post(client, "/v1/completions", greedy_request(golden()["prompts"][0]["ids"], 5));
  ASSERT_EQ(res["usage"]["completion_tokens"], 5);
  std::string body;
  const auto value = [&](const std::string& sample) {
    const std::size_t at = body.find("\n" + sample + " ");
    return at == std::string::npos ? -1.0 : std::stod(body.substr(at + sample.size() + 2));
  };
  // The response can leave as soon as the last token is sampled, before the engine thread books that
  // step (the token count, the slot's release): read the metrics once the stream no longer runs.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    const auto metrics = client.Get("/metrics");
    ASSERT_TRUE(metrics);
    body = metrics->body;
    if (value("verdict_chat_streams_running{model=\"tiny-chat\"}") == 0.0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_GE(value("verdict_chat_completions_total{model=\"tiny-chat\"}"), 1.0) << body;
  EXPECT_GE(value("verdict_chat_completion_tokens_total{model=\"tiny-chat\"}"), 5.0);
  EXPECT_GE(value("verdict_chat_generated_tokens_total{model=\"tiny-chat\"}"), 5.0);
  EXPECT_EQ(value("verdict_chat_streams_running{model=\"tiny-chat\"}"), 0.0);
}

}  // namespace
}  // namespace verdict::server::testing
