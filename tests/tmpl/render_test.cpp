// Rendering of every construct the engine supports, on small inline templates.

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace flexjit::tmpl {
namespace {

using test::render;

// ---- output of values ----

TEST(RenderValues, StringsAndIntsAsTheyAre) {
  EXPECT_EQ(render("a{{ s }}b{{ n }}c{{ m }}", {{"s", "x y"}, {"n", 42}, {"m", -7}}), "ax yb42c-7");
  EXPECT_EQ(render("{{ big }}", {{"big", 18446744073709551615ull}}), "18446744073709551615");
}

TEST(RenderValues, FloatsRoundTripLikePython) {
  EXPECT_EQ(render("{{ 1.0 }} {{ 0.5 }} {{ 100.0 }} {{ -2.25 }}"), "1.0 0.5 100.0 -2.25");
  EXPECT_EQ(render("{{ 0.1 + 0.2 }} {{ 1 / 3 }}"), "0.30000000000000004 0.3333333333333333");
  EXPECT_EQ(render("{{ 1e16 }} {{ 1e15 }} {{ 1e-5 }} {{ 0.0001 }} {{ 1.5e300 }}"),
            "1e+16 1000000000000000.0 1e-05 0.0001 1.5e+300");
  EXPECT_EQ(render("{{ x }} {{ y }}", {{"x", 3.0}, {"y", -0.0}}), "3.0 -0.0");
}

TEST(RenderValues, BoolsAndNoneLikePython) {
  EXPECT_EQ(render("{{ true }} {{ false }} {{ True }} {{ False }} {{ none }} {{ None }}"),
            "True False True False None None");
  EXPECT_EQ(render("{{ b }} {{ n }}", {{"b", true}, {"n", nullptr}}), "True None");
}

TEST(RenderValues, ListsAndObjectsLikePythonRepr) {
  EXPECT_EQ(render("{{ [1, 'a', none, true, 1.5, [2]] }}"), "[1, 'a', None, True, 1.5, [2]]");
  EXPECT_EQ(render("{{ o }}", {{"o", {{"k", "v"}, {"n", {1, 2}}}}}), "{'k': 'v', 'n': [1, 2]}");
  EXPECT_EQ(render("{{ [\"it's\", 'a\\tb'] }}"), "[\"it's\", 'a\\tb']");
}

TEST(RenderValues, StringLiteralsAndEscapes) {
  EXPECT_EQ(render("{{ 'single' }} {{ \"double\" }} {{ 'a' 'b' }}"), "single double ab");
  EXPECT_EQ(render("{{ 'a\\nb' }}|{{ 'q\\'s' }}|{{ \"q\\\"d\" }}|{{ 'back\\\\slash' }}"), "a\nb|q's|q\"d|back\\slash");
  EXPECT_EQ(render("{{ '}}' }}{{ '%}' }}"), "}}%}");
}

TEST(RenderValues, NumberLiterals) {
  EXPECT_EQ(render("{{ 1_000_000 }} {{ 2.5e3 }} {{ 1E2 }} {{ 0 }}"), "1000000 2500.0 100.0 0");
}

// ---- expressions ----

TEST(RenderExpressions, MemberAndIndexAccess) {
  Json context = {{"spec", {{"dims", {64, 128}}, {"name", "fwd"}, {"tile", {{"m", 128}}}}}};
  EXPECT_EQ(render("{{ spec.name }} {{ spec['name'] }} {{ spec.dims[1] }} {{ spec.dims.0 }} {{ spec.tile.m }}", context),
            "fwd fwd 128 64 128");
  EXPECT_EQ(render("{{ spec.dims[-1] }} {{ spec['ti' ~ 'le']['m'] }} {{ 'abc'[1] }}", context), "128 128 b");
}

TEST(RenderExpressions, ArithmeticFollowsPython) {
  EXPECT_EQ(render("{{ 1 + 2 * 3 - 4 }} {{ (1 + 2) * 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }}"), "3 9 1024 0.5");
  EXPECT_EQ(render("{{ 10 / 4 }} {{ 10 / 5 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 // -2 }} {{ 7.5 // 2 }}"),
            "2.5 2.0 3 -4 -4 3.0");
  EXPECT_EQ(render("{{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ -7.5 % 2 }}"), "1 2 -2 0.5");
  EXPECT_EQ(render("{{ 1 + 1.5 }} {{ 3 * 0.5 }} {{ -x }} {{ +x }} {{ 1 - -1 }}", {{"x", 4}}), "2.5 1.5 -4 4 2");
}

TEST(RenderExpressions, PlusConcatenatesStringsAndLists) {
  EXPECT_EQ(render("{{ 'ab' + 'cd' }} {{ [1] + [2, 3] }}"), "abcd [1, 2, 3]");
  EXPECT_EQ(render("{{ '-' * 3 }} {{ 2 * 'ab' }} {{ [0] * 2 }}|{{ 'x' * 0 }}|"), "--- abab [0, 0]||");
  // Empty sequences repeated any number of times, at once (fuzz_template's hang).
  EXPECT_EQ(render("|{{ 'fo' * 0 * 09999999999 }}|{{ [] * 9223372036854775807 }}|"), "||[]|");
}

TEST(RenderExpressions, TildeConcatenatesAsStrings) {
  EXPECT_EQ(render("{{ 'n' ~ 1 ~ true ~ none ~ 2.0 }}"), "n1TrueNone2.0");
  EXPECT_EQ(render("{{ 'a' ~ 2 * 3 }}"), "a6");  // `~` binds looser than `*`
}

TEST(RenderExpressions, Comparisons) {
  EXPECT_EQ(render("{{ 1 < 2 }} {{ 2 <= 1 }} {{ 'a' < 'b' }} {{ 1 == 1.0 }} {{ 1 != 2 }} {{ [1] == [1] }}"),
            "True False True True True True");
  EXPECT_EQ(render("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 + 1 == 2 }}"), "True False True");
  EXPECT_EQ(render("{{ 1 == true }} {{ 'a' == 'a' }} {{ none == none }}"), "False True True");
}

TEST(RenderExpressions, Membership) {
  Json context = {{"list", {1, 2}}, {"obj", {{"k", 1}}}};
  EXPECT_EQ(render("{{ 1 in list }} {{ 3 in list }} {{ 3 not in list }}", context), "True False True");
  EXPECT_EQ(render("{{ 'at' in 'cat' }} {{ 'dog' in 'cat' }} {{ 'k' in obj }} {{ 'z' not in obj }}", context),
            "True False True True");
}

TEST(RenderExpressions, LogicReturnsOperandsAndShortCircuits) {
  EXPECT_EQ(render("{{ 0 or 'b' }} {{ 'a' or undefined_name }} {{ 0 and undefined_name }} {{ 1 and 'x' }}"),
            "b a 0 x");
  EXPECT_EQ(render("{{ not 0 }} {{ not 'a' }} {{ not 1 == 2 }} {{ true and not false }}"), "True False True True");
  EXPECT_EQ(render("{{ [] or 0 or '' or 'last' }}"), "last");
}

TEST(RenderExpressions, ConditionalExpression) {
  EXPECT_EQ(render("{{ 'yes' if x else 'no' }}/{{ 'yes' if not x else 'no' }}", {{"x", 1}}), "yes/no");
  EXPECT_EQ(render("{{ 1 if false else 2 if false else 3 }}"), "3");
}

TEST(RenderExpressions, ListLiterals) {
  EXPECT_EQ(render("{{ [] }} {{ [1, [2, 3],] }} {{ [x, x * 2] }}", {{"x", 2}}), "[] [1, [2, 3]] [2, 4]");
}

TEST(RenderExpressions, IsDefinedAndOtherTests) {
  Json context = {{"d", {{"a", 1}}}, {"n", nullptr}};
  EXPECT_EQ(render("{{ d is defined }} {{ z is defined }} {{ z is not defined }} {{ z is undefined }}", context),
            "True False True True");
  EXPECT_EQ(render("{{ d.a is defined }} {{ d.b is defined }} {{ d.a.b is defined }} {{ z.y[0] is defined }}", context),
            "True False False False");
  EXPECT_EQ(render("{{ n is none }} {{ 4 is even }} {{ 3 is odd }} {{ 9 is divisibleby(3) }} {{ 8 is divisibleby(3) }}", context),
            "True True True True False");
  EXPECT_EQ(render("{{ 1 is number }} {{ 1 is integer }} {{ 1.5 is float }} {{ 'a' is string }} {{ d is mapping }}", context),
            "True True True True True");
  EXPECT_EQ(render("{{ [] is sequence }} {{ 'x' is sequence }} {{ d is iterable }} {{ true is boolean }} {{ 1 is boolean }}", context),
            "True True True True False");
}

TEST(RenderExpressions, ItemsKeysValues) {
  Json context = {{"o", {{"b", 2}, {"a", 1}}}};
  EXPECT_EQ(render("{{ o.items() }} {{ o.keys() }} {{ o.values() }}", context), "[['a', 1], ['b', 2]] ['a', 'b'] [1, 2]");
}

TEST(RenderExpressions, Range) {
  EXPECT_EQ(render("{{ range(4) }} {{ range(1, 4) }} {{ range(0, 10, 4) }} {{ range(3, 0, -1) }} {{ range(2, 1) }}"),
            "[0, 1, 2, 3] [1, 2, 3] [0, 4, 8] [3, 2, 1] []");
}

// ---- filters ----

TEST(RenderFilters, IndentLikeJinja) {
  Json context = {{"body", "a;\nb;\n\nc;"}};
  EXPECT_EQ(render("{{ body | indent(2) }}", context), "a;\n  b;\n\n  c;");
  EXPECT_EQ(render("{{ body | indent }}", context), "a;\n    b;\n\n    c;");
  EXPECT_EQ(render("{{ body | indent(2, true) }}", context), "  a;\n  b;\n\n  c;");
  EXPECT_EQ(render("{{ body | indent(2, blank=true) }}", context), "a;\n  b;\n  \n  c;");
  EXPECT_EQ(render("{{ body | indent('// ', first=true) }}", context), "// a;\n// b;\n\n// c;");
  EXPECT_EQ(render("{{ 'x\\n' | indent(2) }}|"), "x\n|");  // the trailing newline gets no indentation
}

TEST(RenderFilters, Join) {
  Json context = {{"xs", {1, "b", 2.5}}};
  EXPECT_EQ(render("{{ xs | join(', ') }}|{{ xs | join }}|{{ [] | join('-') }}|{{ xs | join(d='+') }}", context),
            "1, b, 2.5|1b2.5||1+b+2.5");
}

TEST(RenderFilters, UpperLowerTrimReplace) {
  EXPECT_EQ(render("{{ 'AbC' | upper }} {{ 'AbC' | lower }} [{{ '  x y \\n' | trim }}]"), "ABC abc [x y]");
  EXPECT_EQ(render("{{ 'aXbXc' | replace('X', '-') }} {{ 'aXbXc' | replace('X', '', 1) }}"), "a-b-c abXc");
}

TEST(RenderFilters, DefaultCoversUndefinedAndNull) {
  Json context = {{"n", nullptr}, {"e", ""}, {"z", 0}, {"d", {{"a", 1}}}};
  EXPECT_EQ(render("{{ missing | default('m') }} {{ n | default('n') }} {{ e | default('e') }}|", context), "m n |");
  EXPECT_EQ(render("{{ e | default('e', true) }} {{ z | default(5, boolean=true) }} {{ z | default(5) }}", context),
            "e 5 0");
  EXPECT_EQ(render("{{ d.b | default(2) }} {{ d.a.b | default(3) }} {{ d['x'][0] | d(4) }} {{ missing | default }}|", context),
            "2 3 4 |");
}

TEST(RenderFilters, FiltersChain) {
  Json context = {{"name", "ABC"}, {"xs", {"a", "b"}}};
  EXPECT_EQ(render("{{ name | lower | default('a') }} {{ xs | join('-') | upper }} {{ name | lower | length }}", context),
            "abc A-B 3");
  EXPECT_EQ(render("{{ -1 | abs }} {{ 1 + -3 | abs }}"), "1 4");  // filters bind tighter than `+`
}

TEST(RenderFilters, LengthStringConversions) {
  Json context = {{"xs", {1, 2, 3}}, {"o", {{"a", 1}}}};
  EXPECT_EQ(render("{{ xs | length }} {{ xs | count }} {{ o | length }} {{ 'héllo' | length }}", context), "3 3 1 5");
  EXPECT_EQ(render("{{ 5 | string ~ 'x' }} {{ true | string | lower }} {{ xs | string }}", context), "5x true [1, 2, 3]");
  EXPECT_EQ(render("{{ '3' | int + 1 }} {{ ' 2.5 ' | float }} {{ 3.9 | int }} {{ -3.9 | int }} {{ 3 | float }} {{ '7.5' | int }}"),
            "4 2.5 3 -3 3.0 7");
  EXPECT_EQ(render("{{ xs | first }} {{ xs | last }} {{ -2.5 | abs }}", context), "1 3 2.5");
}

// ---- statements ----

TEST(RenderStatements, IfElifElse) {
  const std::string text = "{% if x > 2 %}big{% elif x > 0 %}small{% elif x == 0 %}zero{% else %}negative{% endif %}";
  EXPECT_EQ(render(text, {{"x", 3}}), "big");
  EXPECT_EQ(render(text, {{"x", 1}}), "small");
  EXPECT_EQ(render(text, {{"x", 0}}), "zero");
  EXPECT_EQ(render(text, {{"x", -1}}), "negative");
  EXPECT_EQ(render("{% if [] %}a{% endif %}{% if 'x' %}b{% endif %}{% if none %}c{% endif %}"), "b");
}

TEST(RenderStatements, ForWithLoopVariables) {
  EXPECT_EQ(render("{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }} {% endfor %}",
                   {{"xs", {"a", "b"}}}),
            "10TrueFalse2 21FalseTrue2 ");
  EXPECT_EQ(render("{% for x in xs %}{{ loop.revindex }}{{ loop.revindex0 }}{% endfor %}", {{"xs", {1, 2, 3}}}),
            "322110");
  EXPECT_EQ(render("{% for x in xs %}{{ x }}{{ ', ' if not loop.last else '' }}{% endfor %}", {{"xs", {1, 2}}}), "1, 2");
}

TEST(RenderStatements, NestedLoopsShadowLoop) {
  EXPECT_EQ(render("{% for i in range(2) %}{% set outer = loop %}{% for j in range(2) %}"
                   "{{ outer.index }}{{ loop.index }} {% endfor %}{% endfor %}"),
            "11 12 21 22 ");
}

TEST(RenderStatements, ForOverObjectGivesSortedKeys) {
  Json context = {{"o", {{"b", 2}, {"a", 1}}}};
  EXPECT_EQ(render("{% for k in o %}{{ k }}={{ o[k] }};{% endfor %}", context), "a=1;b=2;");
  EXPECT_EQ(render("{% for k, v in o.items() %}{{ k }}:{{ v }} {% endfor %}", context), "a:1 b:2 ");
  EXPECT_EQ(render("{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }} {% endfor %}"), "3 7 ");
}

TEST(RenderStatements, ForElseRendersOnEmpty) {
  EXPECT_EQ(render("{% for x in [] %}item{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for x in [1] %}item{% else %}empty{% endfor %}"), "item");
}

TEST(RenderStatements, SetAndScoping) {
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }}"), "231");
  EXPECT_EQ(render("{% if true %}{% set y = 'leaks' %}{% endif %}{{ y }}"), "leaks");
  EXPECT_EQ(render("{% set n = n * 2 %}{{ n }}", {{"n", 21}}), "42");  // a set shadows the context
  EXPECT_EQ(render("{% set a = [1] %}{% set b = a + [2] %}{% set a = 0 %}{{ a }}{{ b }}"), "0[1, 2]");
}

