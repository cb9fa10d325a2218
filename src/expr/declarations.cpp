#include "expr/declarations.hpp"

#include <set>

#include "expr/builtins.hpp"
#include "flexjit/error.hpp"

namespace flexjit {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

std::string rank_message(std::string_view name, size_t rank) {
  if (rank == 0) return "buffer '" + std::string(name) + "' has rank 0; give it 1 to 8 dimensions";
  return "buffer '" + std::string(name) + "' has rank " + std::to_string(rank) +
         "; the largest supported rank is " + std::to_string(expr::kMaxBufferRank);
}

// The declared extents (those given at call time aside) must multiply to a byte count a 64-bit
// signed index can address; a wrapped product would pass later size checks and read out of bounds.
void check_element_count(const std::string& name, const std::vector<int64_t>& shape, DType dtype) {
  uint64_t bytes = dtype_size(dtype);
  for (int64_t extent : shape) {
    if (extent <= 0) continue;
    if (bytes > static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(extent)) {
      std::string dims;
      for (int64_t e : shape) dims += (dims.empty() ? "" : "x") + (e < 0 ? std::string("?") : std::to_string(e));
      throw UsageError("buffer '" + name + "' has shape " + dims +
                       ", more bytes than a 64-bit index can address; check the extents");
    }
    bytes *= static_cast<uint64_t>(extent);
  }
}

}  // namespace

BufferDecl BufferDecl::parse(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  const auto parts = split(text, ':');
  if (parts.size() != 3)
    throw UsageError("buffer declaration " + quoted +
                     " must have the form NAME:DTYPE:DIM[xDIM...], e.g. bias:f32:16x8191");
  BufferDecl decl;
  decl.name = std::string(parts[0]);
  if (const std::string problem = expr::invalid_declaration_name("buffer", parts[0]); !problem.empty())
    throw UsageError(problem);
  const auto dtype = parse_dtype(parts[1]);
  if (!dtype)
    throw UsageError("unknown dtype '" + std::string(parts[1]) + "' in buffer declaration " + quoted +
                     " (expected f16, bf16, f32, i32 or u8)");
  decl.dtype = *dtype;
  if (parts[2].empty())
    throw UsageError("buffer declaration " + quoted +
                     " has no shape; give DIM[xDIM...], e.g. 4096 or 16x8191 ('?' for an extent given "
                     "at call time)");
  for (std::string_view dim : split(parts[2], 'x')) {
    if (dim == "?") {
      decl.shape.push_back(-1);
      continue;
    }
    bool digits = !dim.empty() && dim.size() <= 15;
    for (char c : dim) digits = digits && c >= '0' && c <= '9';
    if (!digits)
      throw UsageError("dimension '" + std::string(dim) + "' in buffer declaration " + quoted +
                       " is not a positive integer or '?'");
    const int64_t extent = std::stoll(std::string(dim));
    if (extent == 0)
      throw UsageError("dimension 0 in buffer declaration " + quoted + " must be positive");
    decl.shape.push_back(extent);
  }
  if (decl.shape.size() > expr::kMaxBufferRank) throw UsageError(rank_message(decl.name, decl.shape.size()));
  check_element_count(decl.name, decl.shape, decl.dtype);
  return decl;
}

ParamDecl ParamDecl::parse(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  const auto parts = split(text, ':');
  if (parts.size() != 2)
    throw UsageError("parameter declaration " + quoted +
                     " must have the form NAME:TYPE with TYPE int or float, e.g. cap:float");
  ParamDecl decl;
  decl.name = std::string(parts[0]);
  if (const std::string problem = expr::invalid_declaration_name("parameter", parts[0]); !problem.empty())
    throw UsageError(problem);
  if (parts[1] == "int") decl.type = ScalarType::integer;
  else if (parts[1] == "float") decl.type = ScalarType::floating;
  else if (parts[1] == "bool")
    throw UsageError("parameter type 'bool' in " + quoted +
                     " is not supported; parameters are int or float (use an int 0 or 1 as a flag)");
  else
    throw UsageError("unknown parameter type '" + std::string(parts[1]) + "' in " + quoted +
                     " (expected int or float)");
  return decl;
}

const BufferDecl* Declarations::find_buffer(std::string_view name) const noexcept {
  for (const auto& buffer : buffers)
    if (buffer.name == name) return &buffer;
  return nullptr;
}

const ParamDecl* Declarations::find_param(std::string_view name) const noexcept {
  for (const auto& param : params)
    if (param.name == name) return &param;
  return nullptr;
}

namespace expr {

void validate_declarations(const Declarations& declarations) {
  std::set<std::string> seen;
  auto claim = [&](const std::string& name) {
    if (!seen.insert(name).second)
      throw UsageError("'" + name + "' is declared more than once (buffers and parameters share one namespace)");
  };
  for (const auto& param : declarations.params) {
    if (const std::string problem = invalid_declaration_name("parameter", param.name); !problem.empty())
      throw UsageError(problem);
    if (param.type == ScalarType::boolean)
      throw UsageError("parameter '" + param.name + "' has type bool; parameters are int or float");
    claim(param.name);
  }
  for (const auto& buffer : declarations.buffers) {
    if (const std::string problem = invalid_declaration_name("buffer", buffer.name); !problem.empty())
      throw UsageError(problem);
    if (buffer.shape.empty() || buffer.shape.size() > kMaxBufferRank)
      throw UsageError(rank_message(buffer.name, buffer.shape.size()));
    for (size_t d = 0; d < buffer.shape.size(); ++d)
      if (buffer.shape[d] == 0 || buffer.shape[d] < -1)
        throw UsageError("buffer '" + buffer.name + "' has extent " + std::to_string(buffer.shape[d]) +
                         " in dimension " + std::to_string(d + 1) +
                         "; extents must be positive (or -1 for one given at call time)");
    check_element_count(buffer.name, buffer.shape, buffer.dtype);
    if (buffer.learnable && buffer.dtype != DType::f32 && buffer.dtype != DType::f16 && buffer.dtype != DType::bf16)
      throw UsageError("buffer '" + buffer.name + "' has dtype " + std::string(dtype_name(buffer.dtype)) +
                       " and cannot be learnable; only f32, f16 and bf16 buffers have gradients "
                       "(drop `--grad " + buffer.name + "`, or declare it as a float buffer)");
    claim(buffer.name);
  }
}

}  // namespace expr
}  // namespace flexjit
