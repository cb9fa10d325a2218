// libFuzzer target: random bytes through parse + check and, when they check, through everything
// downstream (canonical form, hash, emission, gradient, host evaluation). Must never crash, hang
// or trip a sanitizer; the only acceptable failures are ExprError and UsageError.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "flexjit/error.hpp"
#include "flexjit/expr.hpp"

namespace {

using namespace flexjit;

const Declarations& declarations() {
  static const Declarations d = [] {
    Declarations out;
    out.buffers.push_back(BufferDecl::parse("doc:i32:64"));
    out.buffers.push_back(BufferDecl::parse("bias:f32:4x?"));
    out.buffers.push_back(BufferDecl::parse("table:bf16:16"));
    out.buffers.push_back(BufferDecl::parse("halfs:f16:16"));
    out.buffers.push_back(BufferDecl::parse("flags:u8:16"));
    out.params.push_back(ParamDecl::parse("cap:float"));
    out.params.push_back(ParamDecl::parse("window:int"));
    return out;
  }();
  return d;
}

const EvalInputs& inputs() {
  static std::vector<int32_t> doc(64, 1);
  static std::vector<float> bias(4 * 32, 0.5f);
  static std::vector<uint16_t> table(16, 0x3f80), halfs(16, 0x3c00);
  static std::vector<uint8_t> flags(16, 3);
  static const EvalInputs in = [] {
    EvalInputs out;
    out.buffers["doc"] = {doc.data(), DType::i32, {64}};
    out.buffers["bias"] = {bias.data(), DType::f32, {4, 32}};
    out.buffers["table"] = {table.data(), DType::bf16, {16}};
    out.buffers["halfs"] = {halfs.data(), DType::f16, {16}};
    out.buffers["flags"] = {flags.data(), DType::u8, {16}};
    out.params["cap"] = 2.5;
    out.params["window"] = 3;
    return out;
  }();
  return in;
}

void evaluate_everywhere(const Expr& expr) {
  const auto evaluator = expr.bind(inputs());
  for (int q = -2; q < 70; q += 9)
    for (int kv = -1; kv < 70; kv += 13) {
      EvalPoint p;
      p.q_idx = q;
      p.kv_idx = kv;
      p.h = q & 3;
      p.b = kv & 1;
      p.q_len = p.kv_len = 64;
      p.score = (q - kv) * 0.37;
      try {
        (void)evaluator(p);
      } catch (const ExprError&) {
        // out-of-bounds reads are reported, not crashed on
      }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ModKind kind = (data[0] & 1) ? ModKind::mask : ModKind::score;
  const std::string_view source(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const Expr expr = Expr::parse(kind, source, declarations());
    const std::string canonical = expr.canonical();
    const Expr again = Expr::parse(kind, canonical, declarations());
    if (again.canonical() != canonical || again.hash() != expr.hash()) std::abort();  // canonical form is stable
    (void)expr.emit_cuda("f");
    (void)expr.free_variables();
    (void)expr.is_identity();
    (void)expr.is_always_true();
    evaluate_everywhere(expr);
    if (kind == ModKind::score && size < 4096) {
      const Expr gradient = expr.gradient();
      (void)gradient.emit_cuda("g");
      evaluate_everywhere(gradient);
    }
  } catch (const ExprError& e) {
    if (e.diagnostics().empty()) std::abort();
  } catch (const UsageError&) {
  }
  return 0;
}