TEST(RenderStatements, SetBlockCapturesText) {
  EXPECT_EQ(render("{% set body %}\nx = {{ 1 + 1 }};\n{% endset %}[{{ body }}]{{ body | indent(2, true) }}"),
            "[x = 2;\n]  x = 2;\n");
}

TEST(RenderStatements, FilterBlock) {
  EXPECT_EQ(render("{% filter upper %}hello {{ who }}{% endfilter %}", {{"who", "you"}}), "HELLO YOU");
  EXPECT_EQ(render("{% filter indent(2, true) | replace('x', 'y') %}\nx;\nx;\n{% endfilter %}"), "  y;\n  y;\n");
}

TEST(RenderStatements, MacrosWithDefaultsAndKeywords) {
  const std::string macros = "{% macro tile(m, n=16, k=n) %}{{ m }}x{{ n }}x{{ k }}{% endmacro %}";
  EXPECT_EQ(render(macros + "{{ tile(64) }} {{ tile(64, 32) }} {{ tile(64, k=8) }} {{ tile(n=1, m=2) }}"),
            "64x16x16 64x32x32 64x16x8 2x1x1");
}

TEST(RenderStatements, MacrosSeeTheirDefiningScopeNotTheCaller) {
  EXPECT_EQ(render("{% set t = 'top' %}{% macro m() %}{{ t }}{% endmacro %}{% for t in [1] %}{{ m() }}{% endfor %}"),
            "top");
  EXPECT_EQ(render("{% macro m() %}{{ g }}{% endmacro %}{% set g = 'later' %}{{ m() }}"), "later");
  EXPECT_EQ(render("{% macro m(a) %}{% set a = a * 2 %}{{ a }}{% endmacro %}{% set a = 1 %}{{ m(5) }}{{ a }}"),
            "101");
}

