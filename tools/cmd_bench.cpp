// `flexjit bench`: times the forward pass of every problem of a suite on the GPU, the way the peer
// benchmark does (L2 flushed, event-timed, median), and prints a table plus JSON lines in the
// schema of bench/README.md so compare.py can put flexjit beside the peers.
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <random>

#include "codegen/kernel_spec.hpp"
#include "command.hpp"
#include "common/half.hpp"
#include "flexjit/attention.hpp"
#include "flexjit/error.hpp"
#include "flexjit/problem_suite.hpp"
#include "jit/kernel_cache.hpp"
#include "nlohmann/json.hpp"
#include "tune/timing.hpp"

namespace flexjit::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Normal(0, 1) values rounded to `dtype`, uploaded. Seeded per tensor so every run sees new data.
DeviceBuffer random_device_tensor(size_t n, DType dtype, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<uint16_t> bits(n);
  for (auto& b : bits) b = dtype == DType::bf16 ? float_to_bf16_bits(normal(rng)) : float_to_f16_bits(normal(rng));
  DeviceBuffer buffer = DeviceBuffer::allocate(n * 2);
  buffer.upload(bits.data(), n * 2);
  return buffer;
}

DeviceBuffer upload_suite_buffer(const SuiteBuffer& b) {
  const std::vector<double> values = b.values();
  std::vector<unsigned char> bytes(values.size() * dtype_size(b.dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    unsigned char* p = bytes.data() + i * dtype_size(b.dtype);
    switch (b.dtype) {
      case DType::i32: { int32_t v = static_cast<int32_t>(values[i]); std::memcpy(p, &v, 4); break; }
      case DType::f32: { float v = static_cast<float>(values[i]); std::memcpy(p, &v, 4); break; }
      case DType::bf16: { uint16_t v = float_to_bf16_bits(static_cast<float>(values[i])); std::memcpy(p, &v, 2); break; }
      case DType::f16: { uint16_t v = float_to_f16_bits(static_cast<float>(values[i])); std::memcpy(p, &v, 2); break; }
      case DType::u8: *p = static_cast<unsigned char>(values[i]); break;
    }
  }
  DeviceBuffer d = DeviceBuffer::allocate(std::max<size_t>(bytes.size(), 16));
  d.upload(bytes.data(), bytes.size());
  return d;
}

CommandRegistrar registrar("bench", "Time a problem suite on the GPU; print a table and JSON lines", [](CLI::App& app) {
  struct Options {
    std::string suite = "bench/suite.json";
    std::string only;
    std::string json_path;
    std::string config;
    bool no_bwd = false;
  };
  auto o = std::make_shared<Options>();
  app.add_option("--suite", o->suite, "problem suite (JSON, schema of bench/suite.json)")->capture_default_str();
  app.add_option("--only", o->only, "comma-separated problem names to run");
  app.add_option("--json", o->json_path, "also write the JSON lines to this file");
  app.add_option("--config", o->config, "forward block config for every problem, e.g. m128n64w4s2");
  app.add_flag("--no-bwd", o->no_bwd, "forward only");
  return [o]() {
    const auto problems = select_problems(load_suite(o->suite), o->only);
    std::string why;
    if (!gpu_available(&why)) throw DriverError("flexjit bench needs a GPU: " + why, -1);
    const DeviceInfo device = current_device();
    std::ofstream json_file;
    if (!o->json_path.empty()) {
      json_file.open(o->json_path);
      if (!json_file) throw UsageError("cannot write '" + o->json_path + "'");
    }
    auto emit_json = [&](const nlohmann::json& j) {
      std::printf("%s\n", j.dump().c_str());
      std::fflush(stdout);
      if (json_file) json_file << j.dump() << "\n" << std::flush;
    };
    emit_json({{"device", device.name}, {"system", "flexjit"}, {"arch", device.default_arch()}});
    std::mt19937_64 rng(std::random_device{}());
    struct Row {
      std::string name, config;
      double fwd_ms, fwd_tflops, first_ms, density;
      bool cached;
      double bwd_ms = 0, bwd_tflops = 0;
    };
    std::vector<Row> rows;
    for (const SuiteProblem& p : problems) {
      AttentionSpec spec;
      spec.score_mod = p.score_mod;
      spec.mask_mod = p.mask_mod;
      spec.declarations = p.declarations();
      spec.dtype = p.dtype;
      spec.head_dim = p.head_dim;
      spec.head_dim_v = p.head_dim_v;
      if (!o->config.empty()) spec.fwd_config = BlockConfig::parse(o->config);
      const Attention attention(spec);
      std::vector<DeviceBuffer> buffer_storage;
      CallOptions call;
      for (const SuiteBuffer& b : p.buffers) {
        buffer_storage.push_back(upload_suite_buffer(b));
        call.values.buffers[b.name] = TensorView::contiguous(buffer_storage.back().data(), b.dtype, b.shape());
      }
      const std::vector<int64_t> qshape{p.batch, p.q_heads, p.q_len, p.head_dim};
      const std::vector<int64_t> kshape{p.batch, p.kv_heads, p.kv_len, p.head_dim};
      const std::vector<int64_t> vshape{p.batch, p.kv_heads, p.kv_len, p.head_dim_v};
      const std::vector<int64_t> oshape{p.batch, p.q_heads, p.q_len, p.head_dim_v};
      DeviceBuffer q = random_device_tensor(size_t(p.batch) * p.q_heads * p.q_len * p.head_dim, p.dtype, rng);
      DeviceBuffer k = random_device_tensor(size_t(p.batch) * p.kv_heads * p.kv_len * p.head_dim, p.dtype, rng);
      DeviceBuffer v = random_device_tensor(size_t(p.batch) * p.kv_heads * p.kv_len * p.head_dim_v, p.dtype, rng);
      DeviceBuffer out = DeviceBuffer::allocate(size_t(p.batch) * p.q_heads * p.q_len * p.head_dim_v * 2);
      DeviceBuffer lse = DeviceBuffer::allocate(size_t(p.batch) * p.q_heads * p.q_len * 4);
      const TensorView qv = TensorView::contiguous(q.data(), p.dtype, qshape);
      const TensorView kv = TensorView::contiguous(k.data(), p.dtype, kshape);
      const TensorView vv = TensorView::contiguous(v.data(), p.dtype, vshape);
      const TensorView ov = TensorView::contiguous(out.data(), p.dtype, oshape);
      const TensorView lv = TensorView::contiguous(lse.data(), DType::f32, {p.batch, p.q_heads, p.q_len});
      std::optional<BlockMask> mask;
      double density = 1.0;
      if (!attention.mask_mod().is_always_true()) {
        mask = attention.block_mask(p.batch, p.q_heads, p.q_len, p.kv_len, nullptr, call.values);
        density = mask->density();
      }
      const long compiles_before = jit::nvrtc_compile_count();
      const auto t0 = Clock::now();
      attention.forward(qv, kv, vv, ov, lv, mask ? &*mask : nullptr, nullptr, call);
      synchronize();
      const double first_ms = ms_since(t0);
      const bool cached = jit::nvrtc_compile_count() == compiles_before;
      const tune::Timing t = tune::time_on_gpu(
          [&](Stream s) { attention.forward(qv, kv, vv, ov, lv, mask ? &*mask : nullptr, s, call); });
      const double flops = p.dense_flops() * density;
      Row row{p.name, spec.fwd_config ? spec.fwd_config->str() : "default", t.median_ms,
              flops / t.median_ms / 1e9, first_ms, density, cached};
      nlohmann::json j = {{"system", "flexjit"}, {"name", p.name}, {"fwd_ms", std::round(t.median_ms * 1e4) / 1e4},
                          {"fwd_tflops", std::round(row.fwd_tflops * 10) / 10},
                          {"first_call_ms", std::round(first_ms * 100) / 100},
                          {"density", std::round(density * 1e4) / 1e4}, {"config", row.config},
                          {"first_call_kernel", cached ? "cache" : "compiled"}};
      if (!o->no_bwd) {
        DeviceBuffer dout = random_device_tensor(size_t(p.batch) * p.q_heads * p.q_len * p.head_dim_v, p.dtype, rng);
        DeviceBuffer dq = DeviceBuffer::allocate(q.bytes()), dk = DeviceBuffer::allocate(k.bytes()),
                     dv = DeviceBuffer::allocate(v.bytes());
        const TensorView dov = TensorView::contiguous(dout.data(), p.dtype, oshape);
        const TensorView dqv = TensorView::contiguous(dq.data(), p.dtype, qshape);
        const TensorView dkv = TensorView::contiguous(dk.data(), p.dtype, kshape);
        const TensorView dvv = TensorView::contiguous(dv.data(), p.dtype, vshape);
        const tune::Timing tb = tune::time_on_gpu([&](Stream s) {
          attention.backward(qv, kv, vv, ov, lv, dov, dqv, dkv, dvv, mask ? &*mask : nullptr, s, call);
        });
        row.bwd_ms = tb.median_ms;
        row.bwd_tflops = 2.5 * flops / tb.median_ms / 1e9;
        j["bwd_ms"] = std::round(tb.median_ms * 1e4) / 1e4;
        j["bwd_tflops"] = std::round(row.bwd_tflops * 10) / 10;
      }
      rows.push_back(row);
      emit_json(j);
    }
    std::printf("\n%-28s %-14s %9s %9s %9s %9s %12s %8s\n", "problem", "config", "fwd ms", "fwd TF/s", "bwd ms",
                "bwd TF/s", "first call", "density");
    for (const Row& r : rows)
      std::printf("%-28s %-14s %9.3f %9.1f %9.3f %9.1f %9.1f ms %8.3f%s\n", r.name.c_str(), r.config.c_str(), r.fwd_ms,
                  r.fwd_tflops, r.bwd_ms, r.bwd_tflops, r.first_ms, r.density, r.cached ? " (kernel from cache)" : "");
    return kExitOk;
  };
});

}  // namespace
}  // namespace flexjit::cli
