// `verdict decide` end to end on the clef-tiny release-layout checkpoint: every case of
// clef-tiny/cases.json (float64 backbone + head reference), answers and usage exact, errors exact.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/json.h"
#include "support/fixtures.h"
#include "support/process.h"

namespace verdict {
namespace {

using testing::fixture;
using testing::run_process;
using testing::verdict_bin;

void run_cases(const std::string& model_dir, std::size_t limit) {
  const Json cases = load_json_file(fixture("clef-tiny/cases.json"));
  ASSERT_GE(cases["cases"].size(), 30u);
  // ctest runs the tests of this file in parallel: each writes its own request file.
  const std::string request_path = ::testing::TempDir() + "/decide_request_" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                                   std::to_string(::getpid()) + ".json";
  std::size_t answered = 0, refused = 0;
  for (const auto& c : cases["cases"]) {
    if (answered + refused >= limit) break;
    SCOPED_TRACE(c["name"].get<std::string>());
    {
      std::ofstream out(request_path, std::ios::binary);
      out << c["request_json"].get<std::string>();
    }
    auto r = run_process(verdict_bin(), {"decide", "--model", model_dir, "--request", request_path,
                                         "--max-length", std::to_string(c["max_length"].get<int>())});
    const Json& expected = c["expected"];
    const Json body = parse_json(r.out, "decide output");
    if (expected["status"] == 200) {
      ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
      // verdict decide names the model itself; answers and usage are compared (fixtures README).
      EXPECT_EQ(body["answers"], expected["response"]["answers"]);
      const Json& want_usage = expected["response"]["usage"];
      for (const auto& [key, value] : want_usage.items()) EXPECT_EQ(body["usage"][key], value) << key;
      EXPECT_EQ(body["usage"].contains("truncated_tokens"), want_usage.contains("truncated_tokens"));
      ++answered;
    } else {
      EXPECT_EQ(r.exit_code, 1) << r.out;
      EXPECT_EQ(body["error"]["type"], expected["error"]["type"]);
      EXPECT_EQ(body["error"]["code"], expected["error"]["code"]);
      EXPECT_EQ(body["error"]["message"], expected["error"]["message"]);
      ++refused;
    }
  }
  EXPECT_GT(answered, 0u);
}

TEST(Decide, ClefTinyBf16AllCases) { run_cases(fixture("clef-tiny/bf16"), 1000); }

TEST(Decide, ClefTinyF32FirstCases) { run_cases(fixture("clef-tiny/f32"), 8); }

// A decision folder holding the backbone as an F32 GGUF file (`verdict convert`) beside the joint head, with
// no config.json or tokenizer.json: the same answers and token counts as the checkpoint (docs/gguf.md).
TEST(Decide, ClefTinyWithAGgufBackboneFirstCases) {
  const std::string dir = ::testing::TempDir() + "/decide-gguf-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string clef = fixture("clef-tiny/bf16");
  auto made = run_process(verdict_bin(), {"convert", clef, dir + "/clef-tiny.gguf", "--type", "f32"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  for (const char* file : {"joint_head.safetensors", "joint_head_config.json"})
    std::filesystem::copy_file(clef + "/" + file, dir + "/" + file);
  run_cases(dir, 8);
  auto info = run_process(verdict_bin(), {"info", dir, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const Json summary = parse_json(info.out, "info");
  EXPECT_EQ(summary["kind"], "decision");
  EXPECT_EQ(summary["path"], dir);
  std::filesystem::remove_all(dir);
}

// --explain: ids and spans exact, unrounded probabilities within 1e-4 of the float64 reference (F32 weights).
TEST(Decide, ExplainMatchesTheReferenceTrace) {
  const Json cases = load_json_file(fixture("clef-tiny/cases.json"));
  const std::string request_path = ::testing::TempDir() + "/decide_explain.json";
  int checked = 0;
  for (const auto& c : cases["cases"]) {
    if (c["expected"]["status"] != 200 || checked >= 10) continue;
    SCOPED_TRACE(c["name"].get<std::string>());
    {
      std::ofstream out(request_path, std::ios::binary);
      out << c["request_json"].get<std::string>();
    }
    auto r = run_process(verdict_bin(), {"decide", "--model", fixture("clef-tiny/f32"), "--request", request_path,
                                         "--max-length", std::to_string(c["max_length"].get<int>()), "--explain"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json explain = parse_json(r.out, "decide output")["explain"];
    const Json& trace = c["trace"];
    EXPECT_EQ(explain["input_ids"], trace["input_ids"]);
    ASSERT_EQ(explain["questions"].size(), trace["questions"].size());
    for (std::size_t q = 0; q < trace["questions"].size(); ++q) {
      const Json& got = explain["questions"][q];
      const Json& want = trace["questions"][q];
      EXPECT_EQ(got["question_id"], want["question_id"]);
      EXPECT_EQ(got["question_span"], want["question_span"]);
      EXPECT_EQ(got["option_spans"], want["option_spans"]);
      EXPECT_EQ(got["option_ids"], want["option_ids"]);
      const Json& probs = c["probabilities"][want["question_id"].get<std::string>()];
      ASSERT_EQ(got["probabilities"].size(), want["option_ids"].size());
      for (std::size_t o = 0; o < want["option_ids"].size(); ++o)
        EXPECT_NEAR(got["probabilities"][o].get<double>(), probs[want["option_ids"][o].get<std::string>()].get<double>(),
                    1e-4);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 10);
}

// The demo decision model: `make-model --preset clef-tiny`, then a support-ticket decision on it.
TEST(Decide, TicketOnTheDemoModelSaysItsAnswersAreMeaningless) {
  const std::string dir = ::testing::TempDir() + "/demo-clef-tiny-" + std::to_string(::getpid());
  auto made = run_process(verdict_bin(), {"make-model", "--preset", "clef-tiny", "--seed", "7", dir});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string request = R"({"model": "default",
    "state": "Hola, al exportar la factura a PDF la aplicación se cierra. Es urgente, mañana cerramos el mes.",
    "questions": {
      "etiqueta": {"type": "choice", "instructions": "¿Qué tipo de ticket es?",
                   "criteria": {"error": "fallo del producto", "facturacion": "cobros y facturas",
                                "cuenta": "acceso y cuenta", "sugerencia": "idea o mejora"}},
      "urgente": {"type": "noul", "instructions": "¿Es urgente?"}}})";
  auto r = run_process(verdict_bin(), {"decide", "--model", dir}, request);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("meaningless"), std::string::npos) << r.err;
  const Json body = parse_json(r.out, "decide output");
  const Json& etiqueta = body["answers"]["etiqueta"];
  EXPECT_EQ(etiqueta["type"], "choice");
  double total = 0;
  for (const auto& [key, p] : etiqueta["probabilities"].items()) total += p.get<double>();
  EXPECT_NEAR(total, 1.0, 2e-4);
  EXPECT_EQ(etiqueta["probabilities"].size(), 4u);
  EXPECT_TRUE(etiqueta["probabilities"].contains(etiqueta["choice"].get<std::string>()));
  EXPECT_EQ(body["answers"]["urgente"]["type"], "noul");
  EXPECT_GT(body["usage"]["input_tokens"].get<int>(), 50);
  EXPECT_EQ(body["usage"]["output_tokens"], 0);
  auto info = run_process(verdict_bin(), {"info", dir, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_EQ(parse_json(info.out, "info")["random_weights"], true);
}

TEST(Decide, ShortcutFlagsAndChatModelRefusal) {
  auto r = run_process(verdict_bin(), {"decide", "--model", fixture("clef-tiny/bf16"), "--state", "El PDF no abre",
                                       "--questions", R"({"urgente": {"type": "noul"}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json body = parse_json(r.out, "decide output");
  const double p = body["answers"]["urgente"]["noul"].get<double>();
  EXPECT_GT(p, 0.0);
  EXPECT_LT(p, 1.0);
  auto chat = run_process(verdict_bin(), {"decide", "--model", fixture("qwen35-tiny"), "--state", "x",
                                          "--questions", R"({"a": {"type": "noul"}})"});
  EXPECT_EQ(chat.exit_code, 1);
  EXPECT_NE(chat.err.find("not a decision model"), std::string::npos) << chat.err;
}

}  // namespace
}  // namespace verdict