TEST(RenderStatements, MacrosCallMacrosAndRecurse) {
  EXPECT_EQ(render("{% macro inner(y) %}<{{ y }}>{% endmacro %}{% macro outer(x) %}[{{ inner(x) }}]{% endmacro %}{{ outer(3) }}"),
            "[<3>]");
  EXPECT_EQ(render("{% macro count(n) %}{{ n }}{% if n > 0 %}{{ count(n - 1) }}{% endif %}{% endmacro %}{{ count(3) }}"),
            "3210");
  EXPECT_EQ(render("{% macro twice(f) %}{{ f() }}{{ f() }}{% endmacro %}{% macro x() %}x{% endmacro %}{{ twice(x) }}"),
            "xx");
}

TEST(RenderStatements, MacroOutputIsAString) {
  EXPECT_EQ(render("{% macro m() %}\n  a\n  b\n{% endmacro %}{{ m() | indent(2) }}{{ m() | length }}"),
            "  a\n    b\n8");
}

TEST(RenderStatements, CommentsAndRaw) {
  EXPECT_EQ(render("a{# anything {{ here }} {% if %} #}b"), "ab");
  EXPECT_EQ(render("{% raw %}{{ x }} {% if %}{% endraw %}"), "{{ x }} {% if %}");
  EXPECT_EQ(render("{%- raw -%}  {{ x }}  {%- endraw -%}"), "{{ x }}");
}

TEST(RenderStatements, ContextMayBeNull) {
  EXPECT_EQ(Template::parse("t", "ok").render(Json()), "ok");
  EXPECT_EQ(Template::parse("t", "{{ 1 }}").render(nullptr), "1");
}

TEST(RenderStatements, TemplateKeepsNameAndOptions) {
  Options options;
  options.trim_blocks = false;
  Template tmpl = Template::parse("kernel.cu.j2", "x", options);
  EXPECT_EQ(tmpl.name(), "kernel.cu.j2");
  EXPECT_FALSE(tmpl.options().trim_blocks);
  Template copy = tmpl;  // copies share the parsed tree
  EXPECT_EQ(copy.render({}), "x");
}

TEST(RenderStatements, ParsedOnceRenderedMany) {
  Template tmpl = Template::parse("t", "{% for i in range(n) %}{{ i }}{% endfor %}");
  EXPECT_EQ(tmpl.render({{"n", 3}}), "012");
  EXPECT_EQ(tmpl.render({{"n", 5}}), "01234");
  EXPECT_EQ(tmpl.render({{"n", 0}}), "");
}

}  // namespace
}  // namespace flexjit::tmpl
