// Jinja syntax and statements: whitespace control (trim_blocks and lstrip_blocks on, as transformers
// configures them), expressions and precedence, literals, control flow, scoping, macros. Expected
// outputs are worked out by hand from Jinja2's documented semantics.
#include <gtest/gtest.h>

#include "jinja_util.h"

namespace verdict::chat::jinja {
namespace {

using testing::render;

TEST(JinjaWhitespace, TrimBlocksDropsTheNewlineAfterABlockTag) {
  EXPECT_EQ(render("{% if true %}\nyes\n{% endif %}\n"), "yes\n");
  EXPECT_EQ(render("{% set x = 1 %}\n{{ x }}"), "1");
}

TEST(JinjaWhitespace, TrimBlocksDoesNotApplyToPrintTags) { EXPECT_EQ(render("{{ 'a' }}\nb"), "a\nb"); }

TEST(JinjaWhitespace, LstripBlocksRemovesIndentBeforeBlockTags) {
  EXPECT_EQ(render("a\n    {% if true %}b{% endif %}"), "a\nb");
  EXPECT_EQ(render("a\n  \t{# note #}\nb"), "a\nb");
}

TEST(JinjaWhitespace, LstripBlocksLeavesPrintTagsAndTextBeforeTags) {
  EXPECT_EQ(render("a\n    {{ 'x' }}"), "a\n    x");
  EXPECT_EQ(render("a  {% if true %}b{% endif %}"), "a  b");
}

TEST(JinjaWhitespace, IndentAfterATrimmedBlockTagCountsAsLineStart) {
  EXPECT_EQ(render("{% if true %}\n    {% if true %}x{% endif %}\n{% endif %}"), "x");
}

TEST(JinjaWhitespace, PlusDisablesLstripAndTrim) {
  EXPECT_EQ(render("a\n  {%+ if true %}b{% endif %}"), "a\n  b");
  EXPECT_EQ(render("{% if true +%}\nb{% endif %}"), "\nb");
}

TEST(JinjaWhitespace, MinusStripsAllWhitespaceOnItsSide) {
  EXPECT_EQ(render("a  \n {{- 'b' -}} \n c"), "abc");
  EXPECT_EQ(render("x \n{%- if true -%}\n  y  \n{%- endif -%}\n z"), "xyz");
  EXPECT_EQ(render("a \n{#- c -#}\n b"), "ab");
}

TEST(JinjaWhitespace, OneTrailingNewlineIsDroppedAndNewlinesAreNormalised) {
  EXPECT_EQ(render("a\n"), "a");
  EXPECT_EQ(render("a\n\n"), "a\n");
  EXPECT_EQ(render("a\r\nb\rc"), "a\nb\nc");
}

TEST(JinjaWhitespace, CommentsAndRaw) {
  EXPECT_EQ(render("a{# {{ not rendered }} #}b"), "ab");
  EXPECT_EQ(render("{% raw %}{{ x }}{% if %}{% endraw %}"), "{{ x }}{% if %}");
  EXPECT_EQ(render("{%- raw -%}  {{ x }}  {%- endraw %}!"), "{{ x }}!");
}

TEST(JinjaWhitespace, EndDelimitersInsideBracketsDoNotCloseTheTag) {
  EXPECT_EQ(render("{{ {'a': {'b': 1}}['a']['b'] }}"), "1");
  EXPECT_EQ(render("{{ '}}' }}"), "}}");
}

TEST(JinjaExpressions, ArithmeticAndPrecedence) {
  EXPECT_EQ(render("{{ 1 + 2 * 3 }}"), "7");
  EXPECT_EQ(render("{{ (1 + 2) * 3 }}"), "9");
  EXPECT_EQ(render("{{ 2 ** 3 ** 2 }}"), "64");  // Jinja2's ** is left-associative
  EXPECT_EQ(render("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }}"), "3 -4 1 2 -2");
  EXPECT_EQ(render("{{ 7 / 2 }} {{ 6 / 2 }} {{ 1 + 1.5 }} {{ 2 * 0.5 }}"), "3.5 3.0 2.5 1.0");
  EXPECT_EQ(render("{{ 0.1 + 0.2 }}"), "0.30000000000000004");
  EXPECT_EQ(render("{{ true + 1 }} {{ -(3) }} {{ +4 }} {{ - -2 }}"), "2 -3 4 2");
  EXPECT_EQ(render("{{ 10 - 2 - 3 }}"), "5");
}

TEST(JinjaExpressions, StringsAndLists) {
  EXPECT_EQ(render("{{ 'ab' + 'cd' }} {{ 'ab' * 3 }} {{ 2 * 'x' }} {{ 'x' * 0 }}|"), "abcd ababab xx |");
  EXPECT_EQ(render("{{ 'a' ~ 1 ~ none ~ true ~ 2.5 ~ missing }}"), "a1NoneTrue2.5");
  EXPECT_EQ(render("{{ [1] + [2, 'b'] }} {{ [0] * 3 }}"), "[1, 2, 'b'] [0, 0, 0]");
  EXPECT_EQ(render("{{ \"x\" 'y' }}"), "xy");  // adjacent literals concatenate
}

TEST(JinjaExpressions, ComparisonsLogicAndMembership) {
  EXPECT_EQ(render("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1.0 }} {{ 'a' != 'b' }} {{ 2 >= 2 }} {{ 'a' < 'b' }}"),
            "True False True True True True");
  EXPECT_EQ(render("{{ not true }} {{ not 0 }} {{ not [] }}"), "False True True");
  EXPECT_EQ(render("{{ 'b' in 'abc' }} {{ 2 not in [1, 3] }} {{ 'k' in {'k': 1} }} {{ 'z' in {'k': 1} }}"),
            "True True True False");
  EXPECT_EQ(render("{{ none or 'x' }} {{ 0 and 1 }} {{ [] or 'empty' }} {{ 'a' and 'b' }}"), "x 0 empty b");
  EXPECT_EQ(render("{{ [1, [2]] == [1, [2]] }} {{ {'a': 1, 'b': 2} == {'b': 2, 'a': 1} }}"), "True True");
}

TEST(JinjaExpressions, ConditionalExpressions) {
  EXPECT_EQ(render("{{ 1 if false else 2 }}|{{ 1 if false }}|{{ 'a' if true else 'b' }}"), "2||a");
  EXPECT_EQ(render("{{ 'x' | upper if true else 'y' }}"), "X");
  EXPECT_EQ(render("{{ 1 if false else 2 if false else 3 }}"), "3");
}

TEST(JinjaExpressions, FilterAndTestBindTighterThanOperators) {
  EXPECT_EQ(render("{{ -1 | abs }}"), "1");
  EXPECT_EQ(render("{{ 'a' ~ 'b' | upper }}"), "aB");
  EXPECT_EQ(render("{{ xs | length - 1 }}", R"({"xs": [1, 2, 3]})"), "2");
  EXPECT_EQ(render("{{ 1 is odd and 2 is even }} {{ not 1 is odd }}"), "True False");
  EXPECT_EQ(render("{{ (xs | sort | join(',')) ~ '!' }}", R"({"xs": [3, 1, 2]})"), "1,2,3!");
}

TEST(JinjaExpressions, Literals) {
  EXPECT_EQ(render("{{ 1_000 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1e3 }} {{ 2.5e-3 }}"),
            "1000 31 15 5 1000.0 0.0025");
  EXPECT_EQ(render(R"({{ 'a\nb' }}|{{ "\u00e9\x41" }}|{{ 'it\'s' }}|{{ "tab\tq\"" }})"),
            "a\nb|\xc3\xa9"
            "A|it's|tab\tq\"");
  EXPECT_EQ(render("{{ True }} {{ False }} {{ None }} {{ true }} {{ none }}"), "True False None True None");
  EXPECT_EQ(render("{{ {'a': 1, 'b': [true, none, 'x']} }}"), "{'a': 1, 'b': [True, None, 'x']}");
  EXPECT_EQ(render("{{ [] }} {{ {} }} {{ ['it\\'s'] }}"), "[] {} [\"it's\"]");
}

