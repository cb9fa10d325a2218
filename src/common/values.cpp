#include "common/values.hpp"

#include <cstdint>
#include <cstring>

#include "common/half.hpp"

namespace flexjit {

std::vector<unsigned char> encode_values(const std::vector<double>& values, DType dtype) {
  std::vector<unsigned char> out(values.size() * dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    unsigned char* p = out.data() + i * dtype_size(dtype);
    const float f = static_cast<float>(values[i]);
    switch (dtype) {
      case DType::f16: { const uint16_t v = float_to_f16_bits(f); std::memcpy(p, &v, 2); break; }
      case DType::bf16: { const uint16_t v = float_to_bf16_bits(f); std::memcpy(p, &v, 2); break; }
      case DType::f32: std::memcpy(p, &f, 4); break;
      case DType::i32: { const int32_t v = static_cast<int32_t>(values[i]); std::memcpy(p, &v, 4); break; }
      case DType::u8: *p = static_cast<unsigned char>(values[i]); break;
    }
  }
  return out;
}

std::vector<double> decode_values(const unsigned char* bytes, size_t count, DType dtype) {
  std::vector<double> out(count);
  for (size_t i = 0; i < count; ++i) {
    const unsigned char* p = bytes + i * dtype_size(dtype);
    switch (dtype) {
      case DType::f16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = f16_bits_to_float(v); break; }
      case DType::bf16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = bf16_bits_to_float(v); break; }
      case DType::f32: { float v; std::memcpy(&v, p, 4); out[i] = v; break; }
      case DType::i32: { int32_t v; std::memcpy(&v, p, 4); out[i] = v; break; }
      case DType::u8: out[i] = *p; break;
    }
  }
  return out;
}

}  // namespace flexjit
