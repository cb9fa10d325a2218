// FlexjitModArgs: the struct through which emitted functions read parameters and buffers, and
// the host-side description of its bytes. Both follow the C layout rules for the same fields, and
// a test compiles the struct with NVRTC and static_asserts every offset against the layout.
#include <algorithm>

#include "expr/declarations.hpp"

namespace flexjit {
namespace {

std::string_view buffer_element_type(DType dtype) {
  switch (dtype) {
    case DType::f16: return "flexjit_f16";
    case DType::bf16: return "flexjit_bf16";
    case DType::f32: return "float";
    case DType::i32: return "int";
    case DType::u8: return "unsigned char";
  }
  return "?";
}

size_t align_up(size_t value, size_t alignment) { return (value + alignment - 1) / alignment * alignment; }

}  // namespace

std::string emit_mod_args_struct(const Declarations& declarations) {
  expr::validate_declarations(declarations);
  std::string out = "struct FlexjitModArgs {\n";
  for (const auto& param : declarations.params)
    out += std::string("  ") + (param.type == ScalarType::integer ? "int" : "float") + " p_" + param.name + ";\n";
  for (const auto& buffer : declarations.buffers)
    out += "  FlexjitBuffer<" + std::string(buffer_element_type(buffer.dtype)) + ", " +
           std::to_string(buffer.shape.size()) + "> buf_" + buffer.name + ";\n";
  if (declarations.params.empty() && declarations.buffers.empty()) out += "  int unused;\n";
  out += "};\n";
  return out;
}

ModArgsLayout mod_args_layout(const Declarations& declarations) {
  expr::validate_declarations(declarations);
  ModArgsLayout layout;
  size_t offset = 0;
  for (const auto& param : declarations.params) {
    offset = align_up(offset, 4);
    layout.fields.push_back({param.name, false, param.type, offset, 0});
    offset += 4;
  }
  for (const auto& buffer : declarations.buffers) {
    offset = align_up(offset, 8);
    const bool reads_float = buffer.dtype == DType::f16 || buffer.dtype == DType::bf16 || buffer.dtype == DType::f32;
    layout.fields.push_back({buffer.name, true, reads_float ? ScalarType::floating : ScalarType::integer, offset,
                             buffer.shape.size()});
    offset += 8 + 16 * buffer.shape.size();
    layout.alignment = 8;
  }
  if (layout.fields.empty()) offset = 4;
  layout.size = align_up(offset, layout.alignment);
  return layout;
}

}  // namespace flexjit
