#include "flexjit/dtype.hpp"

namespace flexjit {

std::string_view dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::i32: return "i32";
    case DType::u8: return "u8";
  }
  return "?";
}

size_t dtype_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::f16:
    case DType::bf16: return 2;
    case DType::f32:
    case DType::i32: return 4;
    case DType::u8: return 1;
  }
  return 0;
}

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  if (name == "f16" || name == "fp16" || name == "float16" || name == "half") return DType::f16;
  if (name == "bf16" || name == "bfloat16") return DType::bf16;
  if (name == "f32" || name == "fp32" || name == "float32" || name == "float") return DType::f32;
  if (name == "i32" || name == "int32" || name == "int") return DType::i32;
  if (name == "u8" || name == "uint8") return DType::u8;
  return std::nullopt;
}

}  // namespace flexjit
