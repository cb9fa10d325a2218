#include "expr/interpreter.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "expr/diagnostics.hpp"
#include "expr/semantics.hpp"
#include "flexjit/error.hpp"

namespace flexjit::expr {

namespace {

enum class Op : uint8_t {
  const_int, const_float,
  var_score, var_b, var_h, var_q_idx, var_kv_idx, var_q_len, var_kv_len,
  read,
  int_to_float, float_to_int, bool_to_float,
  ineg, fneg, lnot,
  iadd, isub, imul, idiv, imod, fadd, fsub, fmul, fdiv,
  ieq, ine, ilt, ile, igt, ige, feq, fne, flt, fle, fgt, fge,
  iand, ior, ixor,
  jump, jump_if_zero, jump_if_nonzero, move,
  iabs, imin, imax, iclamp, fabs, fmin, fmax, fclamp,
  exp, exp2, log, log2, sqrt, rsqrt, tanh, sigmoid, sin, cos, floor, ceil, pow,
  end,
};

union Register {
  int32_t i;  // ints, and bools as 0 / 1
  double f;
};

struct Instruction {
  Op op = Op::end;
  uint16_t dst = 0, a = 0, b = 0, c = 0;
  union {
    int32_t i;
    double f;
    uint32_t index;  // jump target, or read site
  } imm{};
};

struct ReadSite {
  const unsigned char* data;
  DType dtype;
  int rank;
  int64_t extent[8];
  int64_t stride[8];  // elements
  std::string name;
  SourceSpan span;
};

}  // namespace

struct BoundEvaluator::State {
  std::vector<Instruction> code;
  std::vector<ReadSite> reads;
  size_t register_count = 1;
  ScalarType result_type = ScalarType::floating;
  std::string mod;
  std::string source;
};

std::string format_shape(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return out + "]";
}

namespace {

class ProgramBuilder {
 public:
  ProgramBuilder(BoundEvaluator::State& state, const Declarations& declarations, const EvalInputs& inputs)
      : state_(state), declarations_(declarations), inputs_(inputs) {}

  void compile_as(const Node& node, uint16_t dst, ScalarType type) {
    compile(node, dst);
    if (node.type == type || type == ScalarType::boolean) return;
    if (type == ScalarType::floating)
      emit(node.type == ScalarType::boolean ? Op::bool_to_float : Op::int_to_float, dst, dst);
    else if (node.type == ScalarType::floating)
      emit(Op::float_to_int, dst, dst);
    // bool -> int: the register already holds 0 / 1.
  }

  void finish() { emit(Op::end, 0); }

 private:
  size_t emit(Op op, uint16_t dst, uint16_t a = 0, uint16_t b = 0, uint16_t c = 0) {
    Instruction instruction;
    instruction.op = op;
    instruction.dst = dst;
    instruction.a = a;
    instruction.b = b;
    instruction.c = c;
    state_.code.push_back(instruction);
    return state_.code.size() - 1;
  }
  void use_register(size_t r) {
    if (r >= std::numeric_limits<uint16_t>::max())
      throw UsageError("expression is too large to evaluate on the host");
    state_.register_count = std::max(state_.register_count, r + 1);
  }
  void patch_target(size_t jump) { state_.code[jump].imm.index = static_cast<uint32_t>(state_.code.size()); }

