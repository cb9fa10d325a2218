#pragma once
/// \file
/// Element types shared by tensors, expression buffers and kernel specs.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace flexjit {

/// Element type of a tensor or an expression buffer.
enum class DType { f16, bf16, f32, i32, u8 };

/// Short name used in the CLI, cache keys and messages: "f16", "bf16", "f32", "i32", "u8".
std::string_view dtype_name(DType dtype) noexcept;
/// Size of one element in bytes.
size_t dtype_size(DType dtype) noexcept;
/// Parses a dtype name; accepts the short names plus "fp16", "float16", "half", "bfloat16",
/// "fp32", "float32", "float", "int32", "int", "uint8". Returns nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view name) noexcept;

}  // namespace flexjit
