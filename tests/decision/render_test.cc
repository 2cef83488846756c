// render() and the canonical writer: the examples of clef-decision.md §4.6 and §4.7.
#include "decision/render.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

namespace verdict::decision {
namespace {

std::string r(std::string_view json) { return render(read_json(json)); }

TEST(Render, StringsAreRawOtherValuesCanonical) {
  EXPECT_EQ(r(R"("x")"), "x");
  EXPECT_EQ(r(R"("line\n\"q\"")"), "line\n\"q\"");
  EXPECT_EQ(r("null"), "null");
  EXPECT_EQ(r("true"), "true");
  EXPECT_EQ(r("false"), "false");
  EXPECT_EQ(r("1e2"), "100.0");
  EXPECT_EQ(r("1"), "1");
  EXPECT_EQ(r("1.0"), "1.0");
  EXPECT_EQ(r("[]"), "[]");
  EXPECT_EQ(r("{}"), "{}");
  EXPECT_EQ(r(R"([" "])"), R"([" "])");
}

TEST(Render, SpecExamples) {
  EXPECT_EQ(r(R"({"z":1,"":2,"10":3,"9":4,"_":5,"a":6,"é":7})"),
            R"({"":2,"10":3,"9":4,"_":5,"a":6,"z":1,"é":7})");
  EXPECT_EQ(r(R"({"invoice":{"vendor":"Acme","total":1250.0,"currency":"USD","status":"overdue"}})"),
            R"({"invoice":{"currency":"USD","status":"overdue","total":1250.0,"vendor":"Acme"}})");
  EXPECT_EQ(r(R"({"false":{"b":1,"a":2}})"), R"({"false":{"a":2,"b":1}})");
}

TEST(Render, KeysSortByCodePointAtEveryDepth) {
  // Code-point order puts U+E000 before U+1F600; UTF-16 order would not.
  EXPECT_EQ(
      r(R"({"\ud83d\ude00":1,"\ue000":2,"é":3,"ß":4,"z":5,"aa":6,"a":7,"_":8,"Z":9,"A":10,"9":11,"10":12,"":13})"),
      "{\"\":13,\"10\":12,\"9\":11,\"A\":10,\"Z\":9,\"_\":8,\"a\":7,\"aa\":6,\"z\":5,\"\xc3\x9f\":4,"
      "\"\xc3\xa9\":3,"
      "\"\xee\x80\x80\":2,\"\xf0\x9f\x98\x80\":1}");
  EXPECT_EQ(r(R"({"z":{"b":[{"y":2,"x":1}],"a":null},"a":[{"d":1,"c":[{"f":0,"e":0}]}]})"),
            R"({"a":[{"c":[{"e":0,"f":0}],"d":1}],"z":{"a":null,"b":[{"x":1,"y":2}]}})");
}

TEST(Render, StringEscapes) {
  EXPECT_EQ(r(R"(["nul\u0000 us\u001f bs\b ff\f nl\n cr\r tab\t quote\" backslash\\ slash\/ del\u007f"])"),
            R"(["nul\u0000 us\u001f bs\b ff\f nl\n cr\r tab\t quote\" backslash\\ slash/ del)"
            "\x7f"
            R"("])");
  EXPECT_EQ(r(R"(["\u0001\u000b\u000e\u001b"])"), R"(["\u0001\u000b\u000e\u001b"])");
  // U+2028, U+2029, non-ASCII and non-BMP characters are written raw.
  EXPECT_EQ(r(R"(["\u2028\u2029\u00e9\ud83d\ude00e\u0301"])"),
            "[\"\xe2\x80\xa8\xe2\x80\xa9\xc3\xa9\xf0\x9f\x98\x80"
            "e\xcc\x81\"]");
  EXPECT_EQ(r(R"({"\n":"nl key","\u0000":"nul key"})"), R"({"\u0000":"nul key","\n":"nl key"})");
}

