// clef-head goldens: JointSchemaHead logits for explicit hidden states (float64 reference).
#include "decision/head.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <string>

#include "core/json.h"
#include "decision/answers.h"
#include "support/fixtures.h"

namespace verdict::decision {
namespace {

struct HeadCase {
  std::string name;
  std::vector<TokenId> ids;
  std::vector<float> hidden;
  std::vector<EncodedQuestion> questions;
  const Json* expected = nullptr;  // logits_f64
  const Json* probabilities = nullptr;
};

class HeadFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    json_ = new Json(load_json_file(verdict::testing::fixture("clef-head/cases.json")));
  }
  static void TearDownTestSuite() {
    delete json_;
    json_ = nullptr;
  }

  static std::vector<HeadCase> cases() {
    std::vector<HeadCase> out;
    for (const Json& c : json_->at("cases")) {
      HeadCase hc;
      hc.name = c.at("name").get<std::string>();
      hc.ids = c.at("input_ids").get<std::vector<TokenId>>();
      for (const Json& row : c.at("hidden_states")) {
        for (const Json& v : row) hc.hidden.push_back(v.get<float>());
      }
      for (const Json& q : c.at("questions")) {
        EncodedQuestion eq;
        eq.question_id = "q" + std::to_string(hc.questions.size());
        eq.type_id = q.at("type").get<int>();
        eq.question_span = {q.at("question_span")[0].get<std::size_t>(),
                            q.at("question_span")[1].get<std::size_t>()};
        for (const Json& s : q.at("option_spans"))
          eq.option_spans.push_back({s[0].get<std::size_t>(), s[1].get<std::size_t>()});
        hc.questions.push_back(eq);
      }
      hc.expected = &c.at("logits_f64");
      hc.probabilities = &c.at("probabilities_f32");
      out.push_back(std::move(hc));
    }
    return out;
  }

  static LexicalRowFn lexical() {
    return [](TokenId id, std::span<float> row) {
      const Json& r = json_->at("lexical_table").at(static_cast<std::size_t>(id));
      for (std::size_t k = 0; k < row.size(); ++k) row[k] = r.at(k).get<float>();
    };
  }

  static void check_head(const std::string& head_name, const std::string& dtype, HeadPrecision precision,
                         double tolerance) {
    const std::string dir = verdict::testing::fixture("clef-head/" + head_name + "/" + dtype);
    const JointHead head = JointHead::load_dir(dir);
    const Json& info = json_->at("heads").at(head_name);
    EXPECT_EQ(head.config().routing_layers, info.at("config").at("routing_layers").get<std::size_t>());
    EXPECT_EQ(head.prior_logit_scale(), info.at("scalars").at("prior_logit_scale").get<float>());
    EXPECT_EQ(head.joint_logit_scale(), info.at("scalars").at("joint_logit_scale").get<float>());
    EXPECT_EQ(head.residual_gate(), info.at("scalars").at("residual_gate").get<float>());
    int compared = 0;
    for (const HeadCase& c : cases()) {
      SCOPED_TRACE(head_name + "/" + dtype + " " + c.name);
      HeadInput in;
      in.hidden = c.hidden;
      in.input_ids = c.ids;
      in.questions = c.questions;
      in.lexical = lexical();
      const QuestionLogits logits = head.forward(in, precision);
      const Json& want = c.expected->at(head_name);
      const Json& want_p = c.probabilities->at(head_name);
      ASSERT_EQ(logits.size(), want.size());
      for (std::size_t i = 0; i < logits.size(); ++i) {
        ASSERT_EQ(logits[i].size(), want[i].size());
        const std::vector<double> p = softmax_f32(logits[i]);
        for (std::size_t j = 0; j < logits[i].size(); ++j) {
          EXPECT_NEAR(logits[i][j], want[i][j].get<double>(), tolerance) << i << "," << j;
          EXPECT_NEAR(p[j], want_p[i][j].get<double>(), 1e-5) << i << "," << j;
          ++compared;
        }
      }
    }
    EXPECT_GT(compared, 150);
  }

  static Json* json_;
};

Json* HeadFixture::json_ = nullptr;

TEST_F(HeadFixture, HeadAF32FileFp32) { check_head("head_a", "f32", HeadPrecision::kF32, 1e-4); }
TEST_F(HeadFixture, HeadABf16FileFp32) { check_head("head_a", "bf16", HeadPrecision::kF32, 1e-4); }
TEST_F(HeadFixture, HeadBF32FileFp32) { check_head("head_b", "f32", HeadPrecision::kF32, 1e-4); }
TEST_F(HeadFixture, HeadBBf16FileFp32) { check_head("head_b", "bf16", HeadPrecision::kF32, 1e-4); }
TEST_F(HeadFixture, HeadAFp64) { check_head("head_a", "bf16", HeadPrecision::kF64, 1e-9); }
TEST_F(HeadFixture, HeadBFp64) { check_head("head_b", "f32", HeadPrecision::kF64, 1e-9); }

