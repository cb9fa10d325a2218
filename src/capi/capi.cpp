// The C API (include/flexjit/flexjit.h) over the C++ objects. Each entry point runs its body
// through `guarded`, which turns every exception into a status code and this thread's message,
// so nothing C++ crosses the ABI. DLTensors are validated here, with errors naming the function
// and the argument, before the C++ API sees them as TensorViews.
#include "flexjit/flexjit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <set>
#include <random>
#include <string>
#include <vector>

#include "capi/dltensor.hpp"
#include "capi/versioned.hpp"
#include "codegen/kernel_spec.hpp"
#include "codegen/kernel_store.hpp"
#include "expr/check_report.hpp"
#include "flexjit/attention.hpp"
#include "flexjit/error.hpp"
#include "flexjit/paged_kv.hpp"
#include "flexjit/reference.hpp"
#include "flexjit/version.hpp"
#include "jit/compiler.hpp"
#include "mask/tables.hpp"
#include "tune/config_space.hpp"

struct flexjit_variant {
  flexjit::Attention attention;
};

struct flexjit_block_mask {
  flexjit::BlockMask mask;
};

namespace flexjit::capi {
namespace {

thread_local std::string last_message;
thread_local flexjit_status last_status_code = FLEXJIT_OK;

flexjit_status status_of_kind(const std::string& kind) {
  if (kind == "ExprError") return FLEXJIT_ERROR_EXPR;
  if (kind == "TemplateError") return FLEXJIT_ERROR_TEMPLATE;
  if (kind == "CompileError") return FLEXJIT_ERROR_COMPILE;
  if (kind == "DriverError") return FLEXJIT_ERROR_DRIVER;
  if (kind == "ShapeError") return FLEXJIT_ERROR_SHAPE;
  if (kind == "CacheError") return FLEXJIT_ERROR_CACHE;
  if (kind == "UsageError") return FLEXJIT_ERROR_USAGE;
  return FLEXJIT_ERROR_INTERNAL;
}

flexjit_status fail(flexjit_status status, std::string message) noexcept {
  try {
    last_message = std::move(message);
  } catch (...) {
    last_message.clear();  // no memory for the message: the status still says what happened
  }
  last_status_code = status;
  return status;
}

// Runs `body` and maps what it throws onto a status. The message of a flexjit::Error is its
// what() unchanged, so C callers read the same text as C++ callers.
template <class Body>
flexjit_status guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    return FLEXJIT_OK;
  } catch (const Error& e) {
    return fail(status_of_kind(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(FLEXJIT_ERROR_INTERNAL, std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(FLEXJIT_ERROR_INTERNAL, std::string(function) + ": internal error: " + e.what());
  } catch (...) {
    return fail(FLEXJIT_ERROR_INTERNAL, std::string(function) + ": internal error (unknown exception)");
  }
}

void require(const void* pointer, const char* function, const char* name) {
  if (pointer == nullptr) throw UsageError(std::string(function) + ": " + name + " is NULL");
}

const char* or_empty(const char* text) { return text == nullptr ? "" : text; }

char* copy_string(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return out;
}

// The value a caller stored in an enum-typed field of a C struct, read as the int it is: C lets
// any int live there, while loading an out-of-range value as the C++ enum type is undefined.
template <typename Enum>
int raw_enum(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized here");
  int value = 0;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

DType element_type(const flexjit_dtype& field, const std::string& where) {
  const int dtype = raw_enum(field);
  switch (dtype) {
    case FLEXJIT_BF16: return DType::bf16;
    case FLEXJIT_F16: return DType::f16;
    case FLEXJIT_F32: return DType::f32;
    case FLEXJIT_I32: return DType::i32;
    case FLEXJIT_U8: return DType::u8;
  }
  throw UsageError(where + " is " + std::to_string(dtype) +
                   ", not a flexjit_dtype: use FLEXJIT_BF16, FLEXJIT_F16, FLEXJIT_F32, FLEXJIT_I32 or FLEXJIT_U8");
}

Declarations declarations_of(const flexjit_variant_desc& desc, const char* function) {
  const std::string fn = function;
  Declarations out;
  if (desc.num_buffers > 0) require(desc.buffers, function, "desc->buffers (num_buffers > 0)");
  if (desc.num_params > 0) require(desc.params, function, "desc->params (num_params > 0)");
  for (size_t i = 0; i < desc.num_buffers; ++i) {
    const flexjit_buffer_decl& b = desc.buffers[i];
    const std::string where = fn + ": desc->buffers[" + std::to_string(i) + "]";
    if (b.name == nullptr || *b.name == '\0') throw UsageError(where + ".name is empty: give the name the expressions use");
    if ((b.flags & ~FLEXJIT_BUFFER_LEARNABLE) != 0)
      throw UsageError(where + ".flags is " + std::to_string(b.flags) +
                       ": only FLEXJIT_BUFFER_LEARNABLE (1) is defined");
    if (b.ndim < 1 || b.ndim > 8)
      throw UsageError(where + " ('" + b.name + "') has ndim " + std::to_string(b.ndim) + ": buffers have rank 1 to 8");
    if (b.shape == nullptr) throw UsageError(where + ".shape is NULL");
    BufferDecl decl;
    decl.name = b.name;
    decl.dtype = element_type(b.dtype, where + ".dtype");
    decl.shape.assign(b.shape, b.shape + b.ndim);
    decl.learnable = (b.flags & FLEXJIT_BUFFER_LEARNABLE) != 0;
    out.buffers.push_back(std::move(decl));
  }
  for (size_t i = 0; i < desc.num_params; ++i) {
    const flexjit_param_decl& p = desc.params[i];
    const std::string where = fn + ": desc->params[" + std::to_string(i) + "]";
    if (p.name == nullptr || *p.name == '\0') throw UsageError(where + ".name is empty: give the name the expressions use");
    ParamDecl decl;
    decl.name = p.name;
    if (raw_enum(p.type) == FLEXJIT_SCALAR_INT) decl.type = ScalarType::integer;
    else if (raw_enum(p.type) == FLEXJIT_SCALAR_FLOAT) decl.type = ScalarType::floating;
    else
      throw UsageError(where + ".type is " + std::to_string(raw_enum(p.type)) +
                       ": use FLEXJIT_SCALAR_INT or FLEXJIT_SCALAR_FLOAT");
    out.params.push_back(std::move(decl));
  }
  return out;
}

AttentionSpec spec_of(const flexjit_variant_desc& desc, const char* function) {
  AttentionSpec spec;
  spec.score_mod = or_empty(desc.score_mod);
  spec.mask_mod = or_empty(desc.mask_mod);
  spec.declarations = declarations_of(desc, function);
  spec.dtype = element_type(desc.dtype, std::string(function) + ": desc->dtype");
  if (spec.dtype != DType::bf16 && spec.dtype != DType::f16)
    throw UsageError(std::string(function) + ": desc->dtype is " + std::string(dtype_name(spec.dtype)) +
                     ": attention runs on FLEXJIT_BF16 or FLEXJIT_F16 tensors");
  spec.head_dim = desc.head_dim == 0 ? 128 : desc.head_dim;
  spec.head_dim_v = desc.head_dim_v;
  spec.arch = or_empty(desc.arch);
  if (desc.fwd_config && *desc.fwd_config) spec.fwd_config = BlockConfig::parse(desc.fwd_config);
  if (desc.bwd_dq_config && *desc.bwd_dq_config) spec.bwd_dq_config = BlockConfig::parse(desc.bwd_dq_config);
  if (desc.bwd_dkdv_config && *desc.bwd_dkdv_config) spec.bwd_dkdv_config = BlockConfig::parse(desc.bwd_dkdv_config);
  spec.rows_guaranteed_safe = desc.rows_guaranteed_safe != 0;
  if (desc.decode_config && *desc.decode_config) spec.decode_config = BlockConfig::parse(desc.decode_config);
  return spec;
}

void read_params(const flexjit_call_options& o, const Declarations& declarations, const char* function,
                 std::map<std::string, double>& params) {
  if (o.num_params > 0) require(o.params, function, "options->params (num_params > 0)");
  for (size_t i = 0; i < o.num_params; ++i) {
    const flexjit_param_value& p = o.params[i];
    const std::string where = std::string(function) + ": options->params[" + std::to_string(i) + "]";
    if (p.name == nullptr) throw UsageError(where + ".name is NULL");
    const ParamDecl* decl = declarations.find_param(p.name);
    if (decl == nullptr)
      throw UsageError(where + ": the variant declares no parameter '" + p.name + "'");
    if (raw_enum(p.type) == FLEXJIT_SCALAR_INT) {
      if (decl->type != ScalarType::integer)
        throw UsageError(where + ": parameter '" + p.name + "' is declared float: pass FLEXJIT_SCALAR_FLOAT and float_value");
      if (p.int_value < INT32_MIN || p.int_value > INT32_MAX)
        throw UsageError(where + ": int parameter '" + p.name + "' = " + std::to_string(p.int_value) +
                         " does not fit in 32 bits");
      params[p.name] = static_cast<double>(p.int_value);
    } else if (raw_enum(p.type) == FLEXJIT_SCALAR_FLOAT) {
      if (decl->type != ScalarType::floating)
        throw UsageError(where + ": parameter '" + p.name + "' is declared int: pass FLEXJIT_SCALAR_INT and int_value");
      params[p.name] = p.float_value;
    } else {
      throw UsageError(where + ".type is " + std::to_string(raw_enum(p.type)) +
                       ": use FLEXJIT_SCALAR_INT or FLEXJIT_SCALAR_FLOAT");
    }
  }
}

// Which calls write buffer gradients: the others refuse options->buffer_grads rather than
// ignore it (a caller expecting gradients would read garbage).
enum class Grads { refused, written };

// The entries of options->buffer_grads, checked against the declarations: each names a learnable
// buffer once, and every learnable buffer has one. Shapes and dtypes are checked by the caller.
std::vector<std::pair<std::string, const DLTensor*>> read_buffer_grads(const flexjit_call_options& o,
                                                                       const Declarations& declarations,
                                                                       const char* function, Grads grads) {
  const std::string fn = function;
  std::vector<std::pair<std::string, const DLTensor*>> out;
  if (o.num_buffer_grads == 0) {
    if (grads == Grads::refused) return out;
  } else if (grads == Grads::refused) {
    throw UsageError(fn + ": options->num_buffer_grads is " + std::to_string(o.num_buffer_grads) +
                     ", but only flexjit_backward and flexjit_reference_backward write buffer gradients: pass 0");
  } else {
    require(o.buffer_grads, function, "options->buffer_grads (num_buffer_grads > 0)");
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < o.num_buffer_grads; ++i) {
    const flexjit_buffer_value& g = o.buffer_grads[i];
    const std::string where = fn + ": options->buffer_grads[" + std::to_string(i) + "]";
    if (g.name == nullptr) throw UsageError(where + ".name is NULL");
    const BufferDecl* decl = declarations.find_buffer(g.name);
    if (decl == nullptr) throw UsageError(where + ": the variant declares no buffer '" + g.name + "'");
    if (!decl->learnable)
      throw UsageError(where + ": buffer '" + g.name +
                       "' is not learnable: set FLEXJIT_BUFFER_LEARNABLE in its declaration to get its gradient");
    if (!seen.insert(g.name).second)
      throw UsageError(where + " names buffer '" + g.name + "' a second time: give one gradient per buffer");
    if (g.tensor == nullptr) throw UsageError(where + ".tensor is NULL: pass a float32 DLTensor of the buffer's shape");
    out.emplace_back(g.name, g.tensor);
  }
  for (const BufferDecl& b : declarations.buffers)
    if (b.learnable && !seen.count(b.name))
      throw UsageError(fn + ": learnable buffer '" + b.name + "' has no gradient output: add {\"" + b.name +
                       "\", tensor} to options->buffer_grads (float32, the shape of the buffer's value)");
  return out;
}

// Per-sequence lengths (since 1002) are taken by forward and backward only.
enum class Lengths { refused, taken };

void refuse_lengths(const flexjit_call_options& o, const char* function, Lengths lengths) {
  if (lengths == Lengths::taken) return;
  if (o.q_lens != nullptr || o.kv_lens != nullptr || o.host_q_lens != nullptr || o.host_kv_lens != nullptr)
    throw UsageError(std::string(function) +
                     ": options->q_lens / kv_lens (per-sequence lengths) are taken by flexjit_forward, "
                     "flexjit_backward, their references and GPU block masks only: set them to NULL");
}

// Options for a GPU call: buffers become device TensorViews.
CallOptions gpu_options(const flexjit_call_options* given, const Declarations& declarations, const char* function,
                        DeviceCheck& devices, Grads grads = Grads::refused, Lengths lengths = Lengths::refused) {
  const flexjit_call_options o = read_versioned(given, function, "options", "flexjit_call_options");
  refuse_lengths(o, function, lengths);
  CallOptions out;
  if (o.q_lens != nullptr) out.seq_lens.q_lens = device_view(o.q_lens, function, "options->q_lens", 1, devices);
  if (o.kv_lens != nullptr) out.seq_lens.kv_lens = device_view(o.kv_lens, function, "options->kv_lens", 1, devices);
  out.seq_lens.host_q_lens = o.host_q_lens;
  out.seq_lens.host_kv_lens = o.host_kv_lens;
  read_params(o, declarations, function, out.values.params);
  if (o.num_buffers > 0) require(o.buffers, function, "options->buffers (num_buffers > 0)");
  for (size_t i = 0; i < o.num_buffers; ++i) {
    const flexjit_buffer_value& b = o.buffers[i];
    const std::string where = std::string(function) + ": options->buffers[" + std::to_string(i) + "]";
    if (b.name == nullptr) throw UsageError(where + ".name is NULL");
    if (declarations.find_buffer(b.name) == nullptr)
      throw UsageError(where + ": the variant declares no buffer '" + b.name + "'");
    out.values.buffers[b.name] =
        device_view(b.tensor, function, "buffer '" + std::string(b.name) + "'", -1, devices);
  }
  if (o.has_scale) out.scale = o.scale;
  if (o.backward_mode != FLEXJIT_BACKWARD_DEFAULT) {  // since 1003
    if (grads != Grads::written)
      throw UsageError(std::string(function) + ": options->backward_mode is " + std::to_string(o.backward_mode) +
                       "; only flexjit_backward takes a backward mode (leave it 0)");
    if (o.backward_mode == FLEXJIT_BACKWARD_DETERMINISTIC)
      out.backward_mode = BackwardMode::deterministic;
    else if (o.backward_mode == FLEXJIT_BACKWARD_FAST)
      out.backward_mode = BackwardMode::fast;
    else
      throw UsageError(std::string(function) + ": options->backward_mode is " + std::to_string(o.backward_mode) +
                       ", not FLEXJIT_BACKWARD_DEFAULT (0), FLEXJIT_BACKWARD_DETERMINISTIC (1) or FLEXJIT_BACKWARD_FAST (2)");
  }
  for (const auto& [name, tensor] : read_buffer_grads(o, declarations, function, grads)) {
    const std::string what = "the gradient of buffer '" + name + "'";
    const TensorView g = device_view(tensor, function, what, -1, devices);
    const auto value = out.values.buffers.find(name);
    if (value == out.values.buffers.end())
      throw UsageError(std::string(function) + ": learnable buffer '" + name +
                       "' has a gradient output but no value in options->buffers");
    if (g.dtype != DType::f32)
      throw ShapeError(std::string(function) + ": " + what + " is " + std::string(dtype_name(g.dtype)) +
                       ": buffer gradients are float32");
    if (g.shape != value->second.shape)
      throw ShapeError(std::string(function) + ": " + what + " has shape " + shape_text(g.shape) +
                       ", not the buffer's " + shape_text(value->second.shape));
    if (!g.is_contiguous())
      throw ShapeError(std::string(function) + ": " + what + " must be contiguous (row-major), got " + g.describe());
    out.buffer_grads[name] = g;
  }
  return out;
}

// Options for the CPU reference: buffers become contiguous host copies.
struct HostCall {
  EvalInputs inputs;
  std::vector<HostArray> storage;
  std::optional<double> scale;
  std::vector<std::pair<std::string, const DLTensor*>> buffer_grads;  // checked by host_options
  std::optional<std::vector<int32_t>> q_lens, kv_lens;               // since 1002
  bool has_lengths() const { return q_lens || kv_lens; }
  // Each sequence's lengths, the padded ones where none were given.
  std::vector<int32_t> q_or(int batch, int padded) const { return q_lens ? *q_lens : std::vector<int32_t>(batch, padded); }
  std::vector<int32_t> kv_or(int batch, int padded) const { return kv_lens ? *kv_lens : std::vector<int32_t>(batch, padded); }
};

// A host [B] int32 length array of the reference calls.
std::vector<int32_t> host_lengths(const DLTensor* t, const char* function, const char* name) {
  const HostArray a = host_copy(t, function, name);
  if (a.dtype != DType::i32 || a.shape.size() != 1)
    throw ShapeError(std::string(function) + ": " + name + " must be [B] int32, got " +
                     std::string(dtype_name(a.dtype)) + " of " + std::to_string(a.shape.size()) + " dimensions");
  std::vector<int32_t> out(static_cast<size_t>(a.shape[0]));
  if (!out.empty()) std::memcpy(out.data(), a.bytes.data(), out.size() * sizeof(int32_t));
  return out;
}

HostCall host_options(const flexjit_call_options* given, const Declarations& declarations, const char* function,
                      Grads grads = Grads::refused, Lengths lengths = Lengths::refused) {
  const flexjit_call_options o = read_versioned(given, function, "options", "flexjit_call_options");
  refuse_lengths(o, function, lengths);
  if (o.backward_mode != FLEXJIT_BACKWARD_DEFAULT)  // since 1003
    throw UsageError(std::string(function) + ": options->backward_mode is " + std::to_string(o.backward_mode) +
                     "; only flexjit_backward takes a backward mode (leave it 0)");
  HostCall out;
  if (o.q_lens != nullptr) out.q_lens = host_lengths(o.q_lens, function, "options->q_lens");
  if (o.kv_lens != nullptr) out.kv_lens = host_lengths(o.kv_lens, function, "options->kv_lens");
  read_params(o, declarations, function, out.inputs.params);
  if (o.num_buffers > 0) require(o.buffers, function, "options->buffers (num_buffers > 0)");
  out.storage.reserve(o.num_buffers);
  for (size_t i = 0; i < o.num_buffers; ++i) {
    const flexjit_buffer_value& b = o.buffers[i];
    const std::string where = std::string(function) + ": options->buffers[" + std::to_string(i) + "]";
    if (b.name == nullptr) throw UsageError(where + ".name is NULL");
    if (declarations.find_buffer(b.name) == nullptr)
      throw UsageError(where + ": the variant declares no buffer '" + b.name + "'");
    out.storage.push_back(host_copy(b.tensor, function, "buffer '" + std::string(b.name) + "'"));
    const HostArray& a = out.storage.back();
    out.inputs.buffers[b.name] = HostBufferView{a.bytes.data(), a.dtype, a.shape};
  }
  if (o.has_scale) out.scale = o.scale;
  out.buffer_grads = read_buffer_grads(o, declarations, function, grads);
  for (const auto& [name, tensor] : out.buffer_grads) {
    const auto value = out.inputs.buffers.find(name);
    if (value == out.inputs.buffers.end())
      throw UsageError(std::string(function) + ": learnable buffer '" + name +
                       "' has a gradient output but no value in options->buffers");
    check_host_output(tensor, function, "the gradient of buffer '" + name + "'", value->second.shape);
  }
  return out;
}

// The KV operands of a decode call (GPU or reference), with errors naming the layout expected.
void check_cache_rank(const DLTensor* t, const char* function, const char* name, bool paged) {
  if (t == nullptr) throw UsageError(std::string(function) + ": args->" + name + " is NULL: pass a DLTensor");
  if (t->ndim != 4)
    throw ShapeError(std::string(function) + ": args->" + name + " has ndim " + std::to_string(t->ndim) + ": " +
                     (paged ? "a paged cache (args->page_table set) is [num_pages, page_size, Hkv, D]"
                            : "a contiguous cache (args->page_table NULL) is [B, Hkv, S, D]"));
}

void check_int32(const DLTensor* t, const char* function, const char* name, int ndim, const char* layout) {
  if (t == nullptr) throw UsageError(std::string(function) + ": args->" + name + " is NULL: pass a DLTensor " + layout);
  if (!(t->dtype.code == kDLInt && t->dtype.bits == 32 && t->dtype.lanes == 1))
    throw ShapeError(std::string(function) + ": args->" + name + " has dtype " + dl_dtype_name(t->dtype) + ": it is " +
                     layout);
  if (t->ndim != ndim)
    throw ShapeError(std::string(function) + ": args->" + name + " has ndim " + std::to_string(t->ndim) + ": it is " +
                     layout);
}

const Attention& attention_of(const flexjit_variant* variant, const char* function) {
  require(variant, function, "variant");
  return variant->attention;
}

const BlockMask* mask_of(const flexjit_block_mask* mask) { return mask == nullptr ? nullptr : &mask->mask; }

Stream stream_of(void* stream) { return static_cast<Stream>(stream); }

// A block mask's desc read and checked, with its block sizes resolved (0 means 128).
struct MaskDesc {
  flexjit_block_mask_desc d;
  int q_block, kv_block;
};

MaskDesc read_mask_desc(const flexjit_block_mask_desc* desc, const char* fn) {
  require(desc, fn, "desc");
  MaskDesc m{read_versioned(desc, fn, "desc", "flexjit_block_mask_desc"), 0, 0};
  m.q_block = m.d.q_block == 0 ? 128 : m.d.q_block;
  m.kv_block = m.d.kv_block == 0 ? 128 : m.d.kv_block;
  return m;
}

// The device bytes of a GPU mask's tables for `m`, with the lengths `options` sets (host work only).
size_t mask_storage_bytes(const Attention& attention, const MaskDesc& m, const flexjit_call_options* options,
                          const char* fn) {
  const flexjit_call_options o = read_versioned(options, fn, "options", "flexjit_call_options");
  return BlockMask::gpu_storage_bytes(attention.mask_mod(), m.d.batch, m.d.q_heads, m.d.q_len, m.d.kv_len,
                                      o.q_lens != nullptr || o.kv_lens != nullptr, m.q_block, m.kv_block);
}

}  // namespace
}  // namespace flexjit::capi

using namespace flexjit;
using namespace flexjit::capi;

extern "C" {

int flexjit_c_api_version(void) { return FLEXJIT_C_API_VERSION; }

const char* flexjit_version_string(void) { return FLEXJIT_VERSION_STRING; }

const char* flexjit_last_error(void) { return last_message.c_str(); }

flexjit_status flexjit_last_status(void) { return last_status_code; }

const char* flexjit_status_name(flexjit_status status) {
  switch (status) {
    case FLEXJIT_OK: return "OK";
    case FLEXJIT_ERROR_EXPR: return "ExprError";
    case FLEXJIT_ERROR_TEMPLATE: return "TemplateError";
    case FLEXJIT_ERROR_COMPILE: return "CompileError";
    case FLEXJIT_ERROR_DRIVER: return "DriverError";
    case FLEXJIT_ERROR_SHAPE: return "ShapeError";
    case FLEXJIT_ERROR_CACHE: return "CacheError";
    case FLEXJIT_ERROR_USAGE: return "UsageError";
    case FLEXJIT_ERROR_INTERNAL: return "InternalError";
  }
  return "unknown";
}

void flexjit_free(void* pointer) { std::free(pointer); }

int flexjit_gpu_available(void) {
  int available = 0;
  const flexjit_status status = guarded("flexjit_gpu_available", [&] {
    std::string why;
    if (gpu_available(&why)) {
      available = 1;
      return;
    }
    throw DriverError(why, -1);
  });
  (void)status;
  return available;
}

flexjit_status flexjit_check(const flexjit_variant_desc* desc, flexjit_check_result* result) {
  return guarded("flexjit_check", [&] {
    const char* fn = "flexjit_check";
    require(result, fn, "result");
    const size_t result_size = output_size<flexjit_check_result>(result->struct_size, fn, "result", "flexjit_check_result");
    require(desc, fn, "desc");
    const flexjit_variant_desc d = read_versioned(desc, fn, "desc", "flexjit_variant_desc");
    const Declarations declarations = declarations_of(d, fn);
    std::optional<std::string> score, mask;
    if (d.score_mod && *d.score_mod) score = d.score_mod;
    if (d.mask_mod && *d.mask_mod) mask = d.mask_mod;
    const std::string report = expr::check_report(score, mask, declarations);  // throws both mods' errors
    flexjit_check_result out{};
    out.struct_size = result->struct_size;
    std::string cuda = emit_mod_args_struct(declarations);
    std::string score_canonical, mask_canonical, gradient;
    if (score) {
      const Expr e = Expr::parse(ModKind::score, *score, declarations);
      score_canonical = e.canonical();
      gradient = e.gradient().canonical();
      cuda += e.emit_cuda("score_mod");
    }
    if (mask) {
      const Expr e = Expr::parse(ModKind::mask, *mask, declarations);
      mask_canonical = e.canonical();
      cuda += e.emit_cuda("mask_mod");
    }
    // Allocate everything before handing anything over, so a failure leaks nothing.
    struct Owned {
      std::vector<char*> strings;
      ~Owned() {
        for (char* s : strings) std::free(s);
      }
    } owned;
    for (const std::string* s : std::initializer_list<const std::string*>{&report, &score_canonical, &mask_canonical, &gradient, &cuda})
      owned.strings.push_back(copy_string(*s));
    out.report = owned.strings[0];
    out.score_canonical = owned.strings[1];
    out.mask_canonical = owned.strings[2];
    out.score_gradient = owned.strings[3];
    out.cuda = owned.strings[4];
    owned.strings.clear();
    std::memcpy(static_cast<void*>(result), &out, result_size);
    // Fields a newer caller knows and this library does not: zeroed.
    if (result->struct_size > result_size)
      std::memset(reinterpret_cast<char*>(result) + result_size, 0, result->struct_size - result_size);
  });
}

void flexjit_check_result_free(flexjit_check_result* result) {
  if (result == nullptr || result->struct_size < sizeof(size_t)) return;
  char* flexjit_check_result::*fields[] = {&flexjit_check_result::report, &flexjit_check_result::score_canonical,
                                           &flexjit_check_result::mask_canonical,
                                           &flexjit_check_result::score_gradient, &flexjit_check_result::cuda};
  for (auto field : fields) {
    const size_t end = static_cast<size_t>(reinterpret_cast<char*>(&(result->*field)) - reinterpret_cast<char*>(result)) +
                       sizeof(char*);
    if (end > result->struct_size) continue;
    std::free(result->*field);
    result->*field = nullptr;
  }
}

flexjit_status flexjit_variant_create(const flexjit_variant_desc* desc, flexjit_variant** variant) {
  if (variant != nullptr) *variant = nullptr;
  return guarded("flexjit_variant_create", [&] {
    const char* fn = "flexjit_variant_create";
    require(variant, fn, "variant (the output)");
    require(desc, fn, "desc");
    const flexjit_variant_desc d = read_versioned(desc, fn, "desc", "flexjit_variant_desc");
    *variant = new flexjit_variant{Attention(spec_of(d, fn))};
  });
}

void flexjit_variant_destroy(flexjit_variant* variant) { delete variant; }

flexjit_status flexjit_block_mask_create(const flexjit_variant* variant, const flexjit_block_mask_desc* desc,
                                         const flexjit_call_options* options, void* stream,
                                         flexjit_block_mask** mask) {
  if (mask != nullptr) *mask = nullptr;
  return guarded("flexjit_block_mask_create", [&] {
    const char* fn = "flexjit_block_mask_create";
    const Attention& attention = attention_of(variant, fn);
    require(mask, fn, "mask (the output)");
    const MaskDesc m = read_mask_desc(desc, fn);
    const flexjit_block_mask_desc& d = m.d;
    const int q_block = m.q_block, kv_block = m.kv_block;
    const Declarations& declarations = attention.spec().declarations;
    if (d.storage == nullptr && d.storage_bytes != 0)
      throw UsageError(std::string(fn) + ": desc->storage_bytes is " + std::to_string(d.storage_bytes) +
                       " but desc->storage is NULL: pass the memory, or 0 bytes for tables the mask allocates");
    if (raw_enum(d.device) == FLEXJIT_MASK_GPU) {
      if (d.storage != nullptr)  // before the device is looked at, as every argument is
        mask::check_table_storage(d.storage, d.storage_bytes, mask_storage_bytes(attention, m, options, fn));
      DeviceCheck devices;
      const CallOptions call = gpu_options(options, declarations, fn, devices, Grads::refused, Lengths::taken);
      *mask = new flexjit_block_mask{BlockMask::build_on_gpu(attention.mask_mod(), d.batch, d.q_heads, d.q_len,
                                                             d.kv_len, call.seq_lens, call.values, stream_of(stream),
                                                             q_block, kv_block, attention.spec().arch, d.storage,
                                                             d.storage_bytes)};
    } else if (raw_enum(d.device) == FLEXJIT_MASK_CPU) {
      if (d.storage != nullptr)
        throw UsageError(std::string(fn) + ": desc->storage is set for a CPU mask: caller storage is for GPU "
                         "masks (FLEXJIT_MASK_GPU); leave it NULL");
      const HostCall call = host_options(options, declarations, fn);
      *mask = new flexjit_block_mask{BlockMask::build_on_cpu(attention.mask_mod(), d.batch, d.q_heads, d.q_len,
                                                             d.kv_len, call.inputs, q_block, kv_block)};
    } else {
      throw UsageError(std::string(fn) + ": desc->device is " + std::to_string(raw_enum(d.device)) +
                       ": use FLEXJIT_MASK_GPU or FLEXJIT_MASK_CPU");
    }
  });
}

flexjit_status flexjit_block_mask_storage_bytes(const flexjit_variant* variant, const flexjit_block_mask_desc* desc,
                                               const flexjit_call_options* options, size_t* bytes) {
  if (bytes != nullptr) *bytes = 0;
  return guarded("flexjit_block_mask_storage_bytes", [&] {
    const char* fn = "flexjit_block_mask_storage_bytes";
    const Attention& attention = attention_of(variant, fn);
    require(bytes, fn, "bytes (the output)");
    *bytes = mask_storage_bytes(attention, read_mask_desc(desc, fn), options, fn);
  });
}

void flexjit_block_mask_destroy(flexjit_block_mask* mask) { delete mask; }

flexjit_status flexjit_block_mask_get_info(const flexjit_block_mask* mask, flexjit_block_mask_info* info) {
  return guarded("flexjit_block_mask_get_info", [&] {
    const char* fn = "flexjit_block_mask_get_info";
    require(mask, fn, "mask");
    require(info, fn, "info");
    const size_t size = output_size<flexjit_block_mask_info>(info->struct_size, fn, "info", "flexjit_block_mask_info");
    flexjit_block_mask_info out{};
    out.struct_size = info->struct_size;
    const BlockMaskShape& s = mask->mask.shape();
    out.batch = s.batch;
    out.heads = s.heads;
    out.q_len = s.q_len;
    out.kv_len = s.kv_len;
    out.q_block = s.q_block;
    out.kv_block = s.kv_block;
    out.density = mask->mask.density();
    out.partial_fraction = mask->mask.partial_fraction();
    std::memcpy(static_cast<void*>(info), &out, size);
    if (info->struct_size > size) std::memset(reinterpret_cast<char*>(info) + size, 0, info->struct_size - size);
  });
}

flexjit_status flexjit_forward(const flexjit_variant* variant, const DLTensor* q, const DLTensor* k,
                               const DLTensor* v, const DLTensor* out, const DLTensor* lse,
                               const flexjit_block_mask* mask, void* stream, const flexjit_call_options* options) {
  return guarded("flexjit_forward", [&] {
    const char* fn = "flexjit_forward";
    const Attention& attention = attention_of(variant, fn);
    DeviceCheck devices;
    const TensorView tq = device_view(q, fn, "q", 4, devices), tk = device_view(k, fn, "k", 4, devices),
                     tv = device_view(v, fn, "v", 4, devices), to = device_view(out, fn, "out", 4, devices);
    TensorView tl;
    tl.dtype = DType::f32;
    if (lse != nullptr) tl = device_view(lse, fn, "lse", 3, devices);
    const CallOptions call = gpu_options(options, attention.spec().declarations, fn, devices, Grads::refused, Lengths::taken);
    attention.forward(tq, tk, tv, to, tl, mask_of(mask), stream_of(stream), call);
  });
}

flexjit_status flexjit_backward(const flexjit_variant* variant, const DLTensor* q, const DLTensor* k,
                                const DLTensor* v, const DLTensor* out, const DLTensor* lse, const DLTensor* dout,
                                const DLTensor* dq, const DLTensor* dk, const DLTensor* dv,
                                const flexjit_block_mask* mask, void* stream, const flexjit_call_options* options) {
  return guarded("flexjit_backward", [&] {
    const char* fn = "flexjit_backward";
    const Attention& attention = attention_of(variant, fn);
    DeviceCheck devices;
    const TensorView tq = device_view(q, fn, "q", 4, devices), tk = device_view(k, fn, "k", 4, devices),
                     tv = device_view(v, fn, "v", 4, devices), to = device_view(out, fn, "out", 4, devices),
                     tl = device_view(lse, fn, "lse", 3, devices), tdo = device_view(dout, fn, "dout", 4, devices),
                     tdq = device_view(dq, fn, "dq", 4, devices), tdk = device_view(dk, fn, "dk", 4, devices),
                     tdv = device_view(dv, fn, "dv", 4, devices);
    const CallOptions call =
        gpu_options(options, attention.spec().declarations, fn, devices, Grads::written, Lengths::taken);
    attention.backward(tq, tk, tv, to, tl, tdo, tdq, tdk, tdv, mask_of(mask), stream_of(stream), call);
  });
}

flexjit_status flexjit_decode(const flexjit_variant* variant, const flexjit_decode_args* args, void* stream,
                              const flexjit_call_options* options) {
  return guarded("flexjit_decode", [&] {
    const char* fn = "flexjit_decode";
    const Attention& attention = attention_of(variant, fn);
    require(args, fn, "args");
    const flexjit_decode_args a = read_versioned(args, fn, "args", "flexjit_decode_args");
    const bool paged = a.page_table != nullptr;
    check_cache_rank(a.k, fn, "k", paged);
    check_cache_rank(a.v, fn, "v", paged);
    check_int32(a.seq_lens, fn, "seq_lens", 1, "[B] int32");
    if (paged) check_int32(a.page_table, fn, "page_table", 2, "[B, max_pages] int32");
    if (a.max_seq_len < 0)
      throw UsageError(std::string(fn) + ": args->max_seq_len is " + std::to_string(a.max_seq_len) +
                       ": give 0 (the cache's capacity) or an upper bound of the lengths");
    DeviceCheck devices;
    const TensorView tq = device_view(a.q, fn, "args->q", 4, devices);
    const TensorView tk = device_view(a.k, fn, "args->k", 4, devices), tv = device_view(a.v, fn, "args->v", 4, devices);
    const TensorView lens = device_view(a.seq_lens, fn, "args->seq_lens", 1, devices);
    const TensorView to = device_view(a.out, fn, "args->out", 4, devices);
    TensorView tl;
    tl.dtype = DType::f32;
    if (a.lse != nullptr) tl = device_view(a.lse, fn, "args->lse", 3, devices);
    KVCache kv = paged ? KVCache::paged(tk, tv, device_view(a.page_table, fn, "args->page_table", 2, devices), lens)
                       : KVCache::contiguous(tk, tv, lens);
    kv.host_seq_lens = a.host_seq_lens;
    kv.host_page_table = a.host_page_table;
    kv.max_seq_len = a.max_seq_len;
    if (!paged && a.host_page_table != nullptr)
      throw UsageError(std::string(fn) + ": args->host_page_table is set but args->page_table is NULL (a contiguous "
                       "cache has no page table): set both or neither");
    const CallOptions call = gpu_options(options, attention.spec().declarations, fn, devices);
    attention.decode(tq, kv, to, tl, stream_of(stream), call);
  });
}

flexjit_status flexjit_check_buffer_errors(void) {
  return guarded("flexjit_check_buffer_errors", [] { check_buffer_errors(); });
}

flexjit_status flexjit_warm_up(const flexjit_variant* variant, const flexjit_problem_size* size, int backward,
                               const char* arch, int jobs, size_t* kernels, size_t* from_cache) {
  return guarded("flexjit_warm_up", [&] {
    const char* fn = "flexjit_warm_up";
    const Attention& attention = attention_of(variant, fn);
    require(size, fn, "size");
    const flexjit_problem_size s = read_versioned(size, fn, "size", "flexjit_problem_size");
    const auto warmed = attention.warm_up({s.batch, s.q_heads, s.kv_heads, s.q_len, s.kv_len}, backward != 0,
                                          or_empty(arch), jobs);
    size_t cached = 0;
    for (const WarmedKernel& w : warmed) cached += w.from_cache ? 1 : 0;
    if (kernels != nullptr) *kernels = warmed.size();
    if (from_cache != nullptr) *from_cache = cached;
  });
}

flexjit_status flexjit_tune(const flexjit_variant* variant, const flexjit_problem_size* size, int backward,
                            const flexjit_call_options* options, void* stream) {
  return guarded("flexjit_tune", [&] {
    const char* fn = "flexjit_tune";
    const Attention& attention = attention_of(variant, fn);
    require(size, fn, "size");
    const flexjit_problem_size s = read_versioned(size, fn, "size", "flexjit_problem_size");
    for (const auto& [name, value] : {std::pair<const char*, int>{"batch", s.batch}, {"q_heads", s.q_heads},
                                      {"kv_heads", s.kv_heads}, {"q_len", s.q_len}, {"kv_len", s.kv_len}})
      if (value < 1) throw UsageError(std::string(fn) + ": size->" + name + " is " + std::to_string(value) + ": must be >= 1");
    DeviceCheck devices;
    CallOptions call = gpu_options(options, attention.spec().declarations, fn, devices);
    const AttentionSpec& spec = attention.spec();
    // The backward of a variant with learnable buffers writes their gradients: scratch outputs.
    std::vector<DeviceBuffer> grad_storage;
    if (backward)
      for (const BufferDecl& b : spec.declarations.buffers) {
        const auto value = call.values.buffers.find(b.name);
        if (!b.learnable || value == call.values.buffers.end()) continue;
        int64_t n = 1;
        for (int64_t e : value->second.shape) n *= e;
        grad_storage.push_back(DeviceBuffer::allocate(static_cast<size_t>(n) * sizeof(float)));
        call.buffer_grads[b.name] = TensorView::contiguous(grad_storage.back().data(), DType::f32, value->second.shape);
      }
    const int64_t B = s.batch, Hq = s.q_heads, Hkv = s.kv_heads, Sq = s.q_len, Skv = s.kv_len;
    const int64_t D = spec.head_dim, Dv = spec.head_dim_v;
    const size_t elem = dtype_size(spec.dtype);
    // Random inputs (timing on zeros or uninitialised memory would not be representative).
    std::mt19937 rng(12345);
    std::normal_distribution<float> normal;
    auto random_tensor = [&](const std::vector<int64_t>& shape, DeviceBuffer& storage) {
      int64_t n = 1;
      for (int64_t e : shape) n *= e;
      std::vector<uint16_t> bits(static_cast<size_t>(n));
      for (auto& b : bits) {
        const float x = normal(rng);
        uint32_t u;
        std::memcpy(&u, &x, 4);
        // bf16: the top half of a normal sample; f16: its sign and mantissa with magnitude in [0.5, 1).
        b = spec.dtype == DType::bf16 ? static_cast<uint16_t>(u >> 16)
                                      : static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x3800u | ((u >> 13) & 0x3ffu));
      }
      storage = DeviceBuffer::from_host(bits);
      return TensorView::contiguous(storage.data(), spec.dtype, shape);
    };
    DeviceBuffer bq, bk, bv, bo, bl, bdo, bdq, bdk, bdv;
    const TensorView q = random_tensor({B, Hq, Sq, D}, bq), k = random_tensor({B, Hkv, Skv, D}, bk),
                     v = random_tensor({B, Hkv, Skv, Dv}, bv), dout = random_tensor({B, Hq, Sq, Dv}, bdo);
    bo = DeviceBuffer::allocate(static_cast<size_t>(B * Hq * Sq * Dv) * elem);
    bl = DeviceBuffer::allocate(static_cast<size_t>(B * Hq * Sq) * sizeof(float));
    const TensorView o = TensorView::contiguous(bo.data(), spec.dtype, {B, Hq, Sq, Dv});
    const TensorView l = TensorView::contiguous(bl.data(), DType::f32, {B, Hq, Sq});
    std::optional<BlockMask> mask;
    if (!attention.mask_mod().is_always_true())
      mask = attention.block_mask(s.batch, s.q_heads, s.q_len, s.kv_len, stream_of(stream), call.values);
    attention.forward(q, k, v, o, l, mask ? &*mask : nullptr, stream_of(stream), call);
    if (backward) {
      bdq = DeviceBuffer::allocate(static_cast<size_t>(B * Hq * Sq * D) * elem);
      bdk = DeviceBuffer::allocate(static_cast<size_t>(B * Hkv * Skv * D) * elem);
      bdv = DeviceBuffer::allocate(static_cast<size_t>(B * Hkv * Skv * Dv) * elem);
      attention.backward(q, k, v, o, l, dout, TensorView::contiguous(bdq.data(), spec.dtype, {B, Hq, Sq, D}),
                         TensorView::contiguous(bdk.data(), spec.dtype, {B, Hkv, Skv, D}),
                         TensorView::contiguous(bdv.data(), spec.dtype, {B, Hkv, Skv, Dv}), mask ? &*mask : nullptr,
                         stream_of(stream), call);
    }
    synchronize(stream_of(stream));
    check_buffer_errors();
  });
}

flexjit_status flexjit_emit(const flexjit_variant* variant, const flexjit_emit_options* options, char** data,
                            size_t* size) {
  if (data != nullptr) *data = nullptr;
  if (size != nullptr) *size = 0;
  return guarded("flexjit_emit", [&] {
    const char* fn = "flexjit_emit";
    const Attention& attention = attention_of(variant, fn);
    require(data, fn, "data (the output)");
    const flexjit_emit_options o = read_versioned(options, fn, "options", "flexjit_emit_options");
    const std::string family_text = o.family && *o.family ? o.family : "fwd";
    const std::string format = o.format && *o.format ? o.format : "cu";
    const std::string arch = o.arch && *o.arch ? o.arch : "sm_90a";
    if (format != "cu" && format != "ptx" && format != "cubin" && format != "context")
      throw UsageError(std::string(fn) + ": options->format '" + format + "' is not a format: use cu, ptx, cubin or context");
    jit::validate_arch(arch);
    const AttentionSpec& a = attention.spec();
    codegen::KernelSpec spec;
    spec.family = codegen::parse_family(family_text);
    spec.declarations = a.declarations;
    spec.score_mod = attention.score_mod();
    spec.mask_mod = attention.mask_mod();
    spec.dtype = a.dtype;
    spec.set_head_dims(a.head_dim, a.head_dim_v, arch);  // the tiles a call on `arch` takes
    spec.gqa_group = o.gqa_group == 0 ? 1 : o.gqa_group;
    spec.is_divisible = o.divisible != 0;
    spec.rows_guaranteed_safe = a.rows_guaranteed_safe;
    spec.has_block_mask =
        o.no_block_mask == 0 && codegen::is_attention_family(spec.family) && spec.family != codegen::Family::bwd_preprocess;
    spec.has_full_blocks = spec.has_block_mask;
    spec.sparse_q_block = o.q_block == 0 ? 128 : o.q_block;
    spec.sparse_kv_block = o.kv_block == 0 ? 128 : o.kv_block;
    // Without a config: what a call on `arch` launches when tuning is off (as `flexjit emit`).
    spec.config = codegen::default_config(spec.family, spec.head_dim, spec.head_dim_v);
    spec.config = o.config && *o.config ? BlockConfig::parse(o.config) : tune::default_for(spec, arch);
    codegen::check_shared_memory(spec, arch);
    // The form that runs (lean where the full one spills): for PTX and cubin the compile decides.
    std::string bytes;
    if (format == "context") {
      bytes = codegen::template_context(codegen::compiled_form(spec, arch)).dump(2) + "\n";
    } else if (format == "cu") {
      bytes = codegen::self_contained_source(codegen::render(codegen::compiled_form(spec, arch)));
    } else {
      const jit::CompiledKernel compiled = codegen::compile_kernel(spec, arch).kernel;
      bytes = format == "ptx" ? compiled.ptx : compiled.cubin;
    }
    char* out = static_cast<char*>(std::malloc(bytes.size() + 1));
    if (out == nullptr) throw std::bad_alloc();
    std::memcpy(out, bytes.data(), bytes.size());
    out[bytes.size()] = '\0';
    *data = out;
    if (size != nullptr) *size = bytes.size();
  });
}

flexjit_status flexjit_reference_forward(const flexjit_variant* variant, const DLTensor* q, const DLTensor* k,
                                         const DLTensor* v, const DLTensor* out, const DLTensor* lse,
                                         const flexjit_call_options* options) {
  return guarded("flexjit_reference_forward", [&] {
    const char* fn = "flexjit_reference_forward";
    const Attention& attention = attention_of(variant, fn);
    const HostTensor hq = host_input(q, fn, "q", 4), hk = host_input(k, fn, "k", 4), hv = host_input(v, fn, "v", 4);
    const ReferenceShape shape = reference_shape(hq, hk, hv, fn);
    check_host_output(out, fn, "out", {shape.batch, shape.q_heads, shape.q_len, shape.head_dim_v});
    if (lse != nullptr) check_host_output(lse, fn, "lse", {shape.batch, shape.q_heads, shape.q_len});
    const HostCall call = host_options(options, attention.spec().declarations, fn, Grads::refused, Lengths::taken);
    const double scale = call.scale.value_or(1.0 / std::sqrt(static_cast<double>(shape.head_dim)));
    const ReferenceForward r =
        call.has_lengths()
            ? reference_forward_varlen(attention.score_mod(), attention.mask_mod(), call.inputs, shape, hq.values,
                                       hk.values, hv.values, call.q_or(shape.batch, shape.q_len),
                                       call.kv_or(shape.batch, shape.kv_len), scale)
            : reference_forward(attention.score_mod(), attention.mask_mod(), call.inputs, shape, hq.values, hk.values,
                                hv.values, scale);
    write_host_output(out, r.out);
    if (lse != nullptr) write_host_output(lse, r.lse);
  });
}

flexjit_status flexjit_reference_backward(const flexjit_variant* variant, const DLTensor* q, const DLTensor* k,
                                          const DLTensor* v, const DLTensor* dout, const DLTensor* dq,
                                          const DLTensor* dk, const DLTensor* dv, const flexjit_call_options* options) {
  return guarded("flexjit_reference_backward", [&] {
    const char* fn = "flexjit_reference_backward";
    const Attention& attention = attention_of(variant, fn);
    const HostTensor hq = host_input(q, fn, "q", 4), hk = host_input(k, fn, "k", 4), hv = host_input(v, fn, "v", 4),
                     hdo = host_input(dout, fn, "dout", 4);
    const ReferenceShape shape = reference_shape(hq, hk, hv, fn);
    if (hdo.shape != std::vector<int64_t>{shape.batch, shape.q_heads, shape.q_len, shape.head_dim_v})
      throw ShapeError(std::string(fn) + ": dout has shape " + shape_text(hdo.shape) + ", not the output's " +
                       shape_text({shape.batch, shape.q_heads, shape.q_len, shape.head_dim_v}) + " [B, Hq, Sq, Dv]");
    check_host_output(dq, fn, "dq", hq.shape);
    check_host_output(dk, fn, "dk", hk.shape);
    check_host_output(dv, fn, "dv", hv.shape);
    const HostCall call = host_options(options, attention.spec().declarations, fn, Grads::written, Lengths::taken);
    if (call.has_lengths() && !call.buffer_grads.empty())
      throw UsageError(std::string(fn) + ": learnable-buffer gradients are not computed with per-sequence lengths "
                       "(options->q_lens / kv_lens)");
    const double scale = call.scale.value_or(1.0 / std::sqrt(static_cast<double>(shape.head_dim)));
    const ReferenceBackward r =
        call.has_lengths()
            ? reference_backward_varlen(attention.score_mod(), attention.mask_mod(), call.inputs, shape, hq.values,
                                        hk.values, hv.values, hdo.values, call.q_or(shape.batch, shape.q_len),
                                        call.kv_or(shape.batch, shape.kv_len), scale)
            : reference_backward(attention.score_mod(), attention.mask_mod(), call.inputs, shape, hq.values, hk.values,
                                 hv.values, hdo.values, scale);
    std::map<std::string, std::vector<double>> buffer_grads;
    if (!call.buffer_grads.empty())
      buffer_grads = reference_buffer_gradients(attention.score_mod(), attention.mask_mod(), call.inputs, shape,
                                                hq.values, hk.values, hv.values, hdo.values, scale);
    write_host_output(dq, r.dq);
    write_host_output(dk, r.dk);
    write_host_output(dv, r.dv);
    for (const auto& [name, tensor] : call.buffer_grads) {
      const auto g = buffer_grads.find(name);
      if (g == buffer_grads.end())  // every learnable buffer is read by score_mod (checked at creation)
        throw std::logic_error("no reference gradient for learnable buffer '" + name + "'");
      write_host_output(tensor, g->second);
    }
  });
}

flexjit_status flexjit_reference_decode(const flexjit_variant* variant, const flexjit_decode_args* args,
                                        const flexjit_call_options* options) {
  return guarded("flexjit_reference_decode", [&] {
    const char* fn = "flexjit_reference_decode";
    const Attention& attention = attention_of(variant, fn);
    require(args, fn, "args");
    const flexjit_decode_args a = read_versioned(args, fn, "args", "flexjit_decode_args");
    if (a.host_seq_lens != nullptr || a.host_page_table != nullptr || a.max_seq_len != 0)
      throw UsageError(std::string(fn) + ": args->host_seq_lens, host_page_table and max_seq_len are for "
                       "flexjit_decode; the reference reads seq_lens and page_table from host memory: leave them 0");
    const bool paged = a.page_table != nullptr;
    check_cache_rank(a.k, fn, "k", paged);
    check_cache_rank(a.v, fn, "v", paged);
    check_int32(a.seq_lens, fn, "seq_lens", 1, "[B] int32");
    if (paged) check_int32(a.page_table, fn, "page_table", 2, "[B, max_pages] int32");
    const HostTensor hq = host_input(a.q, fn, "args->q", 4), hk = host_input(a.k, fn, "args->k", 4),
                     hv = host_input(a.v, fn, "args->v", 4);
    // host_input reads floats only: the int32 lengths and table are copied as they are.
    auto int_values = [&](const DLTensor* t, const char* name) {
      const HostArray raw = host_copy(t, fn, std::string("args->") + name);
      std::vector<int32_t> out(raw.bytes.size() / 4);
      if (!out.empty()) std::memcpy(out.data(), raw.bytes.data(), out.size() * 4);
      return std::make_pair(out, raw.shape);
    };
    const auto [lens, lens_shape] = int_values(a.seq_lens, "seq_lens");
    const int64_t B = hq.shape[0], Hq = hq.shape[1], Sq = hq.shape[2], D = hq.shape[3];
    if (lens_shape[0] != B)
      throw ShapeError(std::string(fn) + ": args->seq_lens has " + std::to_string(lens_shape[0]) +
                       " lengths; q has a batch of " + std::to_string(B));
    ReferenceShape shape;
    std::vector<double> k = hk.values, v = hv.values;
    int64_t Hkv = 0;
    if (paged) {
      const auto [table, table_shape] = int_values(a.page_table, "page_table");
      const int64_t pages = hk.shape[0], page_size = hk.shape[1];
      Hkv = hk.shape[2];
      if (hv.shape[0] != pages || hv.shape[1] != page_size || hv.shape[2] != Hkv)
        throw ShapeError(std::string(fn) + ": args->v " + shape_text(hv.shape) +
                         " must have the pages, page size and heads of args->k " + shape_text(hk.shape));
      if (table_shape[0] != B)
        throw ShapeError(std::string(fn) + ": args->page_table has " + std::to_string(table_shape[0]) +
                         " rows; q has a batch of " + std::to_string(B));
      if (table_shape[1] < 1 || table_shape[1] > INT32_MAX)
        throw ShapeError(std::string(fn) + ": args->page_table has " + std::to_string(table_shape[1]) +
                         " columns; it needs 1 to 2^31-1 (entries per sequence)");
      const int max_pages = static_cast<int>(table_shape[1]);
      // The reference's contiguous copy holds the longest sequence, not the table's capacity.
      int view_len = 1;
      for (int32_t len : lens) view_len = std::max(view_len, len);
      k = gather_pages_on_host(hk.values, table, lens, static_cast<int>(B), static_cast<int>(Hkv),
                               static_cast<int>(hk.shape[3]), static_cast<int>(page_size), max_pages,
                               static_cast<int>(pages), view_len);
      v = gather_pages_on_host(hv.values, table, lens, static_cast<int>(B), static_cast<int>(Hkv),
                               static_cast<int>(hv.shape[3]), static_cast<int>(page_size), max_pages,
                               static_cast<int>(pages), view_len);
      shape.kv_len = view_len;
    } else {
      Hkv = hk.shape[1];
      if (hk.shape[0] != B || hv.shape[0] != B || hv.shape[1] != Hkv || hv.shape[2] != hk.shape[2])
        throw ShapeError(std::string(fn) + ": q " + shape_text(hq.shape) + ", k " + shape_text(hk.shape) + " and v " +
                         shape_text(hv.shape) + " do not fit together: q [B, Hq, Sq, D], k [B, Hkv, S, D], v [B, Hkv, S, Dv]");
      shape.kv_len = static_cast<int>(hk.shape[2]);
      validate_kv_on_host(lens.data(), static_cast<int>(B), shape.kv_len);
    }
    const int64_t Dk = hk.shape[3], Dv = hv.shape[3];
    if (Dk != D)
      throw ShapeError(std::string(fn) + ": args->k has head dim " + std::to_string(Dk) + " but q has " + std::to_string(D));
    if (Hq % Hkv != 0)
      throw ShapeError(std::string(fn) + ": q has " + std::to_string(Hq) + " heads, not a multiple of the cache's " +
                       std::to_string(Hkv) + " kv heads");
    shape.batch = static_cast<int>(B);
    shape.q_heads = static_cast<int>(Hq);
    shape.kv_heads = static_cast<int>(Hkv);
    shape.q_len = static_cast<int>(Sq);
    shape.head_dim = static_cast<int>(D);
    shape.head_dim_v = static_cast<int>(Dv);
    check_host_output(a.out, fn, "args->out", {B, Hq, Sq, Dv});
    if (a.lse != nullptr) check_host_output(a.lse, fn, "args->lse", {B, Hq, Sq});
    const HostCall call = host_options(options, attention.spec().declarations, fn);
    const double scale = call.scale.value_or(1.0 / std::sqrt(static_cast<double>(D)));
    const ReferenceForward r = reference_forward_ragged(attention.score_mod(), attention.mask_mod(), call.inputs, shape,
                                                        hq.values, k, v, lens, scale);
    write_host_output(a.out, r.out);
    if (a.lse != nullptr) write_host_output(a.lse, r.lse);
  });
}

}  // extern "C"