TEST(JinjaExpressions, SubscriptsAndSlices) {
  const char* ctx = R"({"xs": [1, 2, 3, 4], "d": {"a": {"b": "deep"}}, "s": "héllo"})";
  EXPECT_EQ(render("{{ xs[-1] }} {{ xs[0] }} {{ xs[9] }}|{{ xs.1 }}", ctx), "4 1 |2");
  EXPECT_EQ(render("{{ xs[::-1] }} {{ xs[::2] }} {{ xs[1:3] }} {{ xs[-2:] }} {{ xs[:-3] }} {{ xs[3:1:-1] }}", ctx),
            "[4, 3, 2, 1] [1, 3] [2, 3] [3, 4] [1] [4, 3]");
  EXPECT_EQ(render("{{ s[1] }} {{ s[1:3] }} {{ s[::-1] }} {{ s[-1] }}", ctx), "\xc3\xa9 \xc3\xa9l oll\xc3\xa9h o");
  EXPECT_EQ(render("{{ d.a.b }} {{ d['a']['b'] }} {{ d.a['b'] }}", ctx), "deep deep deep");
}

TEST(JinjaExpressions, UndefinedIsLenient) {
  const char* ctx = R"({"d": {"a": 1}})";
  EXPECT_EQ(
      render("[{{ missing }}][{{ missing.attr.deeper }}][{{ d.nope }}][{{ d.nope.more }}][{{ missing[0] }}]", ctx),
      "[][][][][]");
  EXPECT_EQ(render("{{ missing is defined }} {{ d.a is defined }} {{ d.nope is undefined }}", ctx), "False True True");
  EXPECT_EQ(render("{% if missing %}y{% else %}n{% endif %}{% if not missing.x %}!{% endif %}"), "n!");
  EXPECT_EQ(render("{{ 'a' in missing }} {{ missing | length }}"), "False 0");
  EXPECT_EQ(render("{% for x in missing %}x{% else %}none{% endfor %}"), "none");
}

