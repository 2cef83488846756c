#include "registry/registry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "core/error.h"
#include "decision/errors.h"
#include "fake_step_models.h"
#include "fixture_dirs.h"
#include "registry/errors.h"
#include "support/fixtures.h"

namespace verdict::registry {
namespace {

using engine::testing::Gate;
using engine::testing::GatedStepModel;

RegistryOptions two_decision_one_chat() {
  RegistryOptions o;
  o.models = {{"judge", clef_dir(), ModelKind::kDecision},
              {"chatty", chat_dir(), ModelKind::kChat},
              {"judge-short", clef_dir(), ModelKind::kDecision}};
  o.max_length = {{"judge", 1024}, {"judge-short", 480}};
  o.slots = 1;
  return o;
}

void expect_decision_error(const std::function<void()>& f, int status, const std::string& code, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "expected DecisionError " << code;
  } catch (const decision::DecisionError& e) {
    EXPECT_EQ(e.status(), status);
    EXPECT_EQ(e.code(), code);
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(Registry, ConfigurationIsCheckedUpFront) {
  RegistryOptions o = two_decision_one_chat();
  o.decision_aliases = {"judge"};
  EXPECT_THROW(Registry{o}, Error);  // alias collides with a model name
  o = two_decision_one_chat();
  o.models.push_back({"default", clef_dir(), ModelKind::kDecision});
  EXPECT_THROW(Registry{o}, Error);  // `default` is always an alias
  o = two_decision_one_chat();
  o.models.push_back({"judge", clef_dir(), ModelKind::kDecision});
  EXPECT_THROW(Registry{o}, Error);  // twice
  o = two_decision_one_chat();
  o.default_decision_model = "chatty";
  EXPECT_THROW(Registry{o}, Error);
  o = two_decision_one_chat();
  o.default_decision_model = "nobody";
  EXPECT_THROW(Registry{o}, Error);
  o = two_decision_one_chat();
  o.max_length["nobody"] = 10;
  EXPECT_THROW(Registry{o}, Error);
  o = two_decision_one_chat();
  o.pinned = {"nobody"};
  EXPECT_THROW(Registry{o}, Error);
  o = two_decision_one_chat();
  o.max_length["judge"] = 300000;  // above max_position_embeddings (262144): found at start-up
  Registry r(o);
  EXPECT_THROW(r.initialize(), Error);
}

TEST(Registry, ResolutionFollowsTheSpec) {
  RegistryOptions o = two_decision_one_chat();
  o.decision_aliases = {"jev-latest", "house-judge"};
  o.default_decision_model = "judge-short";
  Registry r(o);
  r.initialize();
  EXPECT_EQ(r.resolve_decision("judge").name(), "judge");
  EXPECT_EQ(r.resolve_decision("default").name(), "judge-short");
  EXPECT_EQ(r.resolve_decision("house-judge").name(), "judge-short");
  EXPECT_EQ(r.resolve_decision("judge-short").max_length(), 480u);
  expect_decision_error([&] { r.resolve_decision("Judge"); }, 404, "model_not_found",
                        "model 'Judge' not found; available decision models: judge, judge-short; aliases: default, "
                        "jev-latest, house-judge");
  expect_decision_error([&] { r.resolve_decision("chatty"); }, 400, "model_not_decision",
                        "model 'chatty' is a chat model; use /v1/chat/completions");
  EXPECT_EQ(r.aliases(), (std::vector<std::string>{"default", "jev-latest", "house-judge"}));
  EXPECT_EQ(r.status("judge")->max_length, 1024u);
}

TEST(Registry, WithoutDecisionModelsAliasesMatchNothing) {
  RegistryOptions o;
  o.models = {{"chatty", chat_dir(), ModelKind::kChat}};
  Registry r(o);
  r.initialize();
  EXPECT_FALSE(r.default_decision_model().has_value());
  expect_decision_error([&] { r.resolve_decision("default"); }, 404, "model_not_found",
                        "model 'default' not found; available decision models: (none); aliases: default, jev-latest");
}

TEST(Registry, LeasesDeferUnloadsUntilTheLastOneDrops) {
  auto gate = std::make_shared<Gate>();
  RegistryOptions o = two_decision_one_chat();
  o.wrap_step_model = [gate](const std::string&, std::unique_ptr<engine::StepModel> inner) -> std::unique_ptr<engine::StepModel> {
    return std::make_unique<GatedStepModel>(std::move(inner), gate);
  };
  Registry r(o);
  r.initialize();
  Lease first = r.resolve_decision("judge");
  EXPECT_FALSE(first.resident());
  LoadedModel& model = first.ensure_loaded();
  Lease second = r.lease("judge");
  EXPECT_EQ(&second.ensure_loaded(), &model);  // resident: no second load
  EXPECT_EQ(r.unload("judge"), UnloadOutcome::kDeferred);
  EXPECT_EQ(r.status("judge")->state_name(), "loaded");
  EXPECT_EQ(r.status("judge")->leases, 2);

  // The model still works while leased.
  gate->close();
  auto job = model.scheduler().submit({1, 2, 3});
  ASSERT_TRUE(gate->wait_entered(1));
  gate->open();
  job->wait();
  EXPECT_EQ(job->take_hidden().size(), 3u * 64u);

  first.release();
  EXPECT_EQ(r.status("judge")->state_name(), "loaded");
  second = Lease();  // the last lease goes: the deferred unload happens now
  EXPECT_EQ(r.status("judge")->state_name(), "unloaded");
  EXPECT_EQ(r.memory().used, 0u);
  EXPECT_EQ(r.unload("judge"), UnloadOutcome::kAlreadyUnloaded);
}

TEST(Registry, ChatModelsResolveOnTheChatSideOnly) {
  Registry r(two_decision_one_chat());
  r.initialize();
  EXPECT_EQ(r.resolve_chat(std::nullopt).name(), "chatty");  // no model given: the first chat model
  Lease lease = r.resolve_chat(std::string("chatty"));
  EXPECT_EQ(lease.kind(), ModelKind::kChat);
  EXPECT_GT(lease.tokenizer().vocab_size(), 0u);
  EXPECT_EQ(lease.max_length(), 4096u);  // the chat context default
  EXPECT_FALSE(lease.generation_defaults().stop_ids.empty());
  expect_decision_error([&] { r.resolve_chat(std::string("judge")); }, 400, "model_not_chat",
                        "Model 'judge' is not an LLM / chat model. Use /v1/systemone for decision models.");
  expect_decision_error([&] { r.resolve_chat(std::string("default")); }, 400, "model_not_chat",
                        "Model 'default' is not an LLM / chat model. Use /v1/systemone for decision models.");
  expect_decision_error([&] { r.resolve_chat(std::string("ghost")); }, 404, "model_not_found",
                        "model 'ghost' not found; available chat models: chatty");
  // A chat model loads like any other: its engine generates.
  LoadedModel& model = lease.ensure_loaded();
  EXPECT_FALSE(model.is_decision());
  EXPECT_EQ(r.status("chatty")->state_name(), "loaded");
  expect_decision_error([&] { r.load("ghost"); }, 404, "model_not_found",
                        "model 'ghost' not found; available decision models: judge, judge-short; aliases: default, jev-latest");
}

TEST(Registry, AChatModelWithAnUnusableTemplateFailsAtStartUp) {
  const std::string dir = ::testing::TempDir() + "verdict_bad_template_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "generation_config.json"})
    std::filesystem::copy_file(chat_dir() + "/" + f, dir + "/" + f, std::filesystem::copy_options::overwrite_existing);
  {
    std::ofstream out(dir + "/chat_template.jinja");
    out << "{% for m in messages %}{{ m.content | no_such_filter }}{% endfor %}";
  }
  RegistryOptions o;
  o.models = {{"broken", dir, ModelKind::kChat}};
  Registry r(o);
  try {
    r.initialize();
    ADD_FAILURE() << "initialize() accepted a template with an unknown filter";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model 'broken'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no_such_filter"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(Registry, ALoadFailureReachesEveryWaiter) {
  char tmpl[] = "/tmp/verdict-broken-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  for (const char* f : {"config.json", "tokenizer.json", "joint_head_config.json", "model.safetensors"})
    ASSERT_EQ(std::system(("cp " + clef_dir() + "/" + f + " " + dir + "/").c_str()), 0);
  ASSERT_EQ(std::system(("printf 'garbage' > " + dir + "/joint_head.safetensors").c_str()), 0);
  RegistryOptions o;
  o.models = {{"broken", dir, ModelKind::kDecision}};
  o.slots = 1;
  o.max_length = {{"broken", 256}};
  Registry r(o);
  r.initialize();
  std::vector<std::future<std::string>> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.push_back(std::async(std::launch::async, [&] {
      Lease lease = r.lease("broken");
      try {
        lease.ensure_loaded();
        return std::string("loaded?");
      } catch (const LoadFailedError& e) {
        return e.reason().empty() ? std::string("no reason") : std::string("failed");
      }
    }));
  }
  for (auto& w : waiters) EXPECT_EQ(w.get(), "failed");
  const ModelStatus s = *r.status("broken");
  EXPECT_EQ(s.state_name(), "unloaded");
  EXPECT_FALSE(s.last_error.empty());
  EXPECT_EQ(r.memory().used, 0u);
  ASSERT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace verdict::registry