  void compile(const Node& node, uint16_t dst) {
    use_register(dst);
    switch (node.kind) {
      case NodeKind::literal: {
        if (node.type == ScalarType::floating) {
          state_.code[emit(Op::const_float, dst)].imm.f = node.float_value;
        } else {
          state_.code[emit(Op::const_int, dst)].imm.i =
              node.type == ScalarType::boolean ? (node.bool_value ? 1 : 0) : node.int_value;
        }
        return;
      }
      case NodeKind::variable: {
        static constexpr Op kLoads[] = {Op::var_score, Op::var_b, Op::var_h, Op::var_q_idx,
                                        Op::var_kv_idx, Op::var_q_len, Op::var_kv_len};
        emit(kLoads[static_cast<int>(node.variable)], dst);
        return;
      }
      case NodeKind::parameter: return compile_parameter(node, dst);
      case NodeKind::buffer_read: return compile_read(node, dst);
      case NodeKind::unary: {
        compile_as(*node.operands[0], dst, operand_type(node, 0));
        const Op op = node.unary_op == UnaryOp::logical_not ? Op::lnot
                      : node.type == ScalarType::integer    ? Op::ineg
                                                            : Op::fneg;
        emit(op, dst, dst);
        return;
      }
      case NodeKind::binary: return compile_binary(node, dst);
      case NodeKind::select: {
        compile(*node.operands[0], dst);
        const size_t to_else = emit(Op::jump_if_zero, 0, dst);
        compile_as(*node.operands[1], dst, node.type);
        const size_t to_end = emit(Op::jump, 0);
        patch_target(to_else);
        compile_as(*node.operands[2], dst, node.type);
        patch_target(to_end);
        return;
      }
      case NodeKind::call: return compile_call(node, dst);
    }
  }

  void compile_parameter(const Node& node, uint16_t dst) {
    const auto found = inputs_.params.find(node.name);
    if (found == inputs_.params.end())
      throw UsageError(state_.mod + " reads parameter '" + node.name + "', but no value was given for it");
    const double value = found->second;
    if (node.type == ScalarType::integer) {
      if (!(value == std::trunc(value)) || value < -2147483648.0 || value > 2147483647.0)
        throw UsageError("parameter '" + node.name + "' of " + state_.mod +
                         " is an int, but the value given is " + std::to_string(value));
      state_.code[emit(Op::const_int, dst)].imm.i = static_cast<int32_t>(value);
    } else {
      state_.code[emit(Op::const_float, dst)].imm.f = value;
    }
  }

  void compile_read(const Node& node, uint16_t dst) {
    const BufferDecl* decl = declarations_.find_buffer(node.name);
    const auto found = inputs_.buffers.find(node.name);
    if (found == inputs_.buffers.end())
      throw UsageError(state_.mod + " reads buffer '" + node.name + "', but no data was given for it");
    const HostBufferView& view = found->second;
    if (view.dtype != decl->dtype)
      throw UsageError("buffer '" + node.name + "' is declared as " + std::string(dtype_name(decl->dtype)) +
                       ", but the data given is " + std::string(dtype_name(view.dtype)));
    if (view.shape.size() != decl->shape.size())
      throw UsageError("buffer '" + node.name + "' is declared with rank " +
                       std::to_string(decl->shape.size()) + ", but the data given has rank " +
                       std::to_string(view.shape.size()));
    int64_t elements = 1;
    for (size_t d = 0; d < view.shape.size(); ++d) {
      if (view.shape[d] < 0 || (decl->shape[d] >= 0 && decl->shape[d] != view.shape[d]))
        throw UsageError("buffer '" + node.name + "' is declared with shape " + format_shape(decl->shape) +
                         ", but the data given has shape " + format_shape(view.shape));
      elements *= view.shape[d];
    }
    if (elements > 0 && view.data == nullptr)
      throw UsageError("buffer '" + node.name + "' of " + state_.mod + " was given no data (a null pointer)");
    ReadSite site{};
    site.data = static_cast<const unsigned char*>(view.data);
    site.dtype = view.dtype;
    site.rank = static_cast<int>(view.shape.size());
    int64_t stride = 1;
    for (int d = site.rank - 1; d >= 0; --d) {
      site.extent[d] = view.shape[static_cast<size_t>(d)];
      site.stride[d] = stride;
      stride *= site.extent[d];
    }
    site.name = node.name;
    site.span = node.span;
    // Derived expressions (gradient, substitute) keep the spans of the text they came from; their
    // own source is the canonical text, so point at all of it rather than at a wrong place.
    if (site.span.offset > state_.source.size() ||
        state_.source.compare(site.span.offset, node.name.size(), node.name) != 0)
      site.span = {0, static_cast<uint32_t>(state_.source.size())};
    for (size_t i = 0; i < node.operands.size(); ++i) {
      use_register(dst + i);
      compile_as(*node.operands[i], static_cast<uint16_t>(dst + i), ScalarType::integer);
    }
    state_.code[emit(Op::read, dst, dst)].imm.index = static_cast<uint32_t>(state_.reads.size());
    state_.reads.push_back(std::move(site));
  }

