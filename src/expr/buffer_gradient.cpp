// Derivatives of a score_mod with respect to the reads of its learnable buffers, and the analysis of
// how each read's indices vary over the scores (which picks the accumulation scheme on the GPU).
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "expr/ast.hpp"
#include "expr/diagnostics.hpp"
#include "expr/gradient.hpp"
#include "expr/printer.hpp"
#include "expr/simplify.hpp"
#include "flexjit/error.hpp"
#include "flexjit/expr.hpp"

namespace flexjit {

using expr::BinaryOp;
using expr::Node;
using expr::NodeKind;
using expr::NodePtr;
using expr::Variable;

std::string_view index_pattern_name(IndexPattern pattern) noexcept {
  switch (pattern) {
    case IndexPattern::per_head: return "per_head";
    case IndexPattern::diagonal: return "diagonal";
    case IndexPattern::per_score: return "per_score";
    case IndexPattern::arbitrary: return "arbitrary";
  }
  return "?";
}

namespace {

// The position variables an index may vary with, in this order: b, h, q_idx, kv_idx.
constexpr std::array<Variable, 4> kPositions = {Variable::b, Variable::h, Variable::q_idx, Variable::kv_idx};

// An int index written as sum(coefficient[v] * v) + rest, where `rest` collects every term that is
// not a literal multiple of a position variable; the flags say which positions `rest` reads.
struct Affine {
  std::array<int64_t, 4> coefficient{};
  bool rest_reads_bh = false;
  bool rest_reads_qkv = false;

