// read_json(): Python json.loads semantics for what reaches the prompt, strict RFC 8259 otherwise.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "decision/json_value.h"
#include "decision/render.h"

namespace verdict::decision {
namespace {

JsonErrorKind error_kind(std::string_view text, std::size_t max_depth = 128) {
  try {
    JsonReadOptions o;
    o.max_depth = max_depth;
    read_json(text, o);
  } catch (const JsonError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "accepted: " << text;
  return JsonErrorKind::kSyntax;
}

TEST(JsonRead, IntVersusFloatFollowsTheSourceText) {
  const Value v = read_json(R"([1, 1.0, 1e2, 1E-7, -0, -0.0, 0, 100, 2.50, 3.0e0])");
  const auto& a = v.items();
  EXPECT_TRUE(a[0].is_int());
  EXPECT_TRUE(a[1].is_float());
  EXPECT_TRUE(a[2].is_float());
  EXPECT_EQ(a[2].as_float(), 100.0);
  EXPECT_TRUE(a[3].is_float());
  EXPECT_TRUE(a[4].is_int());
  EXPECT_EQ(a[4].int_text(), "0");  // -0 is the integer zero
  EXPECT_TRUE(a[5].is_float());
  EXPECT_TRUE(std::signbit(a[5].as_float()));
  EXPECT_EQ(write_json(v, true), "[1,1.0,100.0,1e-07,0,-0.0,0,100,2.5,3.0]");
}

TEST(JsonRead, IntegersOfAnySizeAreExact) {
  const std::string big(5000, '7');
  const Value v = read_json(
      "[18446744073709551615,-9223372036854775808,9223372036854775807,9223372036854775808,"
      "9007199254740993,-18446744073709551616," +
      big + "]");
  const auto& a = v.items();
  EXPECT_EQ(a[0].int_text(), "18446744073709551615");
  EXPECT_FALSE(a[0].int_fits_int64());
  EXPECT_EQ(a[1].int_text(), "-9223372036854775808");
  EXPECT_TRUE(a[1].int_fits_int64());
  EXPECT_EQ(a[2].int64_value(), INT64_MAX);
  EXPECT_EQ(a[3].int_text(), "9223372036854775808");
  EXPECT_EQ(a[4].int64_value(), 9007199254740993);
  EXPECT_EQ(a[5].int_text(), "-18446744073709551616");
  EXPECT_EQ(a[6].int_text(), big);
  EXPECT_TRUE(a[6].truthy());
}

TEST(JsonRead, DuplicateKeysKeepTheLastValueAtTheFirstPosition) {
  const Value v = read_json(R"({"a":1,"b":2,"a":3})");
  ASSERT_EQ(v.members().size(), 2u);
  EXPECT_EQ(v.members()[0].key, "a");
  EXPECT_EQ(v.members()[0].value.int_text(), "3");
  EXPECT_EQ(v.members()[1].key, "b");
  // At depth, three times, and in a large object (the sorted path).
  const Value d = read_json(R"({"n":{"x":1,"y":0,"x":{"deep":true},"x":[2]}})");
  EXPECT_EQ(write_json(d, false), R"({"n":{"x":[2],"y":0}})");
  std::string many = "{";
  for (int i = 0; i < 100; ++i) many += "\"k" + std::to_string(i % 40) + "\":" + std::to_string(i) + ",";
  many.back() = '}';
  const Value m = read_json(many);
  ASSERT_EQ(m.members().size(), 40u);
  EXPECT_EQ(m.members()[0].key, "k0");
  EXPECT_EQ(m.members()[0].value.int_text(), "80");
  EXPECT_EQ(m.members()[39].key, "k39");
  EXPECT_EQ(m.members()[39].value.int_text(), "79");
}

TEST(JsonRead, MemberOrderIsKept) {
  const Value v = read_json(R"({"z":1,"a":2,"m":3})");
  EXPECT_EQ(write_json(v, false), R"({"z":1,"a":2,"m":3})");
  EXPECT_EQ(write_json(v, true), R"({"a":2,"m":3,"z":1})");
}

TEST(JsonRead, StringsAndEscapes) {
  const Value v = read_json(R"(["\u00e9\ud83d\ude00\u0000\/\"\\\b\f\n\r\t", "é😀", "\uE000"])");
  EXPECT_EQ(v.items()[0].as_string(),
            std::string("\xc3\xa9\xf0\x9f\x98\x80", 6) + std::string(1, '\0') + "/\"\\\b\f\n\r\t");
  EXPECT_EQ(v.items()[1].as_string(), "\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(v.items()[2].as_string(), "\xee\x80\x80");
}

TEST(JsonRead, ByteOrderMarkAndWhitespace) {
  EXPECT_EQ(read_json("\xEF\xBB\xBF {\"a\" :\t[ 1 , 2 ]\r\n}\n").find("a")->size(), 2u);
  EXPECT_EQ(error_kind("\xEF\xBB\xBF\xEF\xBB\xBF{}"), JsonErrorKind::kSyntax);
}

TEST(JsonRead, SyntaxErrors) {
  for (const char* bad : {"",
                          " ",
                          "{",
                          "[1,]",
                          "{\"a\":1,}",
                          "{\"a\" 1}",
                          "{a:1}",
                          "[1 2]",
                          "01",
                          "-",
                          "1.",
                          ".5",
                          "1e",
                          "1e+",
                          "+1",
                          "0x10",
                          "NaN",
                          "Infinity",
                          "-Infinity",
                          "nul",
                          "truee",
                          "[1]x",
                          "{} {}",
                          "'a'",
                          "\"abc",
                          "\"\\x\"",
                          "\"\\u12\"",
                          "\"\\u12G4\"",
                          "\"tab\there\"",
                          "\"nl\nhere\"",
                          "[\"\\ud800\"]",
                          "[\"\\udc00\"]",
                          "[\"\\ud800\\u0041\"]",
                          "[\"\\ud800x\"]",
                          "\x0c{}",
                          "[\"\xff\"]",
                          "[\"\xc0\xaf\"]",
                          "[\"\xed\xa0\x80\"]",
                          "[\"\xf4\x90\x80\x80\"]",
                          "[\"\xc3\"]",
                          "[\"\xe2\x82\"]",
                          "\xc3\xa9"}) {
    EXPECT_EQ(error_kind(bad), JsonErrorKind::kSyntax) << bad;
  }
}

TEST(JsonRead, DepthIsBoundedAndSyntaxErrorsWin) {
  const auto nest = [](int n, const char* open, const char* close) {
    std::string s;
    for (int i = 0; i < n; ++i) s += open;
    for (int i = 0; i < n; ++i) s += close;
    return s;
  };
  EXPECT_NO_THROW(read_json(nest(128, "[", "]")));
  EXPECT_EQ(error_kind(nest(129, "[", "]")), JsonErrorKind::kTooDeep);
  EXPECT_EQ(error_kind(nest(3, "{\"a\":[", "]}"), 5), JsonErrorKind::kTooDeep);
  EXPECT_NO_THROW(read_json(nest(2, "{\"a\":[", "]}"), JsonReadOptions{4}));
  // A syntax error anywhere wins over depth, and depth over float overflow.
  EXPECT_EQ(error_kind(nest(200, "[", "]") + "x"), JsonErrorKind::kSyntax);
  EXPECT_EQ(error_kind("[1e400," + nest(200, "[", "]") + "]"), JsonErrorKind::kTooDeep);
  // Very deep input does not exhaust the stack.
  EXPECT_EQ(error_kind(nest(200000, "[", "]")), JsonErrorKind::kTooDeep);
  EXPECT_THROW(read_json("[]", JsonReadOptions{0}), Error);
}

TEST(JsonRead, FloatOverflowAndUnderflow) {
  EXPECT_EQ(error_kind("1E400"), JsonErrorKind::kFloatOverflow);
  EXPECT_EQ(error_kind("[-1e999]"), JsonErrorKind::kFloatOverflow);
  EXPECT_EQ(error_kind("1.7976931348623159e308"), JsonErrorKind::kFloatOverflow);
  EXPECT_EQ(error_kind("123456789012345678901234567890e300"), JsonErrorKind::kFloatOverflow);
  const Value v =
      read_json("[1e-400,-1e-400,0.00001e-320,5e-324,1.7976931348623157e308,1e-99999999999999999999]");
  EXPECT_EQ(write_json(v, false), "[0.0,-0.0,0.0,5e-324,1.7976931348623157e+308,0.0]");
  // Syntax errors are reported before an overflow.
  EXPECT_EQ(error_kind("[1e400,]"), JsonErrorKind::kSyntax);
}

TEST(JsonValue, TruthinessAndEquality) {
  for (const char* falsy : {"null", "false", "0", "-0", "0.0", "-0.0", "\"\"", "[]", "{}", "0e5"}) {
    EXPECT_FALSE(read_json(falsy).truthy()) << falsy;
  }
  for (const char* truthy :
       {"true", "1", "-1", "1e-300", "\" \"", "[0]", "{\"\":0}", "99999999999999999999"}) {
    EXPECT_TRUE(read_json(truthy).truthy()) << truthy;
  }
  EXPECT_TRUE(read_json(R"({"a":[1,2.0]})") == read_json(R"({"a":[1,2.0]})"));
  EXPECT_FALSE(read_json("1") == read_json("1.0"));
  EXPECT_FALSE(read_json("0.0") == read_json("-0.0"));
  EXPECT_THROW(Value::integer_text("01"), Error);
  EXPECT_THROW(read_json("1").as_string(), Error);
}

TEST(JsonValue, SetReplacesInPlace) {
  Value o = Value::object();
  o.set("b", Value::integer(1));
  o.set("a", Value::integer(2));
  o.set("b", Value::string("x"));
  EXPECT_EQ(write_json(o, false), R"({"b":"x","a":2})");
}

}  // namespace
}  // namespace verdict::decision
