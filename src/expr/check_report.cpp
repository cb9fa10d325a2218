#include "expr/check_report.hpp"

#include <cstdio>
#include <vector>

#include "expr/ast.hpp"
#include "expr/builtins.hpp"
#include "expr/diagnostics.hpp"
#include "expr/interpreter.hpp"
#include "expr/tile_bounds.hpp"
#include "flexjit/error.hpp"

namespace flexjit::expr {
namespace {

std::string list_or_none(const std::vector<std::string>& names) {
  return names.empty() ? std::string("none") : join(names);
}

// One block per read of a learnable buffer: d(score_mod)/d(read), its indices and their pattern.
std::string describe_buffer_gradients(const Expr& mod) {
  std::string out;
  for (const BufferReadGradient& g : mod.buffer_gradients()) {
    out += "  d/d(" + g.read + "): " + g.derivative.canonical() + "\n";
    std::vector<std::string> indices;
    for (const Expr& index : g.indices) indices.push_back(index.canonical());
    out += "    indices: [" + join(indices, "][") + "]  pattern: " + std::string(index_pattern_name(g.pattern));
    if (g.pattern == IndexPattern::diagonal)
      out += " (index " + std::to_string(g.diagonal_dim + 1) + " = " + std::to_string(g.diagonal_coefficient) +
             " * (q_idx - kv_idx) + ...)";
    out += "\n";
  }
  return out;
}

std::string describe(const Expr& mod, const Declarations& declarations) {
  std::string out = std::string(mod_name(mod.kind())) + ": " + mod.canonical() + "\n";
  out += "  type:           " + std::string(scalar_type_name(mod.type())) + "\n";
  std::vector<std::string> variables;
  for (const auto& name : known_variable_names(mod.kind()))
    if (mod.uses(name)) variables.push_back(name);
  out += "  free variables: " + list_or_none(variables) + "\n";
  std::vector<std::string> buffers;
  for (const auto& name : mod.buffers_read()) {
    const BufferDecl* decl = declarations.find_buffer(name);
    buffers.push_back(name + " (" + std::string(dtype_name(decl->dtype)) + " " + format_shape(decl->shape) + ")");
  }
  out += "  buffers read:   " + list_or_none(buffers) + "\n";
  std::vector<std::string> params;
  for (const auto& name : mod.params_read())
    params.push_back(name + " (" + std::string(scalar_type_name(declarations.find_param(name)->type)) + ")");
  out += "  params read:    " + list_or_none(params) + "\n";
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(mod.hash()));
  out += "  hash:           " + std::string(hash) + "\n";
  if (mod.kind() == ModKind::score) {
    out += std::string("  identity:       ") + (mod.is_identity() ? "yes" : "no") + "\n";
    out += "  d/d(score):     " + mod.gradient().canonical() + "\n";
    if (const auto affine = mod.kv_affine_form()) {
      char factor[32];
      std::snprintf(factor, sizeof factor, "%.17g", affine->score_factor);
      out += "  affine in keys: yes, " + std::string(factor) + " * score + P with P growing by " +
             affine->kv_slope.canonical() + " per key, at lengths up to " + std::to_string(affine->max_len) +
             " (the forward: two FFMAs per score up to head dim 128)\n";
    } else {
      out += "  affine in keys: no\n";
    }
    out += describe_buffer_gradients(mod);
  } else {
    const char* constant = mod.is_always_true() ? "always true" : mod.is_always_false() ? "always false" : "no";
    out += std::string("  constant:       ") + constant + "\n";
    const std::string obstacle = tile_bounds_obstacle(*mod.root());
    out += "  tile bounds:    " +
           (obstacle.empty() ? std::string("yes (decode bounds its key tiles inside its kernel, on caches of up to 1024 tiles)")
                             : "no, " + obstacle + " (decode classifies its tiles with a separate kernel)") +
           "\n";
  }
  return out;
}

}  // namespace

std::string check_report(const std::optional<std::string>& score_mod,
                         const std::optional<std::string>& mask_mod, const Declarations& declarations) {
  if (!score_mod && !mask_mod)
    throw UsageError("give an expression to check: --score EXPR and/or --mask EXPR "
                     "(e.g. --mask 'q_idx >= kv_idx')");
  std::vector<Diagnostic> diagnostics;
  std::optional<Expr> score, mask;
  auto parse = [&](ModKind kind, const std::string& text, std::optional<Expr>& into) {
    try {
      into = Expr::parse(kind, text, declarations);
    } catch (const ExprError& error) {
      diagnostics.insert(diagnostics.end(), error.diagnostics().begin(), error.diagnostics().end());
    }
  };
  if (score_mod) parse(ModKind::score, *score_mod, score);
  if (mask_mod) parse(ModKind::mask, *mask_mod, mask);
  if (!diagnostics.empty()) throw ExprError(std::move(diagnostics));
  check_learnable_buffers(score ? *score : Expr::identity_score(), mask ? *mask : Expr::no_mask());

  std::string out;
  if (score) out += describe(*score, declarations) + "\n";
  if (mask) out += describe(*mask, declarations) + "\n";
  out += "// generated CUDA (include flexjit_expr.cuh first)\n";
  out += emit_mod_args_struct(declarations) + "\n";
  if (score) {
    out += score->emit_cuda("flexjit_score_mod") + "\n";
    out += score->gradient().emit_cuda("flexjit_score_mod_grad", "score_mod_grad") + "\n";
  }
  if (mask) out += mask->emit_cuda("flexjit_mask_mod") + "\n";
  return out;
}

}  // namespace flexjit::expr