  bool reads_qkv() const { return coefficient[2] != 0 || coefficient[3] != 0 || rest_reads_qkv; }
};

Affine opaque(const Node& node) {
  Affine a;
  a.rest_reads_bh = expr::tree_uses(node, Variable::b) || expr::tree_uses(node, Variable::h);
  a.rest_reads_qkv = expr::tree_uses(node, Variable::q_idx) || expr::tree_uses(node, Variable::kv_idx);
  return a;
}

Affine combine(const Affine& x, const Affine& y, int64_t y_sign) {
  Affine a;
  for (size_t v = 0; v < 4; ++v) a.coefficient[v] = x.coefficient[v] + y_sign * y.coefficient[v];
  a.rest_reads_bh = x.rest_reads_bh || y.rest_reads_bh;
  a.rest_reads_qkv = x.rest_reads_qkv || y.rest_reads_qkv;
  return a;
}

Affine scaled(Affine a, int64_t factor) {
  for (auto& c : a.coefficient) c *= factor;
  if (factor == 0) a = Affine{};
  return a;
}

Affine affine_form(const Node& node) {
  if (node.type != ScalarType::integer) return opaque(node);
  switch (node.kind) {
    case NodeKind::variable:
      for (size_t v = 0; v < 4; ++v)
        if (node.variable == kPositions[v]) {
          Affine a;
          a.coefficient[v] = 1;
          return a;
        }
      return Affine{};  // q_len, kv_len: constant over the scores
    case NodeKind::literal:
    case NodeKind::parameter: return Affine{};
    case NodeKind::unary:
      if (node.unary_op == expr::UnaryOp::negate) return scaled(affine_form(*node.operands[0]), -1);
      return opaque(node);
    case NodeKind::binary: {
      const Node& l = *node.operands[0];
      const Node& r = *node.operands[1];
      if (node.binary_op == BinaryOp::add) return combine(affine_form(l), affine_form(r), 1);
      if (node.binary_op == BinaryOp::sub) return combine(affine_form(l), affine_form(r), -1);
      if (node.binary_op == BinaryOp::mul) {
        if (l.kind == NodeKind::literal && l.type == ScalarType::integer) return scaled(affine_form(r), l.int_value);
        if (r.kind == NodeKind::literal && r.type == ScalarType::integer) return scaled(affine_form(l), r.int_value);
      }
      return opaque(node);
    }
    default: return opaque(node);
  }
}

// `±v + terms reading no position`: the index determines v.
bool determines(const Affine& a, size_t v) {
  if (a.rest_reads_bh || a.rest_reads_qkv) return false;
  for (size_t w = 0; w < 4; ++w)
    if ((w == v) != (a.coefficient[w] == 1 || a.coefficient[w] == -1) || (w != v && a.coefficient[w] != 0))
      return false;
  return true;
}

void classify(const std::vector<NodePtr>& indices, BufferReadGradient& out) {
  std::vector<Affine> forms;
  for (const auto& index : indices) forms.push_back(affine_form(*expr::simplify(index)));
  bool any_qkv = false;
  for (const auto& f : forms) any_qkv = any_qkv || f.reads_qkv();
  if (!any_qkv) {
    out.pattern = IndexPattern::per_head;
    return;
  }
  bool injective = true;
  for (size_t v = 0; v < 4; ++v) {
    bool found = false;
    for (const auto& f : forms) found = found || determines(f, v);
    injective = injective && found;
  }
  if (injective) {
    out.pattern = IndexPattern::per_score;
    return;
  }
  int band_dim = -1;
  for (size_t d = 0; d < forms.size(); ++d) {
    if (!forms[d].reads_qkv()) continue;
    const Affine& f = forms[d];
    const bool band = !f.rest_reads_qkv && f.coefficient[2] != 0 && f.coefficient[2] == -f.coefficient[3] &&
                      f.coefficient[2] >= INT32_MIN && f.coefficient[2] <= INT32_MAX;
    if (!band || band_dim >= 0) {
      out.pattern = IndexPattern::arbitrary;
      return;
    }
    band_dim = static_cast<int>(d);
  }
  out.pattern = IndexPattern::diagonal;
  out.diagonal_dim = band_dim;
  out.diagonal_coefficient = static_cast<int>(forms[static_cast<size_t>(band_dim)].coefficient[2]);
}

void visit_reads(const NodePtr& node, const std::function<void(const NodePtr&)>& visitor) {
  if (node->kind == NodeKind::buffer_read) visitor(node);
  for (const auto& operand : node->operands) visit_reads(operand, visitor);
}

}  // namespace

std::vector<BufferReadGradient> Expr::buffer_gradients() const {
  std::vector<BufferReadGradient> out;
  if (kind_ != ModKind::score) return out;
  std::vector<NodePtr> reads;
  visit_reads(root_, [&](const NodePtr& read) {
    const BufferDecl* decl = declarations_->find_buffer(read->name);
    if (!decl || !decl->learnable) return;
    for (const auto& seen : reads)
      if (expr::same_tree(*seen, *read)) return;
    reads.push_back(read);
  });
  for (const auto& read : reads) {
    NodePtr derivative = expr::differentiate_by_read(root_, *read);
    std::string derivative_text = expr::print_canonical(*derivative);
    BufferReadGradient g{read->name, expr::print_canonical(*read), {},
                         Expr(ModKind::score, std::move(derivative), *declarations_, std::move(derivative_text))};
    for (const auto& index : read->operands) {
      NodePtr simplified = expr::simplify(index);
      std::string text = expr::print_canonical(*simplified);
      g.indices.emplace_back(ModKind::score, std::move(simplified), *declarations_, std::move(text));
    }
    classify(read->operands, g);
    out.push_back(std::move(g));
  }
  return out;
}

void check_learnable_buffers(const Expr& score_mod, const Expr& mask_mod) {
  const std::set<std::string> score_reads = score_mod.buffers_read();
  const std::set<std::string> mask_reads = mask_mod.buffers_read();
  for (const auto* declarations : {&score_mod.declarations(), &mask_mod.declarations()})
    for (const auto& buffer : declarations->buffers) {
      if (!buffer.learnable || score_reads.count(buffer.name)) continue;
      if (mask_reads.count(buffer.name)) {
        expr::DiagnosticSink sink(std::string(mod_name(ModKind::mask)), mask_mod.source());
        bool reported = false;
        visit_reads(mask_mod.root(), [&](const NodePtr& read) {
          if (reported || read->name != buffer.name) return;
          reported = true;
          sink.error(read->span,
                     "buffer '" + buffer.name + "' is learnable but only mask_mod reads it; a mask has no gradient",
                     "read it in score_mod (e.g. `where(..., score + " + buffer.name +
                         "[...], -inf)`), or do not mark it learnable (drop `--grad " + buffer.name + "`)");
        });
        sink.throw_if_errors();
      }
      throw UsageError("buffer '" + buffer.name +
                       "' is learnable but score_mod does not read it, so it has no gradient; read it in "
                       "score_mod or do not mark it learnable (drop `--grad " + buffer.name + "`)");
    }
}

}  // namespace flexjit
