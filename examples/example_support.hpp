#pragma once
// Small helpers shared by the examples: bf16 conversion, random inputs, device tensors, error
// reports and the no-GPU path. Only flexjit's public API is used.
#include <flexjit/attention.hpp>
#include <flexjit/device.hpp>
#include <flexjit/reference.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace example {

// float -> bf16 bits, rounded to nearest even (NaN stays a quiet NaN).
inline uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline float from_bf16(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// `n` normal(0, 1) values already rounded to bf16, so the float64 reference sees exactly the
// numbers the GPU sees. A fresh seed every run.
inline std::vector<double> random_bf16_values(size_t n) {
  static std::mt19937_64 rng(std::random_device{}());
  std::normal_distribution<float> normal;
  std::vector<double> values(n);
  for (double& v : values) v = from_bf16(to_bf16(normal(rng)));
  return values;
}

// A tensor in device memory and the view flexjit reads it through.
struct DeviceTensor {
  flexjit::DeviceBuffer buffer;
  flexjit::TensorView view;
};

// A contiguous bf16 tensor holding `values`.
inline DeviceTensor upload_bf16(const std::vector<double>& values, std::vector<int64_t> shape) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) bits[i] = to_bf16(static_cast<float>(values[i]));
  DeviceTensor t{flexjit::DeviceBuffer::from_host(bits), {}};
  t.view = flexjit::TensorView::contiguous(t.buffer.data(), flexjit::DType::bf16, std::move(shape));
  return t;
}

// An output tensor (bf16 or f32) filled with NaN bits, so an element the kernel forgot to write
// fails the comparison.
inline DeviceTensor allocate_output(flexjit::DType dtype, std::vector<int64_t> shape) {
  size_t n = 1;
  for (int64_t e : shape) n *= static_cast<size_t>(e);
  DeviceTensor t{flexjit::DeviceBuffer::allocate(n * (dtype == flexjit::DType::f32 ? 4 : 2)), {}};
  t.buffer.fill_bytes(0xff);
  t.view = flexjit::TensorView::contiguous(t.buffer.data(), dtype, std::move(shape));
  return t;
}

// The tensor's values as doubles (bf16 or f32).
inline std::vector<double> download(const DeviceTensor& t) {
  std::vector<double> out;
  if (t.view.dtype == flexjit::DType::f32) {
    for (float f : t.buffer.to_host<float>()) out.push_back(f);
  } else {
    for (uint16_t b : t.buffer.to_host<uint16_t>()) out.push_back(from_bf16(b));
  }
  return out;
}

// Prints ‖got − want‖ / ‖want‖ and whether it is under the bf16 tolerance.
inline bool check(const char* name, const DeviceTensor& got, const std::vector<double>& want) {
  const double error = flexjit::relative_error(download(got), want);
  const bool ok = error < 1e-2;
  std::printf("  %-4s relative error %.2e %s\n", name, error, ok ? "ok" : "FAILED (tolerance 1e-2)");
  return ok;
}

// Says whether a GPU is there; without one, says why and what the example does instead.
inline bool gpu_or_explain() {
  std::string why;
  if (flexjit::gpu_available(&why)) {
    const flexjit::DeviceInfo device = flexjit::current_device();
    std::printf("GPU: %s (%s)\n", device.name.c_str(), device.default_arch().c_str());
    return true;
  }
  std::printf("no GPU found (%s)\n", why.c_str());
  std::printf("compiling the kernels for sm_90a and running the float64 CPU reference only\n");
  return false;
}

// Without a GPU: compiles (into the kernel cache) every kernel a call of `size` would use, for
// sm_90a, and lists them.
inline void show_kernels(const flexjit::Attention& attention, const flexjit::ProblemSize& size, bool backward) {
  for (const flexjit::WarmedKernel& k : attention.warm_up(size, backward, "sm_90a")) {
    std::printf("  compiled %-14s %-12s for %s: %3d registers, %d bytes spilled (%s)\n", k.family.c_str(),
                k.config.empty() ? "-" : k.config.c_str(), k.arch.c_str(), k.registers, k.spill_bytes,
                k.from_cache ? "from the disk cache" : "NVRTC");
  }
}

// ‖values‖₂, to show that the CPU reference produced something.
inline double norm(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values)
    if (std::isfinite(v)) sum += v * v;
  return std::sqrt(sum);
}

}  // namespace example
