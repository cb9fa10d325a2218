// Unit tests of the engine's internal pieces: tokens, value printing, operators, suggestions.

#include <gtest/gtest.h>

#include <limits>

#include "tmpl/filters.hpp"
#include "tmpl/lexer.hpp"
#include "tmpl/operators.hpp"
#include "tmpl/suggest.hpp"
#include "tmpl/value.hpp"

namespace flexjit::tmpl {
namespace {

// ---- lexer ----

std::vector<std::string> kinds_and_texts(const std::string& text, Options options = {}) {
  std::vector<std::string> out;
  for (const Token& token : tokenize("t", text, options)) {
    const char* kind = "";
    switch (token.kind) {
      case TokenKind::Text: kind = "text"; break;
      case TokenKind::VariableBegin: kind = "{{"; break;
      case TokenKind::VariableEnd: kind = "}}"; break;
      case TokenKind::BlockBegin: kind = "{%"; break;
      case TokenKind::BlockEnd: kind = "%}"; break;
      case TokenKind::Name: kind = "name"; break;
      case TokenKind::Integer: kind = "int"; break;
      case TokenKind::Float: kind = "float"; break;
      case TokenKind::String: kind = "string"; break;
      case TokenKind::Operator: kind = "op"; break;
      case TokenKind::End: kind = "end"; break;
    }
    out.push_back(std::string(kind) + ":" + token.text);
  }
  return out;
}

TEST(Lexer, SplitsTextTagsAndExpressionTokens) {
  EXPECT_EQ(kinds_and_texts("a{{ x.y[0] | f(1.5, 'q') }}b{% if n // 2 >= 1_0 %}"),
            (std::vector<std::string>{"text:a", "{{:{{", "name:x", "op:.", "name:y", "op:[", "int:0", "op:]", "op:|",
                                      "name:f", "op:(", "float:1.5", "op:,", "string:q", "op:)", "}}:}}", "text:b",
                                      "{%:{%", "name:if", "name:n", "op://", "int:2", "op:>=", "int:10", "%}:%}", "end:"}));
}

TEST(Lexer, NumbersAndExponents) {
  EXPECT_EQ(kinds_and_texts("{{ 1e3 2E-2 3.25 4 5.e }}"),
            (std::vector<std::string>{"{{:{{", "float:1e3", "float:2e-2", "float:3.25", "int:4", "int:5", "op:.",
                                      "name:e", "}}:}}", "end:"}));
}

TEST(Lexer, CommentsVanishAndPositionsAreOneBased) {
  auto tokens = tokenize("t", "ab\n{# c #}\n  {{ xyz }}", {});
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_EQ(tokens[0].text, "ab\n");
  EXPECT_EQ(tokens[1].text, "  ");
  EXPECT_EQ(tokens[2].kind, TokenKind::VariableBegin);
  EXPECT_EQ(tokens[2].pos.line, 3);
  EXPECT_EQ(tokens[2].pos.column, 3);
  EXPECT_EQ(tokens[3].pos.column, 6);
}

TEST(Lexer, DescribesTokensForMessages) {
  EXPECT_EQ(describe(Token{TokenKind::Name, "x", {}}), "'x'");
  EXPECT_EQ(describe(Token{TokenKind::String, "s", {}}), "'\"s\"'");
  EXPECT_EQ(describe(Token{TokenKind::BlockEnd, "%}", {}}), "'%}'");
  EXPECT_EQ(describe(Token{TokenKind::End, "", {}}), "the end of the template");
}

// ---- values ----

TEST(Values, FloatsPrintLikePythonRepr) {
  EXPECT_EQ(format_float(1.0), "1.0");
  EXPECT_EQ(format_float(0.1), "0.1");
  EXPECT_EQ(format_float(-2.5), "-2.5");
  EXPECT_EQ(format_float(1e16), "1e+16");
  EXPECT_EQ(format_float(1e15), "1000000000000000.0");
  EXPECT_EQ(format_float(123456789.125), "123456789.125");
  EXPECT_EQ(format_float(1e-4), "0.0001");
  EXPECT_EQ(format_float(1.5e-5), "1.5e-05");
  EXPECT_EQ(format_float(1e300), "1e+300");
  EXPECT_EQ(format_float(5e-324), "5e-324");
  EXPECT_EQ(format_float(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(format_float(0.0), "0.0");
  EXPECT_EQ(format_float(-0.0), "-0.0");
  EXPECT_EQ(format_float(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_float(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(format_float(std::numeric_limits<double>::quiet_NaN()), "nan");
}

TEST(Values, FloatsRoundTrip) {
  for (double value : {0.1, 1.0 / 3, 2.0 / 3, 1e-7, 123.456, 6.02214076e23, 0.18033688011112042}) {
    EXPECT_EQ(std::stod(format_float(value)), value) << format_float(value);
  }
}

TEST(Values, PythonRepr) {
  EXPECT_EQ(python_repr(Json::parse(R"([null, true, false, 1, -2, 1.5, "s", [], {}])")),
            "[None, True, False, 1, -2, 1.5, 's', [], {}]");
  EXPECT_EQ(python_repr("it's"), "\"it's\"");
  EXPECT_EQ(python_repr("both ' and \""), "'both \\' and \"'");
  EXPECT_EQ(python_repr("tab\tnew\nline\\"), "'tab\\tnew\\nline\\\\'");
  EXPECT_EQ(python_repr(std::string("\x01", 1)), "'\\x01'");
  EXPECT_EQ(to_output("raw 'text'"), "raw 'text'");
}

TEST(Values, TruthinessFollowsPython) {
  for (const char* falsy : {"null", "false", "0", "0.0", "\"\"", "[]", "{}"}) EXPECT_FALSE(truthy(Json::parse(falsy))) << falsy;
  for (const char* truthy_value : {"true", "1", "-1", "0.5", "\"0\"", "[0]", "{\"a\":0}"})
    EXPECT_TRUE(truthy(Json::parse(truthy_value))) << truthy_value;
}

TEST(Values, TypeNames) {
  EXPECT_EQ(type_name(Json()), "none");
  EXPECT_EQ(type_name(Json(1u)), "int");
  EXPECT_EQ(type_name(Json(1.5)), "float");
  EXPECT_EQ(type_name(Json::object()), "object");
  EXPECT_EQ(type_name_with_article("int"), "an int");
  EXPECT_EQ(type_name_with_article("list"), "a list");
}

TEST(Values, ViewsAndOwnedCopies) {
  Json list = {1, 2};
  Value view = Value::view_of(list);
  EXPECT_EQ(&view.json(), &list);
  EXPECT_EQ(&view.part(list[1]).json(), &list[1]);  // a view's parts are views
  Value owned = view.owned();
  EXPECT_NE(&owned.json(), &list);
  EXPECT_NE(&owned.part(owned.json()[1]).json(), &owned.json()[1]);  // an owned value's parts are copies
  EXPECT_EQ(owned.json(), list);
}

TEST(Values, LargeUnsignedIsAnErrorInArithmetic) {
  EXPECT_EQ(as_int(Json(5u)), 5);
  EXPECT_THROW(as_int(Json(std::numeric_limits<std::uint64_t>::max())), ValueError);
}

// ---- operators ----

TEST(Operators, IntegerOverflowIsDetected) {
  const Json max = std::numeric_limits<std::int64_t>::max();
  const Json min = std::numeric_limits<std::int64_t>::min();
  EXPECT_THROW(apply_binary(BinaryOp::Add, max, 1), ValueError);
  EXPECT_THROW(apply_binary(BinaryOp::Subtract, min, 1), ValueError);
  EXPECT_THROW(apply_binary(BinaryOp::Multiply, max, 2), ValueError);
  EXPECT_THROW(apply_binary(BinaryOp::FloorDivide, min, -1), ValueError);
  EXPECT_THROW(apply_unary(UnaryOp::Negate, min), ValueError);
  EXPECT_EQ(apply_binary(BinaryOp::Modulo, min, -1), 0);
  EXPECT_EQ(apply_binary(BinaryOp::Power, 2, 62), std::int64_t{1} << 62);
}

TEST(Operators, UnsignedComparesByValue) {
  const Json huge = std::numeric_limits<std::uint64_t>::max();
  EXPECT_TRUE(apply_compare(CompareOp::Greater, huge, Json(-1)));
  EXPECT_TRUE(apply_compare(CompareOp::Less, Json(1), huge));
}

// ---- suggestions ----

TEST(Suggest, EditDistanceCountsSwapsAsOneEdit) {
  EXPECT_EQ(edit_distance("indent", "indent"), 0u);
  EXPECT_EQ(edit_distance("indnt", "indent"), 1u);
  EXPECT_EQ(edit_distance("idnent", "indent"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Suggest, ClosestNameOnlyForLikelyTypos) {
  const std::vector<std::string> names = {"head_dim", "head_dim_v", "block_m", "block_n"};
  EXPECT_EQ(closest_name("hed_dim", names), "head_dim");
  EXPECT_EQ(closest_name("blokc_m", names), "block_m");
  EXPECT_EQ(closest_name("block_k", names), "block_m");  // ties go to the first alphabetically
  EXPECT_EQ(closest_name("seq_len", names), "");
  EXPECT_EQ(closest_name("x", {"y"}), "");  // one-letter names are not typos of each other
  EXPECT_EQ(did_you_mean("uper", filter_names()), " (did you mean 'upper'?)");
  EXPECT_EQ(did_you_mean("zzzz", filter_names()), "");
}

TEST(Filters, TablesListEveryName) {
  for (const auto& name : filter_names()) EXPECT_NE(find_filter(name), nullptr) << name;
  for (const auto& name : test_names()) EXPECT_NE(find_test(name), nullptr) << name;
  EXPECT_EQ(find_filter("nope"), nullptr);
  EXPECT_EQ(indent_lines("a\nb\n", "  ", false, false), "a\n  b\n");
  EXPECT_EQ(indent_lines("", "  ", true, false), "  ");
}

}  // namespace
}  // namespace flexjit::tmpl