  void compile_binary(const Node& node, uint16_t dst) {
    const BinaryOp op = node.binary_op;
    if (is_logical(op)) {
      compile(*node.operands[0], dst);
      const size_t skip = emit(op == BinaryOp::logical_and ? Op::jump_if_zero : Op::jump_if_nonzero, 0, dst);
      compile(*node.operands[1], dst);
      patch_target(skip);
      return;
    }
    const ScalarType type = operand_type(node, 0);
    const auto rhs = static_cast<uint16_t>(dst + 1);
    compile_as(*node.operands[0], dst, type);
    compile_as(*node.operands[1], rhs, type);
    const bool f = type == ScalarType::floating;
    Op code = Op::end;
    switch (op) {
      case BinaryOp::add: code = f ? Op::fadd : Op::iadd; break;
      case BinaryOp::sub: code = f ? Op::fsub : Op::isub; break;
      case BinaryOp::mul: code = f ? Op::fmul : Op::imul; break;
      case BinaryOp::div: code = f ? Op::fdiv : Op::idiv; break;
      case BinaryOp::mod: code = Op::imod; break;
      case BinaryOp::eq: code = f ? Op::feq : Op::ieq; break;
      case BinaryOp::ne: code = f ? Op::fne : Op::ine; break;
      case BinaryOp::lt: code = f ? Op::flt : Op::ilt; break;
      case BinaryOp::le: code = f ? Op::fle : Op::ile; break;
      case BinaryOp::gt: code = f ? Op::fgt : Op::igt; break;
      case BinaryOp::ge: code = f ? Op::fge : Op::ige; break;
      case BinaryOp::bit_and: code = Op::iand; break;
      case BinaryOp::bit_or: code = Op::ior; break;
      case BinaryOp::bit_xor: code = Op::ixor; break;
      default: break;
    }
    emit(code, dst, dst, rhs);
  }

  void compile_call(const Node& node, uint16_t dst) {
    if (node.function == Function::to_int || node.function == Function::to_float) {
      compile_as(*node.operands[0], dst, node.type);  // the conversion is the whole call
      return;
    }
    for (size_t i = 0; i < node.operands.size(); ++i) {
      use_register(dst + i);
      compile_as(*node.operands[i], static_cast<uint16_t>(dst + i), operand_type(node, i));
    }
    const bool is_int = node.type == ScalarType::integer;
    const auto b = static_cast<uint16_t>(dst + 1), c = static_cast<uint16_t>(dst + 2);
    Op op = Op::end;
    switch (node.function) {
      case Function::to_int:
      case Function::to_float: return;
      case Function::abs: op = is_int ? Op::iabs : Op::fabs; break;
      case Function::min: op = is_int ? Op::imin : Op::fmin; break;
      case Function::max: op = is_int ? Op::imax : Op::fmax; break;
      case Function::clamp: op = is_int ? Op::iclamp : Op::fclamp; break;
      case Function::exp: op = Op::exp; break;
      case Function::exp2: op = Op::exp2; break;
      case Function::log: op = Op::log; break;
      case Function::log2: op = Op::log2; break;
      case Function::sqrt: op = Op::sqrt; break;
      case Function::rsqrt: op = Op::rsqrt; break;
      case Function::tanh: op = Op::tanh; break;
      case Function::sigmoid: op = Op::sigmoid; break;
      case Function::sin: op = Op::sin; break;
      case Function::cos: op = Op::cos; break;
      case Function::floor: op = Op::floor; break;
      case Function::ceil: op = Op::ceil; break;
      case Function::pow: op = Op::pow; break;
    }
    emit(op, dst, dst, b, c);
  }

