// Filters, tests, methods, globals and Python value formatting. Expected values are worked out by
// hand from Python's and Jinja2's documented behaviour (str(), repr(), json.dumps, str methods).
#include <gtest/gtest.h>

#include "jinja_util.h"

namespace verdict::chat::jinja {
namespace {

using testing::render;

const char* kUsers = R"({"users": [{"name": "A", "age": 30, "admin": true}, {"name": "B", "admin": false}],
                         "d": {"a": 1, "b": 2}})";

TEST(JinjaFilters, NumbersAndConversions) {
  EXPECT_EQ(render("{{ -3 | abs }} {{ -2.5 | abs }}"), "3 2.5");
  EXPECT_EQ(
      render("{{ '3.5' | float }} {{ 'x' | float }} {{ 'x' | float(1.5) }} {{ 2 | float }} {{ ' 1e2 ' | float }}"),
      "3.5 0.0 1.5 2.0 100.0");
  EXPECT_EQ(render("{{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(-1) }} {{ 3.9 | int }} "
                   "{{ -3.9 | int }} {{ '0x1A' | int(base=16) }} {{ true | int }} {{ ' 1_000 ' | int }}"),
            "42 4 0 -1 3 -3 26 1 1000");
  EXPECT_EQ(render("{{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 2.1 | round(0, 'ceil') }} "
                   "{{ 2.9 | round(method='floor') }} {{ 5 | round }}"),
            "2.0 4.0 2.67 3.0 2.0 5");
  EXPECT_EQ(render("{{ [1, 2, 3] | sum }} {{ [{'age': 30}, {'age': 12}] | sum(attribute='age') }} "
                   "{{ [1.5, 2] | sum(start=1) }}"),
            "6 42 4.5");
}

