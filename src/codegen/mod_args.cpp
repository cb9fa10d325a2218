#include "codegen/mod_args.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "flexjit/error.hpp"

namespace flexjit::codegen {

namespace {

std::string shortest(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

template <class T>
void put(std::vector<unsigned char>& bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return out + "]";
}

}  // namespace

std::set<std::string> names_read(std::initializer_list<const Expr*> exprs) {
  std::set<std::string> names;
  for (const Expr* e : exprs) {
    for (const auto& n : e->buffers_read()) names.insert(n);
    for (const auto& n : e->params_read()) names.insert(n);
  }
  return names;
}

std::vector<unsigned char> pack_mod_args(const Declarations& declarations, const ModValues& values,
                                         const std::set<std::string>& required,
                                         const std::string& what) {
  for (const auto& [name, value] : values.params) {
    (void)value;
    if (declarations.find_param(name) == nullptr)
      throw UsageError(what + ": value given for parameter '" + name +
                       "', which the variant does not declare");
  }
  for (const auto& [name, view] : values.buffers) {
    (void)view;
    if (declarations.find_buffer(name) == nullptr)
      throw UsageError(what + ": buffer '" + name + "' given, but the variant does not declare it");
  }
  const ModArgsLayout layout = mod_args_layout(declarations);
  std::vector<unsigned char> bytes(layout.size, 0);
  for (const auto& field : layout.fields) {
    const bool needed = required.count(field.name) > 0;
    if (!field.is_buffer) {
      auto it = values.params.find(field.name);
      if (it == values.params.end() && !needed) continue;
      if (it == values.params.end())
        throw UsageError(what + ": no value for parameter '" + field.name +
                         "' (pass it in ModValues::params, or --param " + field.name + "=VALUE)");
      const double value = it->second;
      if (field.type == ScalarType::integer) {
        if (value != std::floor(value) || value < -2147483648.0 || value > 2147483647.0)
          throw UsageError(what + ": parameter '" + field.name + "' is an int, but " +
                           std::to_string(value) + " is not a 32-bit integer");
        put<int32_t>(bytes, field.offset, static_cast<int32_t>(value));
      } else {
        // Infinities and NaN pass as given; a finite value beyond a float's range would silently
        // become an infinity in the kernel (the CPU reference keeps the double).
        if (std::isfinite(value) && std::isinf(static_cast<float>(value)))
          throw UsageError(what + ": parameter '" + field.name + "' is a float, but " + shortest(value) +
                           " is beyond the range of a 32-bit float (largest magnitude about 3.4e38)");
        put<float>(bytes, field.offset, static_cast<float>(value));
      }
      continue;
    }
    const BufferDecl& decl = *declarations.find_buffer(field.name);
    auto it = values.buffers.find(field.name);
    if (it == values.buffers.end() && !needed) continue;
    if (it == values.buffers.end())
      throw UsageError(what + ": no device tensor for buffer '" + field.name +
                       "' (pass it in ModValues::buffers, or --buffer " + field.name + "=FILE.npy)");
    const TensorView& view = it->second;
    if (view.data == nullptr)
      throw ShapeError(what + ": buffer '" + field.name + "' has a null data pointer");
    if (view.dtype != decl.dtype)
      throw ShapeError(what + ": buffer '" + field.name + "' is declared " +
                       std::string(dtype_name(decl.dtype)) + " but the tensor given is " +
                       std::string(dtype_name(view.dtype)));
    if (view.shape.size() != decl.shape.size() || view.strides.size() != view.shape.size())
      throw ShapeError(what + ": buffer '" + field.name + "' is declared with rank " +
                       std::to_string(decl.shape.size()) + " " + shape_text(decl.shape) +
                       " but the tensor given has rank " + std::to_string(view.shape.size()));
    for (size_t d = 0; d < decl.shape.size(); ++d) {
      if (decl.shape[d] >= 0 && view.shape[d] != decl.shape[d])
        throw ShapeError(what + ": buffer '" + field.name + "' dimension " + std::to_string(d) +
                         " is declared " + std::to_string(decl.shape[d]) + " but the tensor has " +
                         std::to_string(view.shape[d]) + " (declared shape " +
                         shape_text(decl.shape) + ")");
      if (view.shape[d] < 0)
        throw ShapeError(what + ": buffer '" + field.name + "' has a negative extent");
    }
    put<const void*>(bytes, field.offset, view.data);
    for (size_t d = 0; d < field.rank; ++d) {
      put<int64_t>(bytes, field.offset + 8 + 8 * d, view.shape[d]);
      put<int64_t>(bytes, field.offset + 8 + 8 * field.rank + 8 * d, view.strides[d]);
    }
  }
  return bytes;
}

bool buffer_offsets_fit_32_bits(const ModValues& values, const std::set<std::string>& read) {
  constexpr int64_t kLimit = 0x7fffffff;
  bool any = false;
  for (const auto& [name, view] : values.buffers) {
    if (read.count(name) == 0) continue;
    any = true;
    if (view.strides.size() != view.shape.size()) return false;
    int64_t last = 0;  // the largest in-bounds offset so far, at most kLimit
    for (size_t d = 0; d < view.shape.size(); ++d) {
      const int64_t extent = view.shape[d], stride = view.strides[d];
      if (extent < 1 || extent > kLimit || stride < 0) return false;
      if (stride > 0 && extent - 1 > (kLimit - last) / stride) return false;
      last += (extent - 1) * stride;
    }
  }
  return any;
}

bool reads_buffers(const Declarations& declarations, std::initializer_list<const Expr*> exprs) {
  for (const std::string& name : names_read(exprs))
    if (declarations.find_buffer(name) != nullptr) return true;
  return false;
}

bool kernel_takes_32_bit_reads(bool dkdv_sums_dq, const Expr& score_mod, const Expr& mask_mod) {
  return !dkdv_sums_dq || score_mod.reads_buffers_by_position() ||
         (!score_mod.buffers_read().empty() && mask_mod.buffers_read().empty());
}

}  // namespace flexjit::codegen