TEST(JinjaStatements, IfElifElse) {
  const std::string t = "{% if n == 1 %}one{% elif n == 2 %}two{% elif n > 2 %}many{% else %}none{% endif %}";
  EXPECT_EQ(render(t, R"({"n": 1})"), "one");
  EXPECT_EQ(render(t, R"({"n": 2})"), "two");
  EXPECT_EQ(render(t, R"({"n": 7})"), "many");
  EXPECT_EQ(render(t, R"({"n": 0})"), "none");
}

TEST(JinjaStatements, ForLoopVariables) {
  EXPECT_EQ(render("{% for x in ['a','b','c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
                   "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}|{% endfor %}"),
            "1032TrueFalse3|2121FalseFalse3|3210FalseTrue3|");
  EXPECT_EQ(render("{% for x in [1,2,3] %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}"), "-2;1-3;2-;");
  EXPECT_EQ(render("{% for x in range(3) %}{{ loop.cycle('a', 'b') }}{% endfor %}"), "aba");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
}

TEST(JinjaStatements, ForLoopFilterCountsOnlyKeptItems) {
  EXPECT_EQ(render("{% for x in range(6) if x is odd %}{{ x }}{{ loop.index }}{{ loop.length }},{% endfor %}"),
            "113,323,533,");
}

