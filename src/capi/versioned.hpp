#pragma once
// Reading and writing the C API's versioned structs (first field `size_t struct_size`). A caller
// compiled against an older header passes a smaller struct: the fields it does not know read as
// zero (each field's zero means "default"). A caller compiled against a newer header passes a
// larger one: fields this library does not know must be zero, or the call fails, because
// ignoring a request (a learnable buffer, a paged cache) would give a wrong answer silently.
#include <cstddef>
#include <cstring>
#include <string>

#include "flexjit/error.hpp"
#include "flexjit/flexjit.h"

namespace flexjit::capi {

// The smallest struct_size accepted: version 1 of every struct is its present size. When fields
// are appended, pass the old size here (offsetof the first new field).
template <class T>
constexpr size_t first_version_size() {
  return sizeof(T);
}
// C API 1001 appended decode_config to flexjit_variant_desc and buffer_grads / num_buffer_grads
// to flexjit_call_options: callers built against 1000 pass the sizes up to those fields.
template <>
constexpr size_t first_version_size<flexjit_variant_desc>() {
  return offsetof(flexjit_variant_desc, decode_config);
}
template <>
constexpr size_t first_version_size<flexjit_call_options>() {
  return offsetof(flexjit_call_options, buffer_grads);
}
// C API 1004 appended storage / storage_bytes to flexjit_block_mask_desc.
template <>
constexpr size_t first_version_size<flexjit_block_mask_desc>() {
  return offsetof(flexjit_block_mask_desc, storage);
}

// Largest struct_size believed (a garbage value would otherwise make us scan far past the struct).
constexpr size_t kMaxStructSize = 4096;

inline void check_struct_size(size_t given, const char* function, const char* name, const char* type,
                              size_t minimum, size_t current) {
  if (given < minimum || given > kMaxStructSize)
    throw UsageError(std::string(function) + ": " + name + "->struct_size is " + std::to_string(given) + ", not a size of " +
                     type + " (this flexjit's is " + std::to_string(current) +
                     (minimum < current ? ", older headers' " + std::to_string(minimum) : std::string()) +
                     "): set it to sizeof(" + type + ")");
}

// A copy of `*given` with unknown fields checked, or a zeroed T (all defaults) for NULL.
template <class T>
T read_versioned(const T* given, const char* function, const char* name, const char* type) {
  T out{};
  out.struct_size = sizeof(T);
  if (given == nullptr) return out;
  check_struct_size(given->struct_size, function, name, type, first_version_size<T>(), sizeof(T));
  const size_t known = given->struct_size < sizeof(T) ? given->struct_size : sizeof(T);
  std::memcpy(static_cast<void*>(&out), given, known);
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(given);
  for (size_t i = sizeof(T); i < given->struct_size; ++i)
    if (bytes[i] != 0)
      throw UsageError(std::string(function) + ": " + name + " sets fields of a newer " + type + " (byte " +
                       std::to_string(i) + " of " + std::to_string(given->struct_size) +
                       ") that this flexjit does not know: use a flexjit with a C API at least as new as your header");
  return out;
}

// How many bytes of an output struct of the caller's size this library fills.
template <class T>
size_t output_size(size_t given, const char* function, const char* name, const char* type) {
  check_struct_size(given, function, name, type, first_version_size<T>(), sizeof(T));
  return given < sizeof(T) ? given : sizeof(T);
}

}  // namespace flexjit::capi
