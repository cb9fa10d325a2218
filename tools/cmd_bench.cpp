// `flexjit bench`: times the forward and backward passes of every problem of a suite on the GPU,
// the way the peer benchmark does (L2 flushed before each run, event-timed, median), and prints a
// table plus JSON lines in the schema of bench/README.md so compare.py can put flexjit beside the
// peers. Also reports what the first call cost: NVRTC compile time of the forward kernel and the
// time to get it ready in this process (a disk-cache load when the cache is warm).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include "backward_mode_option.hpp"
#include "command.hpp"
#include "flexjit/error.hpp"
#include "nlohmann/json.hpp"
#include "problem_inputs.hpp"
#include "tune/timing.hpp"

namespace flexjit::cli {
namespace {

using Clock = std::chrono::steady_clock;

double round_to(double x, double unit) { return std::round(x / unit) * unit; }

CommandRegistrar registrar("bench", "Time a problem suite on the GPU; print a table and JSON lines", [](CLI::App& app) {
  struct Options {
    std::string suite = "bench/suite.json";
    std::string only, json_path, config, decode_config, dq_config, dkdv_config;
    std::vector<std::string> grad;
    bool no_bwd = false;
    bool no_block_mask = false;
    int mask_q_block = 128;
    BackwardModeOption bwd_mode;
  };
  auto o = std::make_shared<Options>();
  app.add_option("--suite", o->suite, "problem suite (JSON, schema of bench/suite.json)")->capture_default_str();
  app.add_option("--only", o->only, "comma-separated problem names to run");
  app.add_option("--json", o->json_path, "also write the JSON lines to this file");
  app.add_option("--config", o->config, "forward block config for every problem, e.g. m128n128w8s2g (default: autotuned)");
  app.add_option("--decode-config", o->decode_config, "decode kernel block config for the decode problems, e.g. m16n64w4s3");
  app.add_option("--dq-config", o->dq_config, "backward dQ kernel block config, e.g. m64n64w4s2g");
  app.add_option("--dkdv-config", o->dkdv_config, "backward dK/dV kernel block config, e.g. m64n64w4s2g");
  app.add_flag("--no-bwd", o->no_bwd, "forward only");
  app.add_flag("--no-block-mask", o->no_block_mask,
               "call without the block-sparse tables (TF/s still count the mask's density): every key tile, or for a "
               "mask whose tiles interval bounds can class, the warp-specialised forward's tile-bounds walk");
  app.add_option("--mask-q-block", o->mask_q_block,
                 "query rows per block of the block-sparse tables (e.g. 192, for the 192-row forward tiles; TF/s "
                 "still count the 128 x 128 tables' density)")
      ->capture_default_str()
      ->check(CLI::Range(16, 4096));
  o->bwd_mode.add_option(app);
  app.add_option("--grad", o->grad, "make this float buffer learnable: the backward also computes its gradient");
  return [o]() {
    auto problems = select_problems(load_suite(o->suite), o->only);
    mark_grad_buffers(problems, o->grad);
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
      std::string name, fwd_config, bwd_config, bwd_mode;
      double fwd_ms = 0, fwd_tflops = 0, bwd_ms = 0, bwd_tflops = 0, first_ms = 0, density = 1;
      double compile_ms = 0, load_ms = 0, gbps = 0;
      bool from_cache = false;
    };
    std::vector<Row> rows;
    for (const SuiteProblem& p : problems) for_problem(p, [&] {
      AttentionSpec spec = problem_spec(p);
      if (!o->config.empty()) spec.fwd_config = BlockConfig::parse(o->config);
      if (!o->decode_config.empty()) spec.decode_config = BlockConfig::parse(o->decode_config);
      if (!o->dq_config.empty()) spec.bwd_dq_config = BlockConfig::parse(o->dq_config);
      if (!o->dkdv_config.empty()) spec.bwd_dkdv_config = BlockConfig::parse(o->dkdv_config);
      const Attention attention(spec);
      const bool backward = !o->no_bwd && !p.decode;  // decode problems are forward only
      ProblemInputs in = ProblemInputs::create(p, attention, backward, rng, o->mask_q_block);
      if (o->no_block_mask) in.mask.reset();
      o->bwd_mode.apply(in.call);
      Row row;
      row.name = p.name;
      row.density = in.density;
      // The first call: config choice (autotune cache or tuning), kernel compile or disk load.
      const auto t0 = Clock::now();
      in.forward(attention, nullptr);
      synchronize();
      row.first_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      // What the first call cost (later calls find the kernel in the in-process cache).
      for (const KernelChoice& c : attention.last_choices())
        if (c.family == "fwd" || c.family == "decode") {
          row.compile_ms = c.compile_ms;
          row.load_ms = c.load_ms;
          row.from_cache = c.from_disk_cache;
        }
      const tune::Timing tf = tune::time_on_gpu([&](Stream s) { in.forward(attention, s); });
      const double flops = p.dense_flops() * in.density;
      row.fwd_ms = tf.median_ms;
      row.fwd_tflops = flops / tf.median_ms / 1e9;
      if (p.decode) row.gbps = p.decode_bytes() / tf.median_ms / 1e6;
      if (backward) {
        in.backward(attention, nullptr);  // choose / tune the backward configs before timing
        synchronize();
        const tune::Timing tb = tune::time_on_gpu([&](Stream s) { in.backward(attention, s); });
        row.bwd_ms = tb.median_ms;
        row.bwd_tflops = 2.5 * flops / tb.median_ms / 1e9;
      }
      check_buffer_errors();
      for (const KernelChoice& c : attention.last_choices()) {
        if (c.family == "fwd" || c.family == "decode") {
          row.fwd_config = c.config.str() + (c.lean_registers ? " lean" : "") + " (" + c.source + ")";
        } else if (c.family != "bwd_preprocess") {
          row.bwd_config += (row.bwd_config.empty() ? "" : " ") + c.config.str();
          if (c.family == "bwd_dkdv")
            row.bwd_mode = c.backward_mode + ", " + c.dq_path +
                           (c.kv_head_splits > 1 ? ", heads in " + std::to_string(c.kv_head_splits) + " splits" : "") +
                           (c.backward_mode_reason.empty() ? "" : " (" + c.backward_mode_reason + ")");
        }
      }
      nlohmann::json j = {{"system", "flexjit"}, {"name", p.name}, {"fwd_ms", round_to(row.fwd_ms, 1e-4)},
                          {"fwd_tflops", round_to(row.fwd_tflops, 0.1)}, {"first_call_ms", round_to(row.first_ms, 0.01)},
                          {"density", round_to(row.density, 1e-4)}, {"fwd_config", row.fwd_config},
                          {"fwd_compile_ms", round_to(row.compile_ms, 0.1)}, {"fwd_load_ms", round_to(row.load_ms, 0.01)},
                          {"fwd_kernel_from_disk_cache", row.from_cache}};
      if (p.decode) {
        j["kind"] = "decode";
        j["fwd_gbps"] = round_to(row.gbps, 0.1);
      }
      if (backward) {
        j["bwd_ms"] = round_to(row.bwd_ms, 1e-4);
        j["bwd_tflops"] = round_to(row.bwd_tflops, 0.1);
        j["bwd_configs"] = row.bwd_config;
        j["bwd_mode"] = row.bwd_mode;
      }
      emit_json(j);
      rows.push_back(row);
    });
    std::printf("\n%-27s %9s %9s %10s %10s %9s %8s %8s  %s\n", "problem", "fwd TF/s", "bwd TF/s", "first call",
                "compile", "load", "density", "fwd GB/s", "configs (fwd; dkdv dq; bwd mode)");
    for (const Row& r : rows)
      std::printf("%-27s %9.1f %9.1f %7.1f ms %7.0f ms %6.2f ms %8.3f %8.0f  %s; %s%s%s\n", r.name.c_str(), r.fwd_tflops,
                  r.bwd_tflops, r.first_ms, r.compile_ms, r.load_ms, r.density, r.gbps, r.fwd_config.c_str(),
                  r.bwd_config.c_str(), r.bwd_mode.empty() ? "" : "; ", r.bwd_mode.c_str());
    return kExitOk;
  };
});

}  // namespace
}  // namespace flexjit::cli