TEST(JinjaFilters, Strings) {
  EXPECT_EQ(render("{{ 'hELLO world' | capitalize }}|{{ 'HeLLo' | lower }}|{{ 'abc' | upper }}"),
            "Hello world|hello|ABC");
  EXPECT_EQ(render("{{ \"hello wORLD it's (x-ray)\" | title }}"), "Hello World It's (X-Ray)");
  EXPECT_EQ(render("[{{ 'ab' | center(6) }}][{{ 'abc' | center(6) }}][{{ 'abc' | center(2) }}]"),
            "[  ab  ][ abc  ][abc]");
  EXPECT_EQ(render("{{ 'h\xc3\xa9llo' | length }} {{ [1, 2] | count }} {{ {'a': 1} | length }}"), "5 2 1");
  EXPECT_EQ(render("{{ '  a b \n' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ 5 | trim }}"), "a b|a|5");
  EXPECT_EQ(render("{{ 'aaa' | replace('a', 'b') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ 'ab' | replace('', '-') }}"),
            "bbb bba -a-b-");
  EXPECT_EQ(render("{{ 'abc' | reverse }} {{ [1, 2] | reverse | list }}"), "cba [2, 1]");
  EXPECT_EQ(render("{{ '<a href=\"x\">&\\'</a>' | e }}"), "&lt;a href=&#34;x&#34;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(render("{{ 'Hello, world! foo_bar' | wordcount }}"), "3");
  EXPECT_EQ(render("{{ '<&>' | escape }}"), "&lt;&amp;&gt;");
  EXPECT_EQ(render("{{ 1 | string ~ 'x' }} {{ [1, 'a'] | string }} {{ none | string }} {{ '<b>' | safe }}"),
            "1x [1, 'a'] None <b>");
}

TEST(JinjaFilters, Indent) {
  EXPECT_EQ(render("{{ 'a\nb\n\nc' | indent(2) }}"), "a\n  b\n\n  c");
  EXPECT_EQ(render("{{ 'a\nb' | indent(2, true) }}"), "  a\n  b");
  EXPECT_EQ(render("{{ 'a\n\nb' | indent(2, blank=true) }}"), "a\n  \n  b");
  EXPECT_EQ(render("{{ 'a\nb' | indent('> ') }}"), "a\n> b");
  EXPECT_EQ(render("{{ 'a\nb\n' | indent }}"), "a\n    b\n");
}

TEST(JinjaFilters, Defaults) {
  EXPECT_EQ(render("{{ missing | default('x') }}|{{ '' | default('x') }}|{{ '' | default('x', true) }}|"
                   "{{ none | d('y', boolean=true) }}|{{ 0 | default(5) }}"),
            "x||x|y|0");
}

TEST(JinjaFilters, Sequences) {
  EXPECT_EQ(render("{{ [1,2,3] | first }}{{ [1,2,3] | last }}{{ 'abc' | first }}{{ 'abc' | last }}{{ [] | first }}"),
            "13ac");
  EXPECT_EQ(render("{{ 'ab' | list }} {{ {'k': 1} | list }} {{ range(3) | list }}"), "['a', 'b'] ['k'] [0, 1, 2]");
  EXPECT_EQ(
      render("{{ [1, 2, 3] | join(', ') }} {{ ['a', 'b'] | join }} {{ users | join(',', attribute='name') }}", kUsers),
      "1, 2, 3 ab A,B");
  EXPECT_EQ(render("{{ [1, 2, 3, 4, 5] | batch(2) | list }} {{ [1, 2, 3] | batch(2, 0) | list }}"),
            "[[1, 2], [3, 4], [5]] [[1, 2], [3, 0]]");
  EXPECT_EQ(
      render("{{ [3, 1, 2] | sort }} {{ ['b', 'A', 'c'] | sort }} {{ ['b', 'A', 'c'] | sort(case_sensitive=true) }} "
             "{{ [3, 1, 2] | sort(reverse=true) }}"),
      "[1, 2, 3] ['A', 'b', 'c'] ['A', 'b', 'c'] [3, 2, 1]");
  EXPECT_EQ(render("{{ ['b', 'a', 'C'] | sort(case_sensitive=true) }}"), "['C', 'a', 'b']");
  EXPECT_EQ(render("{{ [{'n': 'b', 'k': 2}, {'n': 'a', 'k': 1}, {'n': 'c', 'k': 1}] | sort(attribute='k') | map(attribute='n') "
                   "| join }} {{ [{'k': 'X'}, {'k': 'x'}, {'k': 'y'}] | unique(attribute='k') | map(attribute='k') | join }}"),
            "acb Xy");
  EXPECT_EQ(
      render("{{ ['a', 'A', 'b', 'a'] | unique | list }} {{ ['a', 'A', 'b'] | unique(case_sensitive=true) | list }}"),
      "['a', 'b'] ['a', 'A', 'b']");
  EXPECT_EQ(
      render("{{ [3, 1, 2] | max }} {{ [3, 1, 2] | min }} {{ ['b', 'A', 'c'] | max }} {{ ['b', 'A', 'c'] | min }} "
             "{{ [] | max }}|"),
      "3 1 c A |");
}

TEST(JinjaFilters, Mappings) {
  EXPECT_EQ(render("{% for k, v in d | items %}{{ k }}{{ v }}{% endfor %}", kUsers), "a1b2");
  EXPECT_EQ(render("{% for k, v in {'b': 1, 'A': 2, 'c': 0} | dictsort %}{{ k }}{{ v }}{% endfor %}"), "A2b1c0");
  EXPECT_EQ(
      render("{% for k, v in {'b': 1, 'A': 2, 'c': 0} | dictsort(by='value', reverse=true) %}{{ k }}{% endfor %}"),
      "Abc");
  EXPECT_EQ(render("{% set ns = namespace(x=7) %}{{ ns | attr('x') }}"), "7");
}

TEST(JinjaFilters, MapSelectReject) {
  EXPECT_EQ(render("{{ users | map(attribute='name') | join('|') }} {{ ['a', 'b'] | map('upper') | list }} "
                   "{{ users | map(attribute='age', default=0) | list }} {{ ['1', '2'] | map('int') | sum }}",
                   kUsers),
            "A|B ['A', 'B'] [30, 0] 3");
  EXPECT_EQ(render("{{ range(6) | select('odd') | list }} {{ range(6) | reject('odd') | list }} "
                   "{{ [0, 1, '', none, 'a'] | select | list }} {{ [1, 5, 9] | select('gt', 4) | list }}"),
            "[1, 3, 5] [0, 2, 4] [1, 'a'] [5, 9]");
  EXPECT_EQ(render("{{ users | selectattr('admin') | map(attribute='name') | join }} "
                   "{{ users | rejectattr('admin') | map(attribute='name') | join }} "
                   "{{ users | selectattr('name', 'equalto', 'B') | map(attribute='admin') | list }}",
                   kUsers),
            "A B [False]");
}

TEST(JinjaFilters, ToJsonIsPythonJsonDumps) {
  EXPECT_EQ(render("{{ {'b': 1, 'a': [1, '\xc3\xa9', none, true, 1.0, 2.5e-7]} | tojson }}"),
            "{\"b\": 1, \"a\": [1, \"\xc3\xa9\", null, true, 1.0, 2.5e-07]}");
  EXPECT_EQ(render("{{ {'a': [1, 2], 'b': {}, 'c': []} | tojson(indent=2) }}"),
            "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": []\n}");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}"), "{\"a\": 2, \"b\": 1}");
  EXPECT_EQ(render("{{ '\xc3\xa9\xf0\x9f\x9a\x80' | tojson(ensure_ascii=true) }}"), "\"\\u00e9\\ud83d\\ude80\"");
  EXPECT_EQ(render("{{ {'a': 1, 'b': 2} | tojson(separators=(',', ':')) }}"), "{\"a\":1,\"b\":2}");
  EXPECT_EQ(render("{{ 'a\\x01\"\\\\\n\t\x7f' | tojson }}"), "\"a\\u0001\\\"\\\\\\n\\t\x7f\"");
  EXPECT_EQ(render("{{ x | tojson }}", R"({"x": {"z": 1, "a": {"y": [true]}}})"), "{\"z\": 1, \"a\": {\"y\": [true]}}");
}

