#pragma once
// The parsed form of a template. The parser builds it once; the renderer only reads it, so one
// tree serves any number of concurrent renders.

#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tmpl/lexer.hpp"
#include "tmpl/template.hpp"

namespace flexjit::tmpl {

struct FilterSpec;
struct TestSpec;

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// ---- expressions ----

struct LiteralExpr {
  Json value;
};
struct NameExpr {
  std::string name;
};
struct ListExpr {
  std::vector<ExprPtr> items;
};
/// `object.attribute` (also `list.0`, read as an index).
struct AttributeExpr {
  ExprPtr object;
  std::string attribute;
};
/// `object[key]`.
struct IndexExpr {
  ExprPtr object;
  ExprPtr key;
};
struct KeywordArg {
  std::string name;
  Position pos;
  ExprPtr value;
};
struct CallArgs {
  std::vector<ExprPtr> positional;
  std::vector<KeywordArg> keyword;
};
/// `callee(args)`: a macro, `range(...)`, or one of the methods `items()`, `keys()`, `values()`.
struct CallExpr {
  ExprPtr callee;
  CallArgs args;
};
/// One filter with its arguments bound to the filter's parameters at parse time.
struct FilterApplication {
  const FilterSpec* filter;
  Position pos;                // of the filter's name
  std::vector<ExprPtr> args;  // one per parameter; null where the default applies
};
/// `input | filter(args)`.
struct FilterExpr {
  ExprPtr input;
  FilterApplication application;
};
/// `input is [not] test(args)`.
struct TestExpr {
  ExprPtr input;
  const TestSpec* test;
  std::vector<ExprPtr> args;  // bound like filter arguments
  bool negated;
};
enum class UnaryOp { Negate, Plus, Not };
struct UnaryExpr {
  UnaryOp op;
  ExprPtr operand;
};
enum class BinaryOp { Add, Subtract, Multiply, Divide, FloorDivide, Modulo, Power, Concat, And, Or };
struct BinaryExpr {
  BinaryOp op;
  ExprPtr left;
  ExprPtr right;
};
enum class CompareOp { Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, In, NotIn };
struct CompareStep {
  CompareOp op;
  Position pos;  // of the operator
  ExprPtr operand;
};
/// `a < b <= c` chains like Python: every step must hold.
struct CompareExpr {
  ExprPtr first;
  std::vector<CompareStep> steps;
};
/// `then_value if condition else else_value`.
struct ConditionalExpr {
  ExprPtr condition;
  ExprPtr then_value;
  ExprPtr else_value;
};

struct Expr {
  using Node = std::variant<LiteralExpr, NameExpr, ListExpr, AttributeExpr, IndexExpr, CallExpr,
                            FilterExpr, TestExpr, UnaryExpr, BinaryExpr, CompareExpr,
                            ConditionalExpr>;
  Position pos;  // where errors about this node point: the name, operator or filter
  int depth;     // 1 + the depth of the deepest operand; the parser caps it
  Node node;
};

// ---- statements ----

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct TextStmt {
  std::string text;
};
/// `{{ value }}`.
struct OutputStmt {
  ExprPtr value;
};
struct IfBranch {
  ExprPtr condition;
  Body body;
};
struct IfStmt {
  std::vector<IfBranch> branches;  // `if` then each `elif`
  Body else_body;
};
struct ForStmt {
  std::vector<std::string> targets;  // `for x in` or `for k, v in`
  ExprPtr iterable;
  Body body;
  Body else_body;  // rendered when the iterable is empty
};
/// `{% set target = value %}`.
struct SetStmt {
  std::string target;
  ExprPtr value;
};
/// `{% set target %}body{% endset %}`: the rendered body becomes a string.
struct SetBlockStmt {
  std::string target;
  Body body;
};
struct IncludeStmt {
  ExprPtr template_name;
  bool ignore_missing;
};
struct MacroParam {
  std::string name;
  Position pos;
  ExprPtr default_value;  // null: the argument is required
};
struct MacroStmt {
  std::string name;
  std::vector<MacroParam> params;
  Body body;
};
/// `{% filter a | b(x) %}body{% endfilter %}`.
struct FilterBlockStmt {
  std::vector<FilterApplication> filters;
  Body body;
};

struct Stmt {
  using Node = std::variant<TextStmt, OutputStmt, IfStmt, ForStmt, SetStmt, SetBlockStmt,
                            IncludeStmt, MacroStmt, FilterBlockStmt>;
  Position pos;  // of the tag's keyword (or of the text / expression)
  Node node;
};

namespace detail {
/// Everything a parsed template is; shared, immutable, by all copies of a Template.
struct TemplateData {
  std::string name;
  Options options;
  Body body;
};
}  // namespace detail

}  // namespace flexjit::tmpl