TEST(JinjaStatements, ForOverDictsStringsAndPairs) {
  const char* ctx = R"({"d": {"b": 1, "a": 2}})";
  EXPECT_EQ(render("{% for k in d %}{{ k }}{% endfor %}", ctx), "ba");
  EXPECT_EQ(render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", ctx), "b=1;a=2;");
  EXPECT_EQ(render("{% for k, v in d | items %}{{ k }}={{ v }};{% endfor %}", ctx), "b=1;a=2;");
  EXPECT_EQ(render("{% for (k, v) in d | dictsort %}{{ k }}={{ v }};{% endfor %}", ctx), "a=2;b=1;");
  EXPECT_EQ(render("{% for c in 'h\xc3\xa9' %}[{{ c }}]{% endfor %}"), "[h][\xc3\xa9]");
}

TEST(JinjaStatements, BreakAndContinue) {
  EXPECT_EQ(render("{% for x in range(10) %}{% if x == 5 %}{% break %}{% endif %}"
                   "{% if x is even %}{% continue %}{% endif %}{{ x }}{% endfor %}"),
            "13");
}

TEST(JinjaStatements, NestedLoopsKeepTheirOwnLoopVariable) {
  EXPECT_EQ(render("{% for a in [1,2] %}{% set outer = loop %}{% for b in [3] %}{{ outer.index }}{{ loop.index }}"
                   "{% endfor %}{% endfor %}"),
            "1121");
}

TEST(JinjaStatements, SetScoping) {
  EXPECT_EQ(render("{% set x = 1 %}{{ x }}"), "1");
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}"), "21");
  EXPECT_EQ(render("{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}"), "2");
  // Each iteration starts afresh: an assignment does not carry over to the next one.
  EXPECT_EQ(render("{% set x = 0 %}{% for i in [1, 2] %}[{{ x }}]{% set x = i %}{% endfor %}{{ x }}"), "[0][0]0");
  EXPECT_EQ(render("{% set a, b = [1, 2] %}{{ b }}{{ a }}{% set c, d = 3, 4 %}{{ d }}{{ c }}"), "2143");
}

TEST(JinjaStatements, NamespaceCarriesValuesOutOfLoops) {
  EXPECT_EQ(render("{% set ns = namespace(count=0, seen=[]) %}{% for i in range(4) %}"
                   "{% set ns.count = ns.count + i %}{% set ns.seen = ns.seen + [i] %}{% endfor %}"
                   "{{ ns.count }} {{ ns.seen }}"),
            "6 [0, 1, 2, 3]");
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.x = 'new' %}{{ ns.x }}"), "new");
  EXPECT_EQ(render("{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}"), "12");
}

TEST(JinjaStatements, SetBlocks) {
  EXPECT_EQ(render("{% set x %}  Hi {{ 1 }} {% endset %}[{{ x }}]"), "[  Hi 1 ]");
  EXPECT_EQ(render("{% set x | trim | upper %} hi {% endset %}[{{ x }}]"), "[HI]");
}

TEST(JinjaStatements, Macros) {
  const std::string m = "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}";
  EXPECT_EQ(render(m + "{{ greet('Ann') }} {{ greet('Bo', '?') }} {{ greet(punct='.', name='Cy') }}"),
            "Hi Ann! Hi Bo? Hi Cy.");
  EXPECT_EQ(render("{% macro m(a, b) %}[{{ a }}{{ b }}]{% endmacro %}{{ m(1) }}"), "[1]");
  EXPECT_EQ(render("{% macro m() %}{{ who }}{% endmacro %}{{ m() }}", R"({"who": "ctx"})"), "ctx");
  EXPECT_EQ(
      render("{% macro f(n) %}{% if n <= 1 %}1{% else %}{{ n * f(n - 1) | int }}{% endif %}{% endmacro %}{{ f(5) }}"),
      "120");
  EXPECT_EQ(render("{% set ns = namespace(n=0) %}{% macro bump() %}{% set ns.n = ns.n + 1 %}{% endmacro %}"
                   "{{ bump() }}{{ bump() }}{{ ns.n }}"),
            "2");
  EXPECT_EQ(render("{% macro m(x) %} {{ x }} {% endmacro %}[{{ m(1) | trim }}]"), "[1]");
}

TEST(JinjaStatements, CallBlocksPassCaller) {
  EXPECT_EQ(render("{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}"
                   "{% call wrap('b') %}bold{% endcall %}"),
            "<b>bold</b>");
  EXPECT_EQ(render("{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}"
                   "{% call(item) each([1, 2]) %}<{{ item }}>{% endcall %}"),
            "<1><2>");
}

TEST(JinjaStatements, FilterWithAndGenerationBlocks) {
  EXPECT_EQ(render("{% filter upper %}abc{{ 'd' }}{% endfilter %}"), "ABCD");
  EXPECT_EQ(render("{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]"), "3[]");
  EXPECT_EQ(render("{% generation %}x{% endgeneration %}"), "x");
}

}  // namespace
}  // namespace verdict::chat::jinja