// The fixtures' F32 heads hold their BF16 heads' values. Kept as BF16, the matrices take half the memory and
// every logit is the F32 file's, bit for bit, in both precisions.
TEST_F(HeadFixture, Bf16FileComputesExactlyAsItsF32Copy) {
  for (const std::string name : {"head_a", "head_b"}) {
    const JointHead bf16 = JointHead::load_dir(verdict::testing::fixture("clef-head/" + name + "/bf16"));
    const JointHead f32 = JointHead::load_dir(verdict::testing::fixture("clef-head/" + name + "/f32"));
    EXPECT_LT(bf16.weight_bytes(), f32.weight_bytes() * 6 / 10) << name;
    EXPECT_GT(bf16.weight_bytes(), f32.weight_bytes() / 2) << name;  // the vectors stay fp32
    for (const std::string dtype : {"bf16", "f32"})  // the memory budget's estimate, from the header alone
      EXPECT_EQ(JointHead::loaded_bytes(verdict::testing::fixture("clef-head/" + name + "/" + dtype +
                                                                  "/joint_head.safetensors")),
                (dtype == "bf16" ? bf16 : f32).weight_bytes())
          << name << " " << dtype;
    int compared = 0;
    for (const HeadCase& c : cases()) {
      HeadInput in;
      in.hidden = c.hidden;
      in.input_ids = c.ids;
      in.questions = c.questions;
      in.lexical = lexical();
      for (const HeadPrecision p : {HeadPrecision::kF32, HeadPrecision::kF64}) {
        const QuestionLogits a = bf16.forward(in, p), b = f32.forward(in, p);
        EXPECT_EQ(a, b) << name << " " << c.name;
        compared += static_cast<int>(a.size());
      }
    }
    EXPECT_GT(compared, 20) << name;
  }
}

TEST_F(HeadFixture, RejectsInconsistentInput) {
  const JointHead head = JointHead::load_dir(verdict::testing::fixture("clef-head/head_b/f32"));
  const HeadCase c = cases().at(1);  // "single"
  HeadInput in;
  in.hidden = c.hidden;
  in.input_ids = c.ids;
  in.lexical = lexical();
  std::vector<EncodedQuestion> qs = c.questions;
  in.questions = qs;
  EXPECT_NO_THROW(head.forward(in));

  qs[0].option_spans[0] = {3, 3};  // empty span
  EXPECT_THROW(head.forward(in), Error);
  qs = c.questions;
  qs[0].question_span = {0, c.ids.size() + 1};  // past the end
  EXPECT_THROW(head.forward(in), Error);
  qs = c.questions;
  qs[0].type_id = 3;
  EXPECT_THROW(head.forward(in), Error);
  qs = c.questions;
  qs[0].option_spans.clear();
  EXPECT_THROW(head.forward(in), Error);
  qs = c.questions;
  in.hidden = in.hidden.subspan(1);
  EXPECT_THROW(head.forward(in), Error);
}

TEST(HeadLoad, StrictConfigAndTensors) {
  const std::string dir = verdict::testing::fixture("clef-head/head_a/f32");
  // A config that does not match the tensors fails with the tensor named.
  const std::string tmp = ::testing::TempDir() + "/head_cfg_test_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream(tmp)
        << R"({"hidden_size":64,"width":32,"routing_layers":3,"layers":2,"heads":4,"feedforward":48})";
  }
  try {
    JointHead::load(tmp, dir + "/joint_head.safetensors");
    ADD_FAILURE() << "loaded a head with a missing evidence layer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing tensor evidence_layers.2.query_norm.weight"),
              std::string::npos)
        << e.what();
  }
  {
    std::ofstream(tmp)
        << R"({"hidden_size":64,"width":32,"routing_layers":1,"layers":2,"heads":4,"feedforward":48})";
  }
  try {
    JointHead::load(tmp, dir + "/joint_head.safetensors");
    ADD_FAILURE() << "loaded a head with an extra evidence layer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unexpected tensor evidence_layers.1."), std::string::npos)
        << e.what();
  }
  {
    std::ofstream(tmp)
        << R"({"hidden_size":64,"width":32,"routing_layers":2,"layers":2,"heads":4,"feedforward":40})";
  }
  try {
    JointHead::load(tmp, dir + "/joint_head.safetensors");
    ADD_FAILURE() << "loaded a head with the wrong feedforward size";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has shape [48, 32], expected [40, 32]"), std::string::npos)
        << e.what();
  }
}

TEST(HeadLoad, ClefTinyCheckpointHead) {
  // The release layout of the demo checkpoint: BF16 and F32 files hold the same values.
  const JointHead bf16 = JointHead::load_dir(verdict::testing::fixture("clef-tiny/bf16"));
  const JointHead f32 = JointHead::load_dir(verdict::testing::fixture("clef-tiny/f32"));
  EXPECT_EQ(bf16.config(), f32.config());
  EXPECT_EQ(bf16.config().feedforward, 64u);
  EXPECT_EQ(bf16.config().routing_layers, 2u);
  EXPECT_EQ(bf16.prior_logit_scale(), 2.296875f);
  EXPECT_EQ(bf16.joint_logit_scale(), 5.0f);
  EXPECT_EQ(bf16.residual_gate(), -2.0f);
}

TEST(HeadConfigTest, Validation) {
  const Json good = Json::parse(
      R"({"hidden_size":64,"width":32,"routing_layers":2,"layers":2,"heads":4,"feedforward":48})");
  const HeadConfig c = HeadConfig::from_json(good, "cfg");
  EXPECT_EQ(c.head_dim(), 8u);
  Json missing = good;
  missing.erase("feedforward");
  EXPECT_THROW(HeadConfig::from_json(missing, "cfg"), Error);
  Json indivisible = good;
  indivisible["heads"] = 5;
  EXPECT_THROW(HeadConfig::from_json(indivisible, "cfg"), Error);
  Json negative = good;
  negative["layers"] = -1;
  EXPECT_THROW(HeadConfig::from_json(negative, "cfg"), Error);
  Json floaty = good;
  floaty["width"] = 32.0;
  EXPECT_THROW(HeadConfig::from_json(floaty, "cfg"), Error);
}

}  // namespace
}  // namespace verdict::decision
