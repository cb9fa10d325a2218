// Every error the engine reports, word for word, with its position. The message text is part of
// the contract: code generation and users grep for it.

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace flexjit::tmpl {
namespace {

using test::error_of;

// ---- the error type ----

TEST(Errors, AreTemplateErrorsWithNameLineAndColumn) {
  try {
    Template::parse("fwd.cu.j2", "line one\n  x = {{ y | indnt(4) }};\n");
    FAIL() << "no error thrown";
  } catch (const TemplateError& error) {
    EXPECT_EQ(error.template_name(), "fwd.cu.j2");
    EXPECT_EQ(error.line(), 2);
    EXPECT_EQ(error.column(), 14);
    EXPECT_EQ(error.kind(), "TemplateError");
    EXPECT_STREQ(error.what(), "fwd.cu.j2:2:14: unknown filter 'indnt' (did you mean 'indent'?)");
  }
}

TEST(Errors, ColumnsCountCharactersNotBytes) {
  EXPECT_EQ(error_of("é€{{ x }}"), "t.j2:1:6: undefined variable 'x'");
}

// ---- lexing ----

TEST(LexErrors, UnterminatedTags) {
  EXPECT_EQ(error_of("a\n  {{ x "), "t.j2:2:3: unclosed tag '{{' opened at 2:3: expected '}}' before the end of the template");
  EXPECT_EQ(error_of("{% if x "), "t.j2:1:1: unclosed tag '{%' opened at 1:1: expected '%}' before the end of the template");
  EXPECT_EQ(error_of("ab {# note"), "t.j2:1:4: unclosed comment '{#' opened at 1:4: expected '#}' before the end of the template");
  // A new tag before the old one closed: the old one is the culprit.
  EXPECT_EQ(error_of("{{ x \n{% if y %}"), "t.j2:1:1: unclosed tag '{{' opened at 1:1: expected '}}' before the next tag at 2:1");
}

// Issue 17 item 13: an unclosed tag followed by ordinary kernel text used to be reported as an
// "unexpected character" in that text, far from the mistake.
TEST(LexErrors, UnclosedTagBeforeOrdinaryTextNamesWhereItOpened) {
  EXPECT_EQ(error_of("int a;\n{% if wgmma\nint b = c; {% endif %}"),
            "t.j2:2:1: unclosed tag '{%' opened at 2:1: expected '%}' before the unexpected character ';' at 3:10");
  EXPECT_EQ(error_of("x = {{ value\n  y = 2; // done"),
            "t.j2:1:5: unclosed tag '{{' opened at 1:5: expected '}}' before the unexpected character ';' at 2:8");
  EXPECT_EQ(error_of("{{ a\nit's"), "t.j2:1:1: unclosed tag '{{' opened at 1:1: expected '}}' before the quote at 2:3");
  // A closed tag with a bad character keeps the precise message.
  EXPECT_EQ(error_of("{% if a ; %}x{% endif %}"), "t.j2:1:9: unexpected character ';'");
}

TEST(LexErrors, UnterminatedStringAndRaw) {
  EXPECT_EQ(error_of("{{ 'abc }}"), "t.j2:1:4: unterminated string literal");
  EXPECT_EQ(error_of("x\n{% raw %}{{ y }}"),
            "t.j2:2:4: unclosed 'raw' block: expected '{% endraw %}' before the end of the template");
}

TEST(LexErrors, UnexpectedCharacter) {
  EXPECT_EQ(error_of("{{ a ; b }}"), "t.j2:1:6: unexpected character ';'");
  EXPECT_EQ(error_of("{{ a $ }}"), "t.j2:1:6: unexpected character '$'");
  EXPECT_EQ(error_of("{{ a ! b }}"), "t.j2:1:6: unexpected character '!'");
  EXPECT_EQ(error_of("{{ a → b }}"), "t.j2:1:6: unexpected character '→'");
}

// ---- parsing ----

TEST(ParseErrors, UnknownTag) {
  EXPECT_EQ(error_of("{% iff x %}"), "t.j2:1:4: unknown tag 'iff' (did you mean 'if'?)");
  EXPECT_EQ(error_of("{% block x %}"), "t.j2:1:4: unknown tag 'block'");
  EXPECT_EQ(error_of("{% %}"), "t.j2:1:4: expected a tag name but found '%}'");
}

TEST(ParseErrors, UnclosedBlocksPointAtTheirOpening) {
  EXPECT_EQ(error_of("a\n  {% if x %}\nb\n"), "t.j2:2:6: unclosed 'if' block: expected '{% endif %}' before the end of the template");
  EXPECT_EQ(error_of("{% for x in y %}{% if x %}{% endif %}"),
            "t.j2:1:4: unclosed 'for' block: expected '{% endfor %}' before the end of the template");
  EXPECT_EQ(error_of("{% macro m() %}x"),
            "t.j2:1:4: unclosed 'macro' block: expected '{% endmacro %}' before the end of the template");
  EXPECT_EQ(error_of("{% set x %}x"), "t.j2:1:4: unclosed 'set' block: expected '{% endset %}' before the end of the template");
  EXPECT_EQ(error_of("{% filter upper %}x"),
            "t.j2:1:4: unclosed 'filter' block: expected '{% endfilter %}' before the end of the template");
  EXPECT_EQ(error_of("{% if a %}{% else %}"), "t.j2:1:4: unclosed 'if' block: expected '{% endif %}' before the end of the template");
}

TEST(ParseErrors, StrayClosingTags) {
  EXPECT_EQ(error_of("x\n{% endif %}"), "t.j2:2:4: stray '{% endif %}': no 'if' block is open");
  EXPECT_EQ(error_of("{% endfor %}"), "t.j2:1:4: stray '{% endfor %}': no 'for' block is open");
  EXPECT_EQ(error_of("{% else %}"), "t.j2:1:4: stray '{% else %}': no 'if' or 'for' block is open");
  EXPECT_EQ(error_of("{% elif x %}"), "t.j2:1:4: stray '{% elif %}': no 'if' block is open");
  EXPECT_EQ(error_of("{% endmacro %}"), "t.j2:1:4: stray '{% endmacro %}': no 'macro' block is open");
  EXPECT_EQ(error_of("{% endraw %}"), "t.j2:1:4: stray '{% endraw %}': no 'raw' block is open");
  EXPECT_EQ(error_of("{% for x in y %}{% endif %}{% endfor %}"),
            "t.j2:1:20: stray '{% endif %}': no 'if' block is open");
}

TEST(ParseErrors, MismatchedClosingTags) {
  EXPECT_EQ(error_of("{% if a %}\n{% for x in y %}\n{% endif %}"),
            "t.j2:3:4: unexpected '{% endif %}': the 'for' block opened at line 2 is still open (close it with '{% endfor %}')");
  EXPECT_EQ(error_of("{% if a %}{% for x in y %}{% elif b %}"),
            "t.j2:1:30: unexpected '{% elif %}': the 'for' block opened at line 1 is still open (close it with '{% endfor %}')");
}

TEST(ParseErrors, ElseAfterElse) {
  EXPECT_EQ(error_of("{% if a %}1{% else %}2{% else %}3{% endif %}"), "t.j2:1:26: 'else' after 'else' in the same 'if' block");
  EXPECT_EQ(error_of("{% if a %}1{% else %}2{% elif b %}3{% endif %}"), "t.j2:1:26: 'elif' after 'else' in the same 'if' block");
  EXPECT_EQ(error_of("{% for x in y %}{% else %}{% else %}{% endfor %}"),
            "t.j2:1:30: 'else' after 'else' in the same 'for' block");
}

TEST(ParseErrors, ExpectedTokens) {
  EXPECT_EQ(error_of("{% if x y %}"), "t.j2:1:9: expected '%}' but found 'y'");
  EXPECT_EQ(error_of("{{ a b }}"), "t.j2:1:6: expected '}}' but found 'b'");
  EXPECT_EQ(error_of("{{ }}"), "t.j2:1:4: expected an expression but found '}}'");
  EXPECT_EQ(error_of("{{ 1 + }}"), "t.j2:1:8: expected an expression but found '}}'");
  EXPECT_EQ(error_of("{{ (1 + 2 }}"), "t.j2:1:11: expected ')' but found '}}'");
  EXPECT_EQ(error_of("{{ [1, 2 }}"), "t.j2:1:10: expected ',' or ']' but found '}}'");
  EXPECT_EQ(error_of("{{ x 'str' }}"), "t.j2:1:6: expected '}}' but found '\"str\"'");
  EXPECT_EQ(error_of("{% for x of y %}"), "t.j2:1:10: expected 'in' but found 'of'");
  EXPECT_EQ(error_of("{% for 1 in y %}"), "t.j2:1:8: expected a loop variable name but found '1'");
  EXPECT_EQ(error_of("{% set x + 1 %}"), "t.j2:1:10: expected '=' or '%}' but found '+'");
  EXPECT_EQ(error_of("{% endif x %}", {}), "t.j2:1:4: stray '{% endif %}': no 'if' block is open");
  EXPECT_EQ(error_of("{% if a %}{% endif x %}"), "t.j2:1:20: expected '%}' but found 'x'");
  EXPECT_EQ(error_of("{{ a. }}"), "t.j2:1:7: expected an attribute name but found '}}'");
  EXPECT_EQ(error_of("{{ a | }}"), "t.j2:1:8: expected a filter name but found '}}'");
  EXPECT_EQ(error_of("{{ a is }}"), "t.j2:1:9: expected a test name but found '}}'");
  EXPECT_EQ(error_of("{{ 1 if x }}"), "t.j2:1:11: expected 'else' but found '}}'");
  EXPECT_EQ(error_of("{{ f(1 2) }}"), "t.j2:1:8: expected ',' or ')' but found '2'");
  EXPECT_EQ(error_of("{{ f(a=1, 2) }}"), "t.j2:1:11: positional argument after keyword argument");
  EXPECT_EQ(error_of("{% include 'x' ignore %}"), "t.j2:1:23: expected 'missing' but found '%}'");
  EXPECT_EQ(error_of("{% raw x %}{% endraw %}"), "t.j2:1:8: expected '%}' but found 'x'");
  EXPECT_EQ(error_of("{% macro m(a b) %}{% endmacro %}"), "t.j2:1:14: expected ',' or ')' but found 'b'");
  EXPECT_EQ(error_of("{% macro (a) %}{% endmacro %}"), "t.j2:1:10: expected a macro name but found '('");
  EXPECT_EQ(error_of("{{ 99999999999999999999 }}"), "t.j2:1:4: integer literal '99999999999999999999' is too large");
}

TEST(ParseErrors, MacroDefinitions) {
  EXPECT_EQ(error_of("{% macro m(a, a) %}{% endmacro %}"), "t.j2:1:15: macro 'm' has two parameters named 'a'");
  EXPECT_EQ(error_of("{% macro m(a=1, b) %}{% endmacro %}"),
            "t.j2:1:17: macro 'm': parameter 'b' needs a default value (it follows a parameter with one)");
}

TEST(ParseErrors, UnknownFilterAndTest) {
  EXPECT_EQ(error_of("{{ x | indnt(4) }}"), "t.j2:1:8: unknown filter 'indnt' (did you mean 'indent'?)");
  EXPECT_EQ(error_of("{{ x | uper }}"), "t.j2:1:8: unknown filter 'uper' (did you mean 'upper'?)");
  EXPECT_EQ(error_of("{{ x | frobnicate }}"), "t.j2:1:8: unknown filter 'frobnicate'");
  EXPECT_EQ(error_of("{% filter indnt %}{% endfilter %}"), "t.j2:1:11: unknown filter 'indnt' (did you mean 'indent'?)");
  EXPECT_EQ(error_of("{{ x is defind }}"), "t.j2:1:9: unknown test 'defind' (did you mean 'defined'?)");
  EXPECT_EQ(error_of("{{ x is not nonee }}"), "t.j2:1:13: unknown test 'nonee' (did you mean 'none'?)");
}

TEST(ParseErrors, FilterArgumentCounts) {
  EXPECT_EQ(error_of("{{ x | upper(1) }}"), "t.j2:1:8: filter 'upper' takes no arguments, got 1");
  EXPECT_EQ(error_of("{{ x | join(',', 2) }}"), "t.j2:1:8: filter 'join' takes at most 1 argument, got 2");
  EXPECT_EQ(error_of("{{ x | indent(1, 2, 3, 4) }}"), "t.j2:1:8: filter 'indent' takes at most 3 arguments, got 4");
  EXPECT_EQ(error_of("{{ x | replace('a') }}"), "t.j2:1:8: filter 'replace' is missing argument 'new'");
  EXPECT_EQ(error_of("{{ x | indent(widht=2) }}"), "t.j2:1:15: filter 'indent' has no argument named 'widht' (did you mean 'width'?)");
  EXPECT_EQ(error_of("{{ x | indent(2, width=2) }}"), "t.j2:1:18: filter 'indent' got argument 'width' twice");
  EXPECT_EQ(error_of("{{ x is divisibleby }}"), "t.j2:1:9: test 'divisibleby' is missing argument 'num'");
  EXPECT_EQ(error_of("{{ x is even(2) }}"), "t.j2:1:9: test 'even' takes no arguments, got 1");
}

TEST(ParseErrors, NestingLimits) {
  std::string deep_parentheses = "{{ " + std::string(100, '(') + "1" + std::string(100, ')') + " }}";
  EXPECT_EQ(error_of(deep_parentheses), "t.j2:1:68: expression is nested too deeply (more than 64 levels)");
  std::string long_chain = "{{ 1";
  for (int i = 0; i < 100; ++i) long_chain += " + 1";
  long_chain += " }}";
  EXPECT_EQ(error_of(long_chain), "t.j2:1:258: expression is nested too deeply (more than 64 levels)");
  std::string minus_chain = "{{ " + std::string(100, '-') + "1 }}";
  EXPECT_EQ(error_of(minus_chain), "t.j2:1:67: expression is nested too deeply (more than 64 levels)");
  std::string deep_blocks;
  for (int i = 0; i < 100; ++i) deep_blocks += "{% if true %}";
  EXPECT_EQ(error_of(deep_blocks), "t.j2:1:836: blocks are nested too deeply (more than 64 levels)");
}

// ---- rendering ----

TEST(RenderErrors, UndefinedVariableIsAnError) {
  EXPECT_EQ(error_of("{{ hed_dim }}", {{"head_dim", 64}}), "t.j2:1:4: undefined variable 'hed_dim' (did you mean 'head_dim'?)");
  EXPECT_EQ(error_of("a\n{{ nothing_like_it }}", {{"head_dim", 64}}), "t.j2:2:4: undefined variable 'nothing_like_it'");
  EXPECT_EQ(error_of("{% for item in xs %}{{ iten }}{% endfor %}", {{"xs", {1}}}),
            "t.j2:1:24: undefined variable 'iten' (did you mean 'item'?)");
  EXPECT_EQ(error_of("{% if flag %}x{% endif %}"), "t.j2:1:7: undefined variable 'flag'");
  EXPECT_EQ(error_of("{{ x | upper }}"), "t.j2:1:4: undefined variable 'x'");
  EXPECT_EQ(error_of("{{ x | lower | default('a') }}"), "t.j2:1:4: undefined variable 'x'");  // default guards only its input
  EXPECT_EQ(error_of("{% for i in [1] %}{% set inner = 1 %}{% endfor %}{{ inner }}"),
            "t.j2:1:53: undefined variable 'inner'");
}

TEST(RenderErrors, MissingAttributesAndKeys) {
  Json context = {{"spec", {{"block_m", 128}, {"dims", {1, 2, 3}}}}, {"n", 5}};
  EXPECT_EQ(error_of("{{ spec.blok_m }}", context), "t.j2:1:9: 'spec' has no attribute 'blok_m' (did you mean 'block_m'?)");
  EXPECT_EQ(error_of("{{ spec['blok_m'] }}", context), "t.j2:1:9: 'spec' has no key 'blok_m' (did you mean 'block_m'?)");
  EXPECT_EQ(error_of("{{ spec[0] }}", context), "t.j2:1:9: 'spec' has no key 0 (keys are strings)");
  EXPECT_EQ(error_of("{{ n.x }}", context), "t.j2:1:6: 'n' has no attribute 'x' (it is an int, not an object)");
  EXPECT_EQ(error_of("{{ spec.dims[3] }}", context), "t.j2:1:14: index 3 is out of range for 'spec.dims' (length 3)");
  EXPECT_EQ(error_of("{{ spec.dims[-4] }}", context), "t.j2:1:14: index -4 is out of range for 'spec.dims' (length 3)");
  EXPECT_EQ(error_of("{{ spec.dims['a'] }}", context), "t.j2:1:14: index into 'spec.dims' must be an int, got string");
  EXPECT_EQ(error_of("{{ n[0] }}", context), "t.j2:1:6: 'n' cannot be indexed (it is an int)");
  EXPECT_EQ(error_of("{{ spec.dims.x }}", context), "t.j2:1:14: 'spec.dims' has no attribute 'x' (it is a list, not an object)");
  EXPECT_EQ(error_of("{{ spec.dims[0].x }}", context), "t.j2:1:17: 'spec.dims[0]' has no attribute 'x' (it is an int, not an object)");
}

TEST(RenderErrors, FilterTypes) {
  Json context = {{"n", 5}, {"xs", {1}}, {"s", "text"}};
  EXPECT_EQ(error_of("{{ n | upper }}", context), "t.j2:1:8: filter 'upper' expects a string, got int");
  EXPECT_EQ(error_of("{{ n | join(',') }}", context), "t.j2:1:8: filter 'join' expects a list, got int");
  EXPECT_EQ(error_of("{{ xs | join(1) }}", context), "t.j2:1:9: filter 'join' argument 'd' must be a string, got int");
  EXPECT_EQ(error_of("{{ s | indent(2.5) }}", context), "t.j2:1:8: filter 'indent' argument 'width' must be an int or a string, got float");
  EXPECT_EQ(error_of("{{ s | indent(2, 'yes') }}", context), "t.j2:1:8: filter 'indent' argument 'first' must be a bool, got string");
  EXPECT_EQ(error_of("{{ xs | indent(2) }}", context), "t.j2:1:9: filter 'indent' expects a string, got list");
  EXPECT_EQ(error_of("{{ n | length }}", context), "t.j2:1:8: filter 'length' expects a list, a string or an object, got int");
  EXPECT_EQ(error_of("{{ s | int }}", context), "t.j2:1:8: filter 'int' cannot convert 'text' to an int");
  EXPECT_EQ(error_of("{{ s | float }}", context), "t.j2:1:8: filter 'float' cannot convert 'text' to a float");
  EXPECT_EQ(error_of("{{ [] | first }}", context), "t.j2:1:9: filter 'first' got an empty list");
  EXPECT_EQ(error_of("{{ s | replace('', 'x') }}", context), "t.j2:1:8: filter 'replace' argument 'old' must not be empty");
  EXPECT_EQ(error_of("{{ s is even }}", context), "t.j2:1:9: test 'even' expects an int, got string");
  EXPECT_EQ(error_of("{{ 4 is divisibleby(0) }}", context), "t.j2:1:9: test 'divisibleby' argument 'num' must not be 0");
}

TEST(RenderErrors, IteratingANonList) {
  EXPECT_EQ(error_of("{% for x in n %}{% endfor %}", {{"n", 5}}), "t.j2:1:13: 'for' needs a list or an object, got int");
  EXPECT_EQ(error_of("{% for x in 'abc' %}{% endfor %}"), "t.j2:1:13: 'for' needs a list or an object, got string");
  EXPECT_EQ(error_of("{% for a, b in [1] %}{% endfor %}"), "t.j2:1:16: cannot unpack an int into 2 loop variables");
  EXPECT_EQ(error_of("{% for a, b in [[1, 2, 3]] %}{% endfor %}"),
            "t.j2:1:16: cannot unpack a list of 3 values into 2 loop variables");
}

TEST(RenderErrors, Macros) {
  const std::string m = "{% macro tile(m, n=1) %}{{ m }}{{ n }}{% endmacro %}";
  EXPECT_EQ(error_of(m + "{{ tlie(1) }}"), "t.j2:1:56: undefined macro 'tlie' (did you mean 'tile'?)");
  EXPECT_EQ(error_of("{{ nothing(1) }}"), "t.j2:1:4: undefined macro 'nothing'");
  EXPECT_EQ(error_of(m + "{{ tile() }}"), "t.j2:1:56: macro 'tile' is missing argument 'm'");
  EXPECT_EQ(error_of(m + "{{ tile(1, 2, 3) }}"), "t.j2:1:56: macro 'tile' takes at most 2 arguments, got 3");
  EXPECT_EQ(error_of(m + "{{ tile(1, k=2) }}"), "t.j2:1:64: macro 'tile' has no argument named 'k'");
  EXPECT_EQ(error_of(m + "{{ tile(1, m=2) }}"), "t.j2:1:64: macro 'tile' got argument 'm' twice");
  EXPECT_EQ(error_of("{{ x(1) }}", {{"x", "str"}}), "t.j2:1:4: 'x' is a string, not a macro");
  EXPECT_EQ(error_of(m + "{{ tile }}"), "t.j2:1:56: cannot use macro 'tile' as output (call it as 'tile(...)')");
  EXPECT_EQ(error_of(m + "{{ tile + 1 }}"), "t.j2:1:56: cannot use macro 'tile' with '+' (call it as 'tile(...)')");
  EXPECT_EQ(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
            "t.j2:1:19: macro calls are nested too deeply (more than 64 levels): does 'f' call itself without end?");
  EXPECT_EQ(error_of("{% macro f() %}\n{{ oops }}{% endmacro %}{{ f() }}"), "t.j2:2:4: undefined variable 'oops'");
}

TEST(RenderErrors, OtherCalls) {
  Json context = {{"o", {{"a", 1}}}, {"xs", {1}}};
  EXPECT_EQ(error_of("{{ o.itms() }}", context), "t.j2:1:6: unknown method 'itms' (did you mean 'items'?)");
  EXPECT_EQ(error_of("{{ o.upper() }}", context),
            "t.j2:1:6: unknown method 'upper': only items(), keys() and values() can be called on a value");
  EXPECT_EQ(error_of("{{ xs.items() }}", context), "t.j2:1:7: 'items()' needs an object, got list");
  EXPECT_EQ(error_of("{{ o.keys(1) }}", context), "t.j2:1:6: 'keys()' takes no arguments, got 1");
  EXPECT_EQ(error_of("{{ (1)(2) }}", context), "t.j2:1:5: only macros, range() and the methods items(), keys() and values() can be called");
  EXPECT_EQ(error_of("{{ range() }}"), "t.j2:1:4: range() takes 1 to 3 arguments, got 0");
  EXPECT_EQ(error_of("{{ range(1.5) }}"), "t.j2:1:10: range() arguments must be ints, got float");
  EXPECT_EQ(error_of("{{ range(1, 5, 0) }}"), "t.j2:1:4: range() step must not be zero");
  EXPECT_EQ(error_of("{{ range(stop=5) }}"), "t.j2:1:10: range() takes no keyword arguments");
  EXPECT_EQ(error_of("{{ range(10000000) }}"), "t.j2:1:4: range() would produce more than 1000000 items");
}

// Issue 17 item 4: each range() was bounded but nested loops multiplied without end; the total
// iterations and the bytes written in one render are bounded, with a located error.
TEST(RenderErrors, NestedLoopsAndOutputAreBounded) {
  EXPECT_EQ(error_of("{% for i in range(1000000) %}\n{% for j in range(1000000) %}{% endfor %}{% endfor %}"),
            "t.j2:2:13: loops run more than 100000 iterations in all (nested loops multiply)");
  EXPECT_EQ(error_of("{% set s = 'x' * 100000 %}{% for i in range(1000) %}{{ s }}{% endfor %}"),
            "t.j2:1:53: the template writes more than 67108864 bytes (a loop or macro that never stops growing?)");
  // Captured text counts too: building a large string with `set` blocks is no way around it.
  EXPECT_EQ(error_of("{% set s = 'x' * 100000 %}{% for i in range(1000) %}{% set t %}{{ s }}{% endset %}{% endfor %}"),
            "t.j2:1:64: the template writes more than 67108864 bytes (a loop or macro that never stops growing?)");
}

TEST(RenderErrors, Arithmetic) {
  EXPECT_EQ(error_of("{{ 1 / 0 }}"), "t.j2:1:6: division by zero");
  EXPECT_EQ(error_of("{{ 1 // 0 }}"), "t.j2:1:6: division by zero");
  EXPECT_EQ(error_of("{{ 1.5 / 0.0 }}"), "t.j2:1:8: division by zero");
  EXPECT_EQ(error_of("{{ 1 % 0 }}"), "t.j2:1:6: modulo by zero");
  EXPECT_EQ(error_of("{{ 0 ** -1 }}"), "t.j2:1:6: 0 cannot be raised to a negative power");
  EXPECT_EQ(error_of("{{ 'a' + 1 }}"), "t.j2:1:8: cannot apply '+' to string and int");
  EXPECT_EQ(error_of("{{ [1] - [1] }}"), "t.j2:1:8: cannot apply '-' to list and list");
  EXPECT_EQ(error_of("{{ -'a' }}"), "t.j2:1:4: cannot apply unary '-' to string");
  EXPECT_EQ(error_of("{{ 9223372036854775807 + 1 }}"), "t.j2:1:24: integer overflow in '+'");
  EXPECT_EQ(error_of("{{ 2 ** 64 }}"), "t.j2:1:6: integer overflow in '**'");
  EXPECT_EQ(error_of("{{ 'ab' * 100000000 }}"), "t.j2:1:9: '*' would repeat a string to more than 16777216 items");
}

TEST(RenderErrors, ComparisonsAndMembership) {
  EXPECT_EQ(error_of("{{ 1 < 'a' }}"), "t.j2:1:6: cannot compare int and string with '<'");
  EXPECT_EQ(error_of("{{ 1 < 2 < 'a' }}"), "t.j2:1:10: cannot compare int and string with '<'");
  EXPECT_EQ(error_of("{{ 1 in 2 }}"), "t.j2:1:6: 'in' needs a list, a string or an object on the right, got int");
  EXPECT_EQ(error_of("{{ 1 not in 'abc' }}"), "t.j2:1:6: 'not in' with a string on the right needs a string on the left, got int");
}

TEST(RenderErrors, ContextMustBeAnObject) {
  EXPECT_EQ(error_of("x", Json::array({1})), "t.j2:1:1: the render context must be a JSON object, got list");
}

TEST(RenderErrors, IncludeWithoutEnvironment) {
  EXPECT_EQ(error_of("a\n  {% include 'common.j2' %}"),
            "t.j2:2:6: cannot include 'common.j2': no Environment to load it from (render through an Environment)");
  EXPECT_EQ(error_of("{% include 5 %}"), "t.j2:1:12: include needs a template name string, got int");
}

}  // namespace
}  // namespace flexjit::tmpl
