// `flexjit selftest`: the main job of the README. Renders and compiles the built-in kernel and a
// causal + ALiBi attention variant, writes their sources and PTX, and, on a machine with a GPU,
// runs both and checks them (the attention against the float64 CPU reference). Without a GPU it
// says so and runs the CPU reference on a small problem instead.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "codegen/kernel_spec.hpp"
#include "codegen/kernel_store.hpp"
#include "codegen/launch.hpp"
#include "command.hpp"
#include "common/half.hpp"
#include "flexjit/attention.hpp"
#include "flexjit/error.hpp"
#include "flexjit/reference.hpp"
#include "jit/compiler.hpp"

namespace flexjit::cli {
namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw UsageError("cannot write '" + path.string() + "'");
}

// Compiles `spec`, writes NAME.cu and NAME.ptx under `dir`, prints where they went.
jit::CompiledKernel compile_and_write(const codegen::KernelSpec& spec, const std::string& arch,
                                      const std::filesystem::path& dir, const std::string& name) {
  const jit::Source source = codegen::render(spec);
  const jit::CompiledKernel compiled = codegen::compile_kernel(spec, arch).kernel;
  write_file(dir / (name + ".cu"), codegen::self_contained_source(source));
  write_file(dir / (name + ".ptx"), compiled.ptx);
  const auto& r = compiled.resources.begin()->second;
  std::printf("  %s: %s.cu and %s.ptx in %s (%s, %.0f ms NVRTC%s, %d registers, %d bytes spilled)\n",
              name.c_str(), name.c_str(), name.c_str(), dir.string().c_str(), arch.c_str(), compiled.compile_ms,
              compiled.from_disk_cache ? ", from the disk cache" : "", r.registers, r.spill_store_bytes);
  return compiled;
}

// y = a * x + y through the whole pipeline; returns the largest error against the host.
double run_builtin(const codegen::KernelSpec& spec, const std::string& arch) {
  const auto ready = codegen::ready_kernel(spec, arch);
  const long long n = 1 << 20;
  std::mt19937 rng(std::random_device{}());
  std::normal_distribution<float> normal;
  std::vector<float> x(n), y(n);
  for (auto& v : x) v = normal(rng);
  for (auto& v : y) v = normal(rng);
  DeviceBuffer dx = DeviceBuffer::from_host(x), dy = DeviceBuffer::from_host(y);
  float a = 1.5f;
  void* xp = dx.data();
  void* yp = dy.data();
  long long count = n;
  codegen::CallShape call;
  call.elements = n;
  codegen::ConfiguredKernel(*ready, call).launch(nullptr, {&a, &xp, &yp, &count});
  synchronize();
  const std::vector<float> out = dy.to_host<float>();
  double worst = 0;
  for (long long i = 0; i < n; ++i) worst = std::max(worst, std::abs(double(out[i]) - (double(a) * x[i] + y[i])));
  return worst;
}