  BoundEvaluator::State& state_;
  const Declarations& declarations_;
  const EvalInputs& inputs_;
};

double load_element(const ReadSite& site, int64_t offset) {
  const unsigned char* p = site.data + offset * static_cast<int64_t>(dtype_size(site.dtype));
  switch (site.dtype) {
    case DType::f32: {
      float v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case DType::i32: {
      int32_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case DType::u8: return *p;
    case DType::bf16: {
      uint16_t bits;
      std::memcpy(&bits, p, sizeof bits);
      const uint32_t widened = static_cast<uint32_t>(bits) << 16;
      float v;
      std::memcpy(&v, &widened, sizeof v);
      return v;
    }
    case DType::f16: {
      uint16_t bits;
      std::memcpy(&bits, p, sizeof bits);
      const int exponent = (bits >> 10) & 0x1f;
      const int mantissa = bits & 0x3ff;
      const double sign = (bits & 0x8000) ? -1.0 : 1.0;
      if (exponent == 0) return sign * std::ldexp(mantissa, -24);
      if (exponent == 31)
        return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
      return sign * std::ldexp(mantissa + 1024, exponent - 25);
    }
  }
  return 0.0;
}

[[noreturn]] void throw_out_of_bounds(const BoundEvaluator::State& state, const ReadSite& site,
                                      const Register* indices) {
  std::string access = site.name, shape = "[";
  for (int d = 0; d < site.rank; ++d) {
    access += "[" + std::to_string(indices[d].i) + "]";
    shape += (d ? ", " : "") + std::to_string(site.extent[d]);
  }
  shape += "]";
  DiagnosticSink sink(state.mod, state.source);
  throw ExprError({sink.make(site.span, "buffer read " + access + " is out of bounds for " + site.name +
                                            " of shape " + shape)});
}

// Registers beyond this many live in a per-thread buffer (deep derived expressions only).
constexpr size_t kStackRegisters = 128;

double run(const BoundEvaluator::State& state, const EvalPoint& point, Register* r) {
  const Instruction* code = state.code.data();
  size_t pc = 0;
  while (true) {
    const Instruction& in = code[pc++];
    Register& d = r[in.dst];
    const Register& a = r[in.a];
    const Register& b = r[in.b];
    switch (in.op) {
      case Op::const_int: d.i = in.imm.i; break;
      case Op::const_float: d.f = in.imm.f; break;
      case Op::var_score: d.f = point.score; break;
      case Op::var_b: d.i = point.b; break;
      case Op::var_h: d.i = point.h; break;
      case Op::var_q_idx: d.i = point.q_idx; break;
      case Op::var_kv_idx: d.i = point.kv_idx; break;
      case Op::var_q_len: d.i = point.q_len; break;
      case Op::var_kv_len: d.i = point.kv_len; break;
      case Op::read: {
        const ReadSite& site = state.reads[in.imm.index];
        int64_t offset = 0;
        for (int k = 0; k < site.rank; ++k) {
          const int64_t index = r[in.a + k].i;
          if (index < 0 || index >= site.extent[k]) throw_out_of_bounds(state, site, &r[in.a]);
          offset += index * site.stride[k];
        }
        const double value = load_element(site, offset);
        if (site.dtype == DType::i32 || site.dtype == DType::u8)
          d.i = static_cast<int32_t>(value);
        else
          d.f = value;
        break;
      }
      case Op::int_to_float: d.f = a.i; break;
      case Op::float_to_int: d.i = semantics::to_int(a.f); break;
      case Op::bool_to_float: d.f = a.i ? 1.0 : 0.0; break;
      case Op::ineg: d.i = semantics::neg(a.i); break;
      case Op::fneg: d.f = -a.f; break;
      case Op::lnot: d.i = !a.i; break;
      case Op::iadd: d.i = semantics::add(a.i, b.i); break;
      case Op::isub: d.i = semantics::sub(a.i, b.i); break;
      case Op::imul: d.i = semantics::mul(a.i, b.i); break;
      case Op::idiv: d.i = semantics::div(a.i, b.i); break;
      case Op::imod: d.i = semantics::mod(a.i, b.i); break;
      case Op::fadd: d.f = a.f + b.f; break;
      case Op::fsub: d.f = a.f - b.f; break;
      case Op::fmul: d.f = a.f * b.f; break;
      case Op::fdiv: d.f = a.f / b.f; break;
      case Op::ieq: d.i = a.i == b.i; break;
      case Op::ine: d.i = a.i != b.i; break;
      case Op::ilt: d.i = a.i < b.i; break;
      case Op::ile: d.i = a.i <= b.i; break;
      case Op::igt: d.i = a.i > b.i; break;
      case Op::ige: d.i = a.i >= b.i; break;
      case Op::feq: d.i = a.f == b.f; break;
      case Op::fne: d.i = a.f != b.f; break;
      case Op::flt: d.i = a.f < b.f; break;
      case Op::fle: d.i = a.f <= b.f; break;
      case Op::fgt: d.i = a.f > b.f; break;
      case Op::fge: d.i = a.f >= b.f; break;
      case Op::iand: d.i = a.i & b.i; break;
      case Op::ior: d.i = a.i | b.i; break;
      case Op::ixor: d.i = a.i ^ b.i; break;
      case Op::jump: pc = in.imm.index; break;
      case Op::jump_if_zero:
        if (a.i == 0) pc = in.imm.index;
        break;
      case Op::jump_if_nonzero:
        if (a.i != 0) pc = in.imm.index;
        break;
      case Op::move: d = a; break;
      case Op::iabs: d.i = semantics::abs(a.i); break;
      case Op::imin: d.i = semantics::min(a.i, b.i); break;
      case Op::imax: d.i = semantics::max(a.i, b.i); break;
      case Op::iclamp: d.i = semantics::clamp(a.i, b.i, r[in.c].i); break;
      case Op::fabs: d.f = std::fabs(a.f); break;
      case Op::fmin: d.f = semantics::fmin(a.f, b.f); break;
      case Op::fmax: d.f = semantics::fmax(a.f, b.f); break;
      case Op::fclamp: d.f = semantics::fclamp(a.f, b.f, r[in.c].f); break;
      case Op::exp: d.f = std::exp(a.f); break;
      case Op::exp2: d.f = std::exp2(a.f); break;
      case Op::log: d.f = std::log(a.f); break;
      case Op::log2: d.f = std::log2(a.f); break;
      case Op::sqrt: d.f = std::sqrt(a.f); break;
      case Op::rsqrt: d.f = 1.0 / std::sqrt(a.f); break;
      case Op::tanh: d.f = std::tanh(a.f); break;
      case Op::sigmoid: d.f = semantics::sigmoid(a.f); break;
      case Op::sin: d.f = std::sin(a.f); break;
      case Op::cos: d.f = std::cos(a.f); break;
      case Op::floor: d.f = std::floor(a.f); break;
      case Op::ceil: d.f = std::ceil(a.f); break;
      case Op::pow: d.f = std::pow(a.f, b.f); break;
      case Op::end:
        return state.result_type == ScalarType::floating ? r[0].f : static_cast<double>(r[0].i);
    }
  }
}

}  // namespace

std::shared_ptr<const BoundEvaluator::State> bind_program(const NodePtr& root, ModKind kind,
                                                          const std::string& source,
                                                          const Declarations& declarations,
                                                          const EvalInputs& inputs) {
  auto state = std::make_shared<BoundEvaluator::State>();
  state->mod = std::string(mod_name(kind));
  state->source = source;
  state->result_type = root->type;
  ProgramBuilder builder(*state, declarations, inputs);
  builder.compile_as(*root, 0, root->type);
  builder.finish();
  return state;
}

BoundEvaluator::BoundEvaluator(std::shared_ptr<const State> state) : state_(std::move(state)) {}

double BoundEvaluator::operator()(const EvalPoint& point) const {
  const State& state = *state_;
  if (state.register_count <= kStackRegisters) {
    Register registers[kStackRegisters];
    return run(state, point, registers);
  }
  thread_local std::vector<Register> heap_registers;
  if (heap_registers.size() < state.register_count) heap_registers.resize(state.register_count);
  return run(state, point, heap_registers.data());
}

}  // namespace flexjit::expr
