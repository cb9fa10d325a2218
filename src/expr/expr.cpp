// flexjit::Expr: the pipeline lexer -> bracket check -> parser -> checker, and the queries on a
// checked tree (analysis, canonical form, hash), each delegated to its own stage.
#include <cctype>
#include <functional>
#include <initializer_list>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "expr/ast.hpp"
#include "expr/builtins.hpp"
#include "expr/checker.hpp"
#include "expr/declarations.hpp"
#include "expr/diagnostics.hpp"
#include "expr/emitter.hpp"
#include "expr/equalities.hpp"
#include "expr/gradient.hpp"
#include "expr/interpreter.hpp"
#include "expr/kv_affine.hpp"
#include "expr/lexer.hpp"
#include "expr/parser.hpp"
#include "expr/printer.hpp"
#include "expr/simplify.hpp"
#include "expr/tile_bounds.hpp"
#include "flexjit/error.hpp"
#include "flexjit/expr.hpp"

namespace flexjit {

using expr::Node;
using expr::NodeKind;
using expr::NodePtr;

std::string_view mod_name(ModKind kind) noexcept { return kind == ModKind::score ? "score_mod" : "mask_mod"; }

std::string_view scalar_type_name(ScalarType type) noexcept {
  switch (type) {
    case ScalarType::boolean: return "bool";
    case ScalarType::integer: return "int";
    case ScalarType::floating: return "float";
  }
  return "?";
}

namespace {

bool is_blank(std::string_view text) {
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  return true;
}

void visit(const Node& node, const std::function<void(const Node&)>& visitor) {
  visitor(node);
  for (const auto& operand : node.operands) visit(*operand, visitor);
}

}  // namespace

Expr::Expr(ModKind kind, std::shared_ptr<const expr::Node> root, Declarations declarations, std::string source)
    : kind_(kind),
      root_(std::move(root)),
      declarations_(std::make_shared<const Declarations>(std::move(declarations))),
      source_(std::move(source)) {
  // Counted once, on the tree the emitters emit: the kernels' shared-memory sizes ask on every call.
  const auto emitted = expr::propagate_equalities(root_);
  column_values_ = static_cast<int>(expr::column_values(emitted).size());
  const std::vector<expr::NodePtr> diagonals =
      kind_ == ModKind::score ? expr::diagonal_values(emitted) : std::vector<expr::NodePtr>{};
  diagonal_values_ = static_cast<int>(diagonals.size());
  if (diagonal_values_ > 0) {
    // Differentiated only for the mods with diagonal values (relative tables, T5 buckets).
    gradient_diagonal_values_ =
        !expr::diagonal_values(expr::propagate_equalities(expr::differentiate_by_score(root_))).empty();
    diagonal_kv_affine_ = expr::kv_affine_form(emitted).has_value();
    diagonal_added_ = expr::diagonal_value_is_added_to_score(emitted, diagonals);
    for (const expr::NodePtr& value : diagonals)
      for (expr::Variable v : {expr::Variable::b, expr::Variable::q_len, expr::Variable::kv_len})
        diagonal_call_shape_ = diagonal_call_shape_ || expr::tree_uses(*value, v);
  }
}

Expr Expr::parse(ModKind kind, std::string_view source, const Declarations& declarations) {
  expr::validate_declarations(declarations);
  const std::string mod(mod_name(kind));
  expr::DiagnosticSink sink(mod, source);
  if (source.size() > expr::kMaxSourceBytes) {
    sink.error_without_source("expression is too long (" + std::to_string(source.size()) +
                                  " bytes; the limit is " + std::to_string(expr::kMaxSourceBytes) + ")",
                              "a table of values belongs in a buffer, not in the expression");
    sink.throw_if_errors();
  }
  if (is_blank(source)) {
    sink.error({0, 0}, "the expression is empty",
               kind == ModKind::score
                   ? "a score_mod that leaves scores unchanged is `score`"
                   : "a mask_mod that keeps every position is `true`; causal attention is `q_idx >= kv_idx`");
    sink.throw_if_errors();
  }
  const std::vector<expr::Token> tokens = expr::tokenize(source, sink);
  sink.throw_if_errors();
  expr::check_brackets(tokens, sink);
  sink.throw_if_errors();
  const expr::SyntaxPtr syntax = expr::parse_tokens(tokens, sink);
  if (!syntax) sink.throw_if_errors();
  NodePtr root = expr::check_syntax(*syntax, kind, declarations, sink);
  sink.throw_if_errors();
  return Expr(kind, std::move(root), declarations, std::string(source));
}

Expr Expr::identity_score() { return Expr(ModKind::score, expr::make_variable(expr::Variable::score), {}, "score"); }
Expr Expr::no_mask() { return Expr(ModKind::mask, expr::make_bool(true), {}, "true"); }

ModKind Expr::kind() const noexcept { return kind_; }
const std::string& Expr::source() const noexcept { return source_; }
const Declarations& Expr::declarations() const noexcept { return *declarations_; }
ScalarType Expr::type() const noexcept { return root_->type; }

std::string Expr::canonical() const { return expr::print_canonical(*root_); }

uint64_t Expr::hash() const {
  const std::string text = canonical();
  return XXH3_64bits(text.data(), text.size());
}

std::set<std::string> Expr::free_variables() const {
  std::set<std::string> names;
  visit(*root_, [&](const Node& node) {
    if (node.kind == NodeKind::variable) names.emplace(expr::variable_name(node.variable));
  });
  return names;
}

bool Expr::uses(std::string_view variable) const {
  const auto known = expr::lookup_variable(variable);
  return known && expr::tree_uses(*root_, *known);
}

std::set<std::string> Expr::buffers_read() const {
  std::set<std::string> names;
  visit(*root_, [&](const Node& node) {
    if (node.kind == NodeKind::buffer_read) names.insert(node.name);
  });
  return names;
}

namespace {
// True when some buffer read has an index that reads one of `variables`, directly or through
// another read.
bool buffer_index_reads(const Node& root, std::initializer_list<expr::Variable> variables) {
  bool reads = false;
  visit(root, [&](const Node& node) {
    if (node.kind != NodeKind::buffer_read) return;
    for (const auto& index : node.operands)
      for (const expr::Variable variable : variables) reads = reads || expr::tree_uses(*index, variable);
  });
  return reads;
}
}  // namespace

bool Expr::reads_buffers_by_position() const {
  return buffer_index_reads(*root_, {expr::Variable::q_idx, expr::Variable::kv_idx});
}

bool Expr::reads_buffers_at_query_positions() const { return buffer_index_reads(*root_, {expr::Variable::q_idx}); }

std::set<std::string> Expr::params_read() const {
  std::set<std::string> names;
  visit(*root_, [&](const Node& node) {
    if (node.kind == NodeKind::parameter) names.insert(node.name);
  });
  return names;
}

bool Expr::is_identity() const {
  if (kind_ != ModKind::score) return false;
  const NodePtr simplified = expr::simplify(root_);
  return simplified->kind == NodeKind::variable && simplified->variable == expr::Variable::score;
}

bool Expr::is_always_true() const {
  if (kind_ != ModKind::mask) return false;
  const NodePtr simplified = expr::simplify(root_);
  return simplified->kind == NodeKind::literal && simplified->bool_value;
}

bool Expr::is_always_false() const {
  if (kind_ != ModKind::mask) return false;
  const NodePtr simplified = expr::simplify(root_);
  return simplified->kind == NodeKind::literal && !simplified->bool_value;
}

Expr Expr::gradient() const {
  if (kind_ != ModKind::score)
    throw UsageError("gradient() needs a score_mod; a mask_mod has no derivative");
  NodePtr derivative = expr::differentiate_by_score(root_);
  std::string text = expr::print_canonical(*derivative);
  return Expr(ModKind::score, std::move(derivative), *declarations_, std::move(text));
}

Expr Expr::substitute(std::string_view variable, double value) const {
  const auto known = expr::lookup_variable(variable);
  if (!known)
    throw UsageError("substitute: unknown variable '" + std::string(variable) +
                     "' (expected one of score, b, h, q_idx, kv_idx, q_len, kv_len)");
  NodePtr replaced = expr::simplify(expr::substitute_variable(root_, *known, value));
  std::string text = expr::print_canonical(*replaced);
  return Expr(kind_, std::move(replaced), *declarations_, std::move(text));
}

std::string Expr::emit_cuda(const std::string& function_name, const std::string& line_file) const {
  // The emitted code reads a key's row-side equal where an `&&` guarantees it (equalities.hpp).
  const NodePtr emitted = expr::propagate_equalities(root_);
  return expr::emit_cuda_function(*emitted, kind_, function_name, line_file);
}

double Expr::score_prescale() const {
  if (kind_ != ModKind::score) return 1.0;
  // On the trees emit_cuda_prescaled emits (this one's and its gradient's).
  const auto own = expr::uniform_score_factor(*expr::propagate_equalities(root_));
  if (!own) return 1.0;
  // The derivative is emitted with the same prescale, so it must fit as well (or read no score).
  const NodePtr derivative = expr::propagate_equalities(expr::differentiate_by_score(root_));
  if (!expr::tree_uses(*derivative, expr::Variable::score)) return *own;
  const auto its = expr::uniform_score_factor(*derivative);
  return its && *its == *own ? *own : 1.0;
}

std::string Expr::emit_cuda_prescaled(const std::string& function_name, double prescale, double output_factor,
                                      const std::string& line_file) const {
  if (kind_ != ModKind::score) throw UsageError("emit_cuda_prescaled needs a score_mod; a mask_mod has no score");
  const NodePtr emitted = expr::propagate_equalities(root_);
  return expr::emit_cuda_prescaled_function(*emitted, prescale, output_factor, function_name, line_file);
}

std::optional<ScoreKvAffineForm> Expr::kv_affine_form() const {
  if (kind_ != ModKind::score) return std::nullopt;
  const auto parts = expr::kv_affine_form(expr::propagate_equalities(root_));  // the tree emit_cuda emits
  if (!parts) return std::nullopt;
  std::string text = expr::print_canonical(*parts->kv_slope);
  return ScoreKvAffineForm{parts->score_factor, Expr(ModKind::score, parts->kv_slope, *declarations_, std::move(text)),
                           parts->max_len};
}

int Expr::column_value_count() const { return column_values_; }

std::string Expr::emit_cuda_columns(const std::string& values_name, const std::string& mask_name) const {
  if (kind_ != ModKind::mask) throw UsageError("emit_cuda_columns needs a mask_mod; a score_mod's take emit_cuda_prescaled_columns");
  const NodePtr emitted = expr::propagate_equalities(root_);  // the tree emit_cuda emits
  return expr::emit_cuda_column_functions(*emitted, values_name, mask_name);
}

std::string Expr::emit_cuda_prescaled_columns(const std::string& values_name, const std::string& score_name,
                                              double prescale, double output_factor) const {
  if (kind_ != ModKind::score) throw UsageError("emit_cuda_prescaled_columns needs a score_mod; a mask_mod has no score");
  const NodePtr emitted = expr::propagate_equalities(root_);  // the tree emit_cuda_prescaled emits
  return expr::emit_cuda_prescaled_column_functions(*emitted, prescale, output_factor, values_name, score_name,
                                                    "score_mod");
}

int Expr::diagonal_value_count() const { return diagonal_values_; }

bool Expr::gradient_has_diagonal_values() const { return gradient_diagonal_values_; }

bool Expr::diagonal_values_are_kv_affine() const { return diagonal_kv_affine_; }

bool Expr::diagonal_value_is_added_to_score() const { return diagonal_added_; }
bool Expr::diagonal_values_read_batch_or_lengths() const { return diagonal_call_shape_; }

std::string Expr::emit_cuda_prescaled_diagonals(const std::string& values_name, const std::string& score_name,
                                                double prescale, double output_factor) const {
  if (kind_ != ModKind::score) throw UsageError("emit_cuda_prescaled_diagonals needs a score_mod; a mask_mod has no score");
  const NodePtr emitted = expr::propagate_equalities(root_);  // the tree emit_cuda_prescaled emits
  return expr::emit_cuda_prescaled_column_functions(*emitted, prescale, output_factor, values_name, score_name,
                                                    "score_mod", /*diagonal=*/true);
}

bool Expr::has_tile_bounds() const { return kind_ == ModKind::mask && expr::has_tile_bounds(*root_); }

std::string Expr::emit_tile_bounds_cuda(const std::string& function_name) const {
  if (kind_ != ModKind::mask) throw UsageError("tile bounds need a mask_mod; a score_mod is not a bool");
  return expr::emit_tile_bounds_function(*root_, function_name);
}

double Expr::evaluate(const EvalPoint& point, const EvalInputs& inputs) const { return bind(inputs)(point); }

expr::BoundEvaluator Expr::bind(const EvalInputs& inputs) const {
  return expr::BoundEvaluator(expr::bind_program(root_, kind_, source_, *declarations_, inputs));
}

}  // namespace flexjit
