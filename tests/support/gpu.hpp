#pragma once
// Helpers for GPU tests. What touches the device is inline here on purpose: the support library
// links flexjit_mod_common only, and those functions live in the jit module, which every GPU test
// links anyway.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flexjit/device.hpp"
#include "flexjit/dtype.hpp"

namespace flexjit::test {

// The reason no GPU test can run here, or "" when a GPU is available. Evaluated once.
inline const std::string& no_gpu_reason() {
  static const std::string reason = [] {
    std::string why;
    return flexjit::gpu_available(&why) ? std::string() : (why.empty() ? "unknown reason" : why);
  }();
  return reason;
}

// Fills `buffer` with a quiet NaN of `dtype` (f16 0x7E00, bf16 0x7FC0, f32 0x7FC00000), so that
// an element a kernel forgot to write fails the comparison. Integer types get all bits set (-1).
inline void poison_with_nan(DeviceBuffer& buffer, DType dtype) {
  switch (dtype) {
    case DType::f16:
    case DType::bf16: {
      const uint16_t nan = dtype == DType::f16 ? 0x7E00 : 0x7FC0;
      buffer.upload(std::vector<uint16_t>(buffer.bytes() / 2, nan).data(), buffer.bytes() / 2 * 2);
      break;
    }
    case DType::f32:
      buffer.upload(std::vector<uint32_t>(buffer.bytes() / 4, 0x7FC00000u).data(),
                    buffer.bytes() / 4 * 4);
      break;
    case DType::i32:
    case DType::u8:
      buffer.fill_bytes(0xFF);
      break;
  }
}

// ‖out − ref‖₂ / ‖ref‖₂. Infinity when a value is NaN or infinite, or the sizes differ; 0 when
// both are all zero (tests should not compare zeros anyway). Defined in gpu.cpp (needs no GPU).
double relative_error(const std::vector<double>& out, const std::vector<double>& ref);

}  // namespace flexjit::test

// First statement of a GPU test: skips it, with the reason, when no GPU is usable here.
#define FLEXJIT_REQUIRE_GPU()                                          \
  do {                                                                 \
    if (!::flexjit::test::no_gpu_reason().empty())                     \
      GTEST_SKIP() << "no GPU: " << ::flexjit::test::no_gpu_reason();  \
  } while (0)