TEST(JinjaFilters, PythonFloatFormatting) {
  EXPECT_EQ(render("{{ 1e16 }} {{ 1.5e-5 }} {{ 123456789.0 }} {{ 1 / 3 }} {{ -0.0 }} {{ 1e300 * 1e10 }} {{ 0.0001 }}"),
            "1e+16 1.5e-05 123456789.0 0.3333333333333333 -0.0 inf 0.0001");
  EXPECT_EQ(render("{{ 1234567890123456.0 }} {{ 12345678901234567.0 }}"), "1234567890123456.0 1.2345678901234568e+16");
}

TEST(JinjaTests, TypeAndValueTests) {
  EXPECT_EQ(render("{{ 1 is number }} {{ 1.5 is float }} {{ 1 is integer }} {{ true is integer }} {{ true is number }} "
                   "{{ true is boolean }} {{ 'a' is string }} {{ {} is mapping }} {{ [] is mapping }}"),
            "True True True False True True True True False");
  EXPECT_EQ(render("{{ [] is sequence }} {{ 'a' is iterable }} {{ {} is iterable }} {{ 1 is iterable }} "
                   "{{ none is none }} {{ false is false }} {{ 0 is false }} {{ true is true }}"),
            "True True True False True True False True");
  EXPECT_EQ(render("{{ 3 is divisibleby 3 }} {{ 3 is divisibleby(2) }} {{ 2 is even }} {{ 3 is odd }} "
                   "{{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 'aBc' is lower }}"),
            "True False True True True True False");
  EXPECT_EQ(render("{{ 1 is eq 1 }} {{ 2 is gt 1 }} {{ 2 is lt 1 }} {{ 1 is in [1, 2] }} {{ 1 is ne 1 }} "
                   "{{ range is callable }} {{ x is sameas none }} {{ none is sameas none }}"),
            "True True False True False True False True");
  EXPECT_EQ(render("{{ x is not defined }} {{ 'a' is not string }}"), "True False");
  EXPECT_EQ(render("{{ 2 is ge 2 }} {{ 3 is le 2 }} {{ 'x' is escaped }} {{ 'upper' is filter }} {{ 'odd' is test }} "
                   "{{ 'nope' is filter }} {{ [1, 2, 1] | select('==', 1) | list }} {{ [1, 2, 3] | reject('<', 2) | list }}"),
            "True False False True True False [1, 1] [2, 3]");
}

