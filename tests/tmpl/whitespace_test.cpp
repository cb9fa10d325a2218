// Whitespace handling: trim_blocks, lstrip_blocks, keep_trailing_newline and the `-` / `+`
// markers. Expected outputs were checked against Jinja 3.1 with the same flags.

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace flexjit::tmpl {
namespace {

using test::render;

Options flags(bool trim_blocks, bool lstrip_blocks, bool keep_trailing_newline = true) {
  Options options;
  options.trim_blocks = trim_blocks;
  options.lstrip_blocks = lstrip_blocks;
  options.keep_trailing_newline = keep_trailing_newline;
  return options;
}

const char* const kLoop =
    "<ul>\n"
    "  {% for x in xs %}\n"
    "    <li>{{ x }}</li>\n"
    "  {% endfor %}\n"
    "</ul>\n";
const Json kTwoItems = {{"xs", {1, 2}}};

TEST(Whitespace, DefaultsTrimAndLstripBlocks) {
  Options defaults;
  EXPECT_TRUE(defaults.trim_blocks);
  EXPECT_TRUE(defaults.lstrip_blocks);
  EXPECT_TRUE(defaults.keep_trailing_newline);
  EXPECT_EQ(render(kLoop, kTwoItems), "<ul>\n    <li>1</li>\n    <li>2</li>\n</ul>\n");
}

TEST(Whitespace, BothOffKeepsTagLinesAsTheyAre) {
  EXPECT_EQ(render(kLoop, kTwoItems, flags(false, false)),
            "<ul>\n  \n    <li>1</li>\n  \n    <li>2</li>\n  \n</ul>\n");
}

TEST(Whitespace, TrimBlocksAloneLeavesTheIndentation) {
  EXPECT_EQ(render(kLoop, kTwoItems, flags(true, false)), "<ul>\n      <li>1</li>\n      <li>2</li>\n  </ul>\n");
}

TEST(Whitespace, LstripBlocksAloneLeavesTheNewline) {
  EXPECT_EQ(render(kLoop, kTwoItems, flags(false, true)), "<ul>\n\n    <li>1</li>\n\n    <li>2</li>\n\n</ul>\n");
}

TEST(Whitespace, TrimBlocksRemovesOnlyOneNewline) {
  EXPECT_EQ(render("{% if true %}\n\nx\n{% endif %}\n\n"), "\nx\n\n");
  EXPECT_EQ(render("{% if true %}  \nx{% endif %}"), "  \nx");  // not a newline right after the tag
}

TEST(Whitespace, LstripOnlyWhenTheTagStartsTheLine) {
  EXPECT_EQ(render("x  {% if true %}y{% endif %}"), "x  y");
  EXPECT_EQ(render("  \t{% if true %}y{% endif %}"), "y");
  // Spaces right after a tag start a line only when the tag's trimmed newline ended the line.
  EXPECT_EQ(render("{% if true %}\n  {% if true %}\nx{% endif %}{% endif %}\n"), "x");
  EXPECT_EQ(render("{% if true %}  {% if true %}\nx{% endif %}{% endif %}\n"), "  x");
  EXPECT_EQ(render("  {{ 1 }}"), "  1");  // never before {{
}

TEST(Whitespace, CommentsAreTrimmedLikeBlocks) {
  EXPECT_EQ(render("a\n   {# note #}\nb\n"), "a\nb\n");
  EXPECT_EQ(render("a\n   {# note #}\nb\n", {}, flags(false, false)), "a\n   \nb\n");
}

TEST(Whitespace, MinusStripsAllWhitespaceOnItsSide) {
  EXPECT_EQ(render("a  \n {%- if true -%}  \n b \n {%- endif -%} \n c"), "abc");
  EXPECT_EQ(render("a\n   {{- x -}}\n  b\n", {{"x", 5}}), "a5b\n");
  EXPECT_EQ(render("a \n {#- c -#} \n b"), "ab");
  EXPECT_EQ(render("[ {{- 1 }} ]"), "[1 ]");
}

TEST(Whitespace, PlusDisablesTrimAndLstripForOneTag) {
  EXPECT_EQ(render("  {%+ if true %}\n  y\n  {% endif +%}\n  z\n"), "    y\n\n  z\n");
}

TEST(Whitespace, MinusWorksWithTheOptionsOff) {
  EXPECT_EQ(render("a\n  {%- if true %}b{% endif -%}\n  c", {}, flags(false, false)), "abc");
}

TEST(Whitespace, KeepTrailingNewlineOff) {
  EXPECT_EQ(render("x\n", {}, flags(true, true, false)), "x");
  EXPECT_EQ(render("x\n\n", {}, flags(true, true, false)), "x\n");
  EXPECT_EQ(render("x\n", {}, flags(true, true, true)), "x\n");
}

TEST(Whitespace, WindowsLineEndingsBecomeNewlines) {
  EXPECT_EQ(render("a\r\n{% if true %}\r\nb\r\n{% endif %}\r\n"), "a\nb\n");
  EXPECT_EQ(render("a\rb"), "a\nb");
}

TEST(Whitespace, RawKeepsNewlineAfterOpeningLikeJinja) {
  EXPECT_EQ(render("  {% raw %}\n  {{ x }}\n  {% endraw %}\nz\n"), "\n  {{ x }}\nz\n");
}

TEST(Whitespace, MacroBodiesFollowTheSameRules) {
  EXPECT_EQ(render("{% macro m() -%}\n  body\n{%- endmacro %}\n[{{ m() }}]\n"), "[body]\n");
  EXPECT_EQ(render("{% macro m(n) %}\n  line {{ n }}\n{% endmacro %}\n{{ m(1) }}{{ m(2) -}}\n!\n"),
            "  line 1\n  line 2\n!\n");
}

TEST(Whitespace, NestedBlocksRenderCleanLines) {
  const char* text =
      "{% for i in range(3) %}\n"
      "  {% if i is even %}\n"
      "    even {{ i }}\n"
      "  {% else %}\n"
      "    odd {{ i }}\n"
      "  {% endif %}\n"
      "{% endfor %}\n";
  EXPECT_EQ(render(text), "    even 0\n    odd 1\n    even 2\n");
}

}  // namespace
}  // namespace flexjit::tmpl