TEST(Render, FloatsFollowCPythonRepr) {
  const std::pair<const char*, const char*> cases[] = {
      {"1e-05", "1e-05"},
      {"0.0001", "0.0001"},
      {"9.9e-05", "9.9e-05"},
      {"1.5e-7", "1.5e-07"},
      {"1e-7", "1e-07"},
      {"1E-7", "1e-07"},
      {"-2.5e-10", "-2.5e-10"},
      {"0.1", "0.1"},
      {"0.0", "0.0"},
      {"-0.0", "-0.0"},
      {"100.0", "100.0"},
      {"1250.0", "1250.0"},
      {"123456789.125", "123456789.125"},
      {"1e15", "1000000000000000.0"},
      {"9999999999999998.0", "9999999999999998.0"},
      {"1e16", "1e+16"},
      {"1E+16", "1e+16"},
      {"1e22", "1e+22"},
      {"5e-324", "5e-324"},
      {"2.2250738585072014e-308", "2.2250738585072014e-308"},
      {"1.7976931348623157e308", "1.7976931348623157e+308"},
      {"0.30000000000000004", "0.30000000000000004"},
      {"12345678901234567890.0", "1.2345678901234567e+19"},
      {"-1.5E-300", "-1.5e-300"},
      {"3.0e0", "3.0"},
      {"2.50", "2.5"},
      {"1.401298464324817e-45", "1.401298464324817e-45"},
      {"16777216.0", "16777216.0"},
      {"1.0000000272564224e+16", "1.0000000272564224e+16"},
      {"0.001", "0.001"},
      {"123e-6", "0.000123"},
      {"1e100", "1e+100"},
      {"1.5e300", "1.5e+300"},
  };
  for (const auto& [in, out] : cases) EXPECT_EQ(r(in), out) << in;
  EXPECT_THROW(format_float(std::nan("")), Error);
  EXPECT_THROW(format_float(INFINITY), Error);
}

TEST(Render, FloatReprRoundTripsAndIsShortest) {
  // Random doubles: the output reads back to the same value, and its digits are those of the
  // shortest round-trip representation.
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d)) continue;
    const std::string s = format_float(d);
    double back = 0;
    auto res = std::from_chars(s.data(), s.data() + s.size(), back);
    ASSERT_EQ(res.ec, std::errc()) << s;
    ASSERT_EQ(res.ptr, s.data() + s.size()) << s;
    ASSERT_EQ(std::memcmp(&back, &d, sizeof d), 0) << s;
    char shortest[64];
    auto sres = std::to_chars(shortest, shortest + sizeof shortest, d, std::chars_format::scientific);
    std::string digits;
    for (const char* p = shortest; p < sres.ptr && *p != 'e'; ++p) {
      if (*p >= '0' && *p <= '9') digits += *p;
    }
    std::string got;
    const std::size_t e = s.find('e');
    for (std::size_t k = 0; k < (e == std::string::npos ? s.size() : e); ++k) {
      if (s[k] >= '0' && s[k] <= '9') got += s[k];
    }
    const auto first = got.find_first_not_of('0');
    got = first == std::string::npos ? "0" : got.substr(first);
    while (got.size() > digits.size() && got.back() == '0') got.pop_back();
    ASSERT_EQ(got, digits) << s;
  }
}

TEST(Render, Integers) {
  EXPECT_EQ(r("[0,-0,-1,18446744073709551615,-9223372036854775808,9007199254740993]"),
            "[0,0,-1,18446744073709551615,-9223372036854775808,9007199254740993]");
}

TEST(Render, UnsortedWriterKeepsOrder) {
  const Value v = read_json(R"({"b":[1.0,{"d":null,"c":"\u00e9"}],"a":true})");
  EXPECT_EQ(write_json(v, false), "{\"b\":[1.0,{\"d\":null,\"c\":\"\xc3\xa9\"}],\"a\":true}");
}

}  // namespace
}  // namespace verdict::decision