TEST(JinjaMethods, StringMethods) {
  EXPECT_EQ(render("{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a,b,c'.split(',', 1) }} "
                   "{{ 'a,b,c'.rsplit(',', 1) }} {{ ' a b c '.split(none, 1) }}"),
            "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b,c'] ['a,b', 'c'] ['a', 'b c ']");
  EXPECT_EQ(render("{{ '  x  '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ '\n\nhi\n'.lstrip('\n') }}|"
                   "{{ 'hi\n\n'.rstrip('\n') }}|{{ ' hi '.lstrip() }}|{{ ' hi '.rstrip() }}|"),
            "x|hi|hi\n|hi|hi | hi|");
  EXPECT_EQ(render("{{ 'hello'.startswith('he') }} {{ 'hello'.endswith(('x', 'lo')) }} {{ 'hello'.startswith('lo') }}"),
            "True True False");
  EXPECT_EQ(
      render(
          "{{ 'Hello'.upper() }} {{ 'Hello'.lower() }} {{ \"hello wORLD it's\".title() }} {{ 'hELLO'.capitalize() }}"),
      "HELLO hello Hello World It'S Hello");
  EXPECT_EQ(render("{{ 'banana'.find('an') }} {{ 'banana'.rfind('an') }} {{ 'banana'.find('x') }} "
                   "{{ 'banana'.count('a') }} {{ 'h\xc3\xa9llo'.find('l') }} {{ 'banana'.index('n') }}"),
            "1 3 -1 3 2 2");
  EXPECT_EQ(render("{{ 'aXbXc'.replace('X', '-') }} {{ 'aaa'.replace('a', 'b', 1) }} {{ '-'.join(['a', 'b']) }}"),
            "a-b-c baa a-b");
  EXPECT_EQ(render("{{ '12'.isdigit() }} {{ 'ab'.isalpha() }} {{ ' '.isspace() }} {{ 'a1'.isalnum() }} "
                   "{{ ''.isdigit() }} {{ 'Ab'.islower() }} {{ 'AB'.isupper() }}"),
            "True True True True False False True");
  EXPECT_EQ(render("{{ 'a\nb\r\nc'.splitlines() }}"), "['a', 'b', 'c']");
  // The Qwen templates' reasoning extraction.
  EXPECT_EQ(render("{{ c.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') }}|"
                   "{{ c.split('</think>')[-1].lstrip('\\n') }}",
                   R"({"c": "<think>\nreason\n</think>\n\nanswer"})"),
            "reason|answer");
}

TEST(JinjaMethods, DictMethods) {
  EXPECT_EQ(
      render("{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 5) }} {{ d.keys() | list }} {{ d.values() | list }}",
             kUsers),
      "1 None 5 ['a', 'b'] [1, 2]");
  EXPECT_EQ(render("{% for k, v in d.items() %}{{ k }}={{ v }} {% endfor %}", kUsers), "a=1 b=2 ");
  EXPECT_EQ(render("{{ m.items }}", R"({"m": {"items": "data wins"}})"), "data wins");
}

TEST(JinjaGlobals, RangeDictNamespace) {
  EXPECT_EQ(
      render("{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(5, 0, -2) | list }} {{ range(0) | list }}"),
      "[0, 1, 2] [1, 3, 5] [5, 3, 1] []");
  EXPECT_EQ(render("{{ dict(a=1, b='x') }} {{ dict({'k': 2}) }}"), "{'a': 1, 'b': 'x'} {'k': 2}");
  EXPECT_EQ(render("{{ namespace(a=1) }}"), "<Namespace {'a': 1}>");
}

TEST(JinjaGlobals, StrftimeNowFormatsTheCurrentTime) {
  const std::string year = render("{{ strftime_now('%Y') }}");
  ASSERT_EQ(year.size(), 4u);
  EXPECT_GE(std::stoi(year), 2024);
  EXPECT_EQ(render("{{ strftime_now('%%') }}"), "%");
}

TEST(JinjaValues, PythonReprOfStringsInContainers) {
  EXPECT_EQ(render("{{ ['a\\'b', 'q\"', 'both\\'\"', 'nl\\n', '\\x01', '\xc3\xa9'] }}"),
            "[\"a'b\", 'q\"', 'both\\'\"', 'nl\\n', '\\x01', '\xc3\xa9']");
}

}  // namespace
}  // namespace verdict::chat::jinja
