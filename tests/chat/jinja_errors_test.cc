// Errors: templates that cannot load fail at parse with line and column; data the template refuses
// fails at render (raise_exception keeps the template's exact message); hostile templates hit
// limits instead of exhausting stack, memory or time.
#include <gtest/gtest.h>

#include <string>

#include "jinja_util.h"

namespace verdict::chat::jinja {
namespace {

using testing::parse_error;
using testing::render;
using testing::render_error;

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(JinjaParseErrors, UnknownNamesFailAtLoadWithPosition) {
  EXPECT_EQ(parse_error("a\n{{ x | nofilter }}"), "line 2, column 8: unknown filter 'nofilter'");
  EXPECT_EQ(parse_error("{{ x is frobbed }}"), "line 1, column 9: unknown test 'frobbed'");
  EXPECT_EQ(parse_error("{% if x %}{{ foo(1) }}{% endif %}"), "line 1, column 14: unknown function 'foo'");
  EXPECT_EQ(parse_error("{{ 'a'.frobnicate() }}"), "line 1, column 8: unknown method 'frobnicate'");
  EXPECT_EQ(parse_error("{{ xs | map('nofilter') }}"), "line 1, column 9: unknown filter 'nofilter' in map()");
  EXPECT_EQ(parse_error("{{ xs | selectattr('a', 'nottest') }}"),
            "line 1, column 9: unknown test 'nottest' in selectattr()");
  EXPECT_EQ(parse_error("{% set x | nofilter %}x{% endset %}"), "line 1, column 12: unknown filter 'nofilter'");
  EXPECT_EQ(parse_error("{{ xs[0](1) }}"),
            "line 1, column 9: unsupported call: only functions, macros and methods can be called");
}

TEST(JinjaParseErrors, NamesBoundInTheTemplateMayBeCalled) {
  EXPECT_EQ(parse_error("{% macro m() %}{% endmacro %}{% set f = m %}{{ f() }}{{ m() }}"), "");
  EXPECT_EQ(parse_error("{% macro m() %}{{ caller() }}{% endmacro %}"), "");
  EXPECT_EQ(parse_error("{{ range(2) }}{{ namespace() }}{{ raise_exception }}{{ strftime_now('%Y') }}"), "");
}

TEST(JinjaParseErrors, UnsupportedTags) {
  EXPECT_EQ(parse_error("{% include 'x.j2' %}"), "line 1, column 4: the 'include' tag is not supported");
  EXPECT_EQ(parse_error("{% extends 'base' %}"), "line 1, column 4: the 'extends' tag is not supported");
  EXPECT_EQ(parse_error("\n  {% import 'm' as m %}"), "line 2, column 6: the 'import' tag is not supported");
  EXPECT_EQ(parse_error("{% do xs.append(1) %}"), "line 1, column 4: the 'do' tag is not supported");
  EXPECT_EQ(parse_error("{% frob %}"), "line 1, column 4: unknown tag 'frob'");
  EXPECT_EQ(parse_error("{% for x in y recursive %}{% endfor %}"),
            "line 1, column 15: recursive loops are not supported");
}

TEST(JinjaParseErrors, MalformedTemplates) {
  EXPECT_EQ(parse_error("{% if x %}open"),
            "line 1, column 15: unexpected end of template: missing 'endif' for the 'if' at line 1");
  EXPECT_EQ(parse_error("{% for x in y %}{% endif %}"),
            "line 1, column 20: unexpected 'endif', expected 'else' or 'endfor'");
  EXPECT_EQ(parse_error("x{% endif %}"), "line 1, column 5: unexpected 'endif' (no open block it could close)");
  EXPECT_EQ(parse_error("{% break %}"), "line 1, column 4: 'break' outside of a loop");
  EXPECT_EQ(parse_error("{{ 'abc }}"), "line 1, column 4: unterminated string literal");
  EXPECT_EQ(parse_error("{{ x "), "line 1, column 1: missing end of print tag '}}'");
  EXPECT_EQ(parse_error("a {# x"), "line 1, column 3: missing end of comment tag '#}'");
  EXPECT_EQ(parse_error("{{ x $ y }}"), "line 1, column 6: unexpected character '$' in tag");
  EXPECT_EQ(parse_error("{{ 1 + }}"), "line 1, column 8: unexpected '}}', expected an expression");
  EXPECT_EQ(parse_error("{{ f(a=1, 2) }}"), "line 1, column 11: positional argument follows keyword argument");
  EXPECT_EQ(parse_error("{{ 99999999999999999999 }}"), "line 1, column 4: integer literal too large");
}

TEST(JinjaParseErrors, DeepNestingIsRefusedNotACrash) {
  EXPECT_NE(parse_error("{{ " + repeat("(", 100000) + "1" + repeat(")", 100000) + " }}").find("nested too deeply"),
            std::string::npos);
  EXPECT_NE(parse_error("{{ " + repeat("-", 100000) + "1 }}").find("nested too deeply"), std::string::npos);
  EXPECT_NE(parse_error("{{ " + repeat("not ", 100000) + "1 }}").find("nested too deeply"), std::string::npos);
  EXPECT_NE(parse_error("{{ 1" + repeat(" + 1", 100000) + " }}").find("nested too deeply"), std::string::npos);
  EXPECT_NE(parse_error("{{ x" + repeat(".a", 100000) + " }}").find("nested too deeply"), std::string::npos);
  EXPECT_NE(parse_error("{{ x" + repeat("|trim", 100000) + " }}").find("nested too deeply"), std::string::npos);
  EXPECT_NE(parse_error(repeat("{% if true %}", 100000)).find("nested too deeply"), std::string::npos);
  EXPECT_NE(parse_error("{{ " + repeat("[", 100000) + repeat("]", 100000) + " }}").find("nested too deeply"),
            std::string::npos);
  EXPECT_EQ(parse_error("{{ " + repeat("[", 100000) + " }}"), "line 1, column 1: missing end of print tag '}}'");
}

TEST(JinjaRenderErrors, RaiseExceptionKeepsTheTemplateMessage) {
  try {
    render("{% if not messages %}{{ raise_exception('No messages provided.') }}{% endif %}", R"({"messages": []})");
    FAIL() << "no exception";
  } catch (const RaisedException& e) {
    EXPECT_STREQ(e.what(), "No messages provided.");
  }
  // Raised from inside a macro inside a loop: still the bare message.
  try {
    render(
        "{% macro check(m) %}{% if m.role == 'x' %}{{ raise_exception('Unexpected message role.') }}{% endif %}"
        "{% endmacro %}{% for m in messages %}{{ check(m) }}{% endfor %}",
        R"({"messages": [{"role": "user"}, {"role": "x"}]})");
    FAIL() << "no exception";
  } catch (const RaisedException& e) {
    EXPECT_STREQ(e.what(), "Unexpected message role.");
  }
}

TEST(JinjaRenderErrors, TypeErrorsNameTheirPosition) {
  EXPECT_EQ(render_error("{{ 1 + 'a' }}"), "line 1, column 6: unsupported operand type(s) for +: 'int' and 'str'");
  EXPECT_EQ(render_error("\n{{ x.startswith('a') }}", R"({"x": 5})"),
            "line 2, column 6: 'int' object has no method 'startswith'");
  EXPECT_EQ(render_error("{% set d = {} %}{% set d.x = 1 %}"),
            "line 1, column 20: cannot assign attribute on non-namespace object");
  EXPECT_EQ(render_error("{{ 1 / 0 }}"), "line 1, column 6: division by zero");
  EXPECT_EQ(render_error("{{ 9223372036854775807 + 1 }}"), "line 1, column 24: integer overflow");
  EXPECT_EQ(render_error("{{ 'a' < 1 }}"), "line 1, column 4: '<' not supported between instances of 'str' and 'int'");
  EXPECT_EQ(render_error("{{ 1 in 5 }}"), "line 1, column 4: argument of type 'int' is not iterable");
  EXPECT_EQ(render_error("{% for x in 5 %}{% endfor %}"), "line 1, column 13: 'int' object is not iterable");
  EXPECT_EQ(render_error("{{ 'a' | int(1, 2, 3) }}"), "line 1, column 10: int() takes at most 2 argument(s) (3 given)");
  EXPECT_EQ(render_error("{% set a, b = [1] %}"), "line 1, column 4: not enough values to unpack");
  EXPECT_EQ(render_error("{{ range(1000000) | length }}"),
            "line 1, column 9: range() too big (more than 100000 items)");
  EXPECT_EQ(render_error("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}"),
            "line 1, column 35: macro 'm' takes not more than 1 argument(s)");
}

TEST(JinjaLimits, OutputSizeIsBounded) {
  Limits small;
  small.max_output_bytes = 50000;
  EXPECT_NE(render_error("{% for i in range(100) %}{{ 'x' * 1000 }}{% endfor %}", "{}", small).find("output too large"),
            std::string::npos);
  EXPECT_NE(render_error("{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}"
                         "{% endfor %}",
                         "{}", small)
                .find("too large"),
            std::string::npos);
  EXPECT_NE(render_error("{{ 'x' * 100000000000 }}", "{}", small).find("string too long"), std::string::npos);
  EXPECT_NE(render_error("{{ [1] * 100000000000 }}").find("list too long"), std::string::npos);
}

TEST(JinjaLimits, WorkIsBounded) {
  Limits small;
  small.max_steps = 100000;
  EXPECT_NE(
      render_error("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "{}", small)
          .find("too much work"),
      std::string::npos);
}

TEST(JinjaLimits, RecursionIsBounded) {
  EXPECT_NE(render_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").find("nested too deeply"),
            std::string::npos);
}

TEST(JinjaLimits, ValuesCannotNestWithoutBoundOrFormCycles) {
  EXPECT_NE(render_error("{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% set ns.x = [ns.x] %}{% endfor %}")
                .find("value nested too deeply"),
            std::string::npos);
  EXPECT_NE(render_error("{% set a = namespace() %}{% set a.me = a %}").find("namespace cannot hold another namespace"),
            std::string::npos);
  EXPECT_NE(render_error("{% set a = namespace() %}{% set a.l = [1, {'k': a}] %}").find("namespace cannot hold"),
            std::string::npos);
  // A bound method keeps its receiver alive: storing one that reaches the namespace is a cycle too.
  EXPECT_NE(render_error("{% set a = namespace() %}{% set d = {'n': a} %}{% set a.f = d.items %}").find("namespace cannot hold"),
            std::string::npos);
}

TEST(JinjaLimits, DeepJsonInputIsRefused) {
  std::string deep = repeat("[", 500) + repeat("]", 500);
  EXPECT_NE(render_error("{{ x }}", "{\"x\": " + deep + "}").find("nested too deeply"), std::string::npos);
}

}  // namespace
}  // namespace verdict::chat::jinja