CommandRegistrar registrar("selftest", "Compile, run and check the built-in kernel and a causal+ALiBi attention", [](CLI::App& app) {
  auto out_dir = std::make_shared<std::string>("flexjit-selftest");
  app.add_option("--out", *out_dir, "directory for the generated .cu and .ptx files")->capture_default_str();
  return [out_dir]() {
    const std::filesystem::path dir(*out_dir);
    std::filesystem::create_directories(dir);
    std::string why;
    const bool gpu = gpu_available(&why);
    const std::string arch = gpu ? current_device().default_arch() : "sm_90a";
    std::printf("flexjit selftest: %s\n", gpu ? ("GPU " + current_device().name + ", " + arch).c_str()
                                            : ("no GPU found (" + why + ")\n  compiling for " + arch + " only").c_str());

    codegen::KernelSpec builtin;
    builtin.family = codegen::Family::builtin_axpy;
    builtin.config = codegen::default_config(builtin.family, 0, 0);
    std::printf("built-in kernel (y = a*x + y):\n");
    compile_and_write(builtin, arch, dir, "builtin_axpy");
    bool ok = true;
    if (gpu) {
      const double err = run_builtin(builtin, arch);
      ok &= err < 1e-5;
      std::printf("  ran on the GPU over 2^20 elements: max error %.2e %s\n", err, err < 1e-5 ? "ok" : "FAILED");
    }

    // Causal attention with ALiBi slopes, bf16, D = 128.
    const int B = gpu ? 2 : 1, H = gpu ? 8 : 2, S = gpu ? 1024 : 128, D = gpu ? 128 : 64;
    AttentionSpec spec;
    spec.score_mod = "score + slope[h] * (kv_idx - q_idx)";
    spec.mask_mod = "q_idx >= kv_idx";
    spec.declarations.buffers.push_back(BufferDecl{"slope", DType::f32, {H}});
    spec.head_dim = D;
    const Attention attention(spec);
    std::printf("causal + ALiBi attention (B=%d H=%d S=%d D=%d bf16):\n", B, H, S, D);
    codegen::KernelSpec fwd;
    fwd.family = codegen::Family::fwd;
    fwd.head_dim = fwd.head_dim_v = D;
    fwd.config = codegen::default_config(fwd.family, D, D);
    fwd.declarations = spec.declarations;
    fwd.score_mod = attention.score_mod();
    fwd.mask_mod = attention.mask_mod();
    fwd.has_block_mask = fwd.has_full_blocks = true;
    fwd.is_divisible = S % 128 == 0;
    compile_and_write(fwd, arch, dir, "attention_fwd_causal_alibi");

    std::mt19937_64 rng(std::random_device{}());
    std::normal_distribution<double> normal;
    auto random_bf16 = [&](size_t n) {
      std::vector<double> v(n);
      for (auto& x : v) x = bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(normal(rng))));
      return v;
    };
    const size_t n = size_t(B) * H * S * D;
    const auto q = random_bf16(n), k = random_bf16(n), v = random_bf16(n);
    std::vector<float> slopes(H);
    for (int h = 0; h < H; ++h) slopes[h] = static_cast<float>(std::exp2(-8.0 * (h + 1) / H));
    EvalInputs inputs;
    inputs.buffers["slope"] = HostBufferView{slopes.data(), DType::f32, {H}};
    const ReferenceShape shape{B, H, H, S, S, D, D};
    const double scale = 1.0 / std::sqrt(double(D));
    const ReferenceForward ref = reference_forward(attention.score_mod(), attention.mask_mod(), inputs, shape, q, k, v, scale);
    if (!gpu) {
      double norm = 0;
      for (double x : ref.out) norm += x * x;
      std::printf("  no GPU: ran the float64 CPU reference instead (|out| = %.4f over %zu values)\n",
                  std::sqrt(norm), ref.out.size());
      std::printf("selftest done without a GPU: kernels compile; run on a machine with an NVIDIA GPU to launch them\n");
      return kExitOk;
    }
    auto upload = [&](const std::vector<double>& values) {
      std::vector<uint16_t> bits(values.size());
      for (size_t i = 0; i < values.size(); ++i) bits[i] = float_to_bf16_bits(static_cast<float>(values[i]));
      return DeviceBuffer::from_host(bits);
    };
    DeviceBuffer dq = upload(q), dk = upload(k), dv = upload(v);
    DeviceBuffer dout = DeviceBuffer::allocate(n * 2), dlse = DeviceBuffer::allocate(size_t(B) * H * S * 4);
    dout.fill_bytes(0xff);  // NaN until written
    DeviceBuffer dslope = DeviceBuffer::from_host(slopes);
    CallOptions call;
    call.values.buffers["slope"] = TensorView::contiguous(dslope.data(), DType::f32, {H});
    const std::vector<int64_t> dims{B, H, S, D};
    const BlockMask mask = attention.block_mask(B, H, S, S, nullptr, call.values);
    attention.forward(TensorView::contiguous(dq.data(), DType::bf16, dims), TensorView::contiguous(dk.data(), DType::bf16, dims),
                      TensorView::contiguous(dv.data(), DType::bf16, dims), TensorView::contiguous(dout.data(), DType::bf16, dims),
                      TensorView::contiguous(dlse.data(), DType::f32, {B, H, S}), &mask, nullptr, call);
    synchronize();
    const std::vector<uint16_t> bits = dout.to_host<uint16_t>();
    std::vector<double> out(bits.size());
    for (size_t i = 0; i < bits.size(); ++i) out[i] = bf16_bits_to_float(bits[i]);
    const double err = relative_error(out, ref.out);
    ok &= err < 1e-2;
    std::printf("  ran on the GPU (block mask density %.3f): relative error vs float64 reference %.2e %s\n",
                mask.density(), err, err < 1e-2 ? "ok" : "FAILED");
    std::printf("selftest %s\n", ok ? "passed" : "FAILED");
    return ok ? kExitOk : kExitFailure;
  };
});

}  // namespace
}  // namespace flexjit::cli
