// The emitted CUDA and the host interpreter agree on a GPU: integer results bit for bit (wrap,
// division by zero, INT_MIN / -1, conversions), bools exactly, floats within each intrinsic's
// documented accuracy; buffers of every dtype read through FlexjitModArgs packed from
// mod_args_layout; out-of-bounds reads yield 0 and raise bit 0 of the kernel's error word.
//
// Self-contained: loads libcuda.so.1 itself (this test links only the expr module) and skips when
// no driver or device is present.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "expr/emitter.hpp"
#include "expr_test_util.hpp"
#include "mini_driver.hpp"

namespace flexjit::test {
namespace {

Declarations declarations() {
  Declarations d;
  for (const char* b : {"doc:i32:64", "slope:f32:16", "table:bf16:16", "halfs:f16:8", "flags:u8:16"})
    d.buffers.push_back(BufferDecl::parse(b));
  d.params = {ParamDecl::parse("cap:float"), ParamDecl::parse("window:int")};
  return d;
}

struct Case {
  const char* source;
  double rtol;  // floats: allowed relative error (plus 1e-6 absolute)
};

const Case kCases[] = {
    // ints and bools: exact
    {"q_idx + kv_idx", 0}, {"q_idx - kv_idx", 0}, {"q_idx * kv_idx", 0}, {"q_idx / kv_idx", 0},
    {"q_idx % kv_idx", 0}, {"-q_idx", 0}, {"abs(q_idx)", 0}, {"min(q_idx, kv_idx) + max(q_idx, kv_idx)", 0},
    {"clamp(q_idx, kv_idx, 100)", 0}, {"(q_idx & kv_idx) ^ (q_idx | 7)", 0}, {"int(score * 7.0)", 0},
    {"doc[q_idx & 63] + flags[kv_idx & 15] * window", 0}, {"int(q_idx > kv_idx) + q_idx / (kv_idx - kv_idx) + q_idx % (h - h)", 0},
    {"where(q_idx > 0, q_idx, kv_idx) / 3", 0}, {"q_idx >= kv_idx", 0}, {"q_idx < 1.5 * kv_idx", 0},
    {"(q_idx > 0) ^ (kv_idx > 0)", 0}, {"doc[q_idx & 63] == doc[kv_idx & 63] && q_idx >= kv_idx", 0},
    {"!(q_idx == kv_idx) || kv_idx > 0", 0}, {"int(score > 0.0) - q_idx", 0}, {"(q_idx > 0) & (kv_idx < 0) | (b == 1)", 0},
    // floats: within the intrinsics' accuracy
    {"score + slope[h] * (kv_idx - q_idx)", 1e-6}, {"30.0 * tanh(score / 30.0)", 2e-3},
    {"tanh(score)", 2e-3}, {"exp(score)", 1e-5}, {"exp2(score)", 1e-6}, {"log(abs(score) + 0.5)", 1e-5},
    {"log2(abs(score) + 0.5)", 1e-5}, {"sqrt(abs(score))", 1e-6}, {"rsqrt(abs(score) + 0.1)", 1e-6},
    {"sigmoid(score)", 1e-5}, {"sin(score) + cos(score * 4.0)", 1e-5}, {"cos(score) * sin(score * 64.0)", 1e-5},
    {"pow(score, 2)", 1e-6}, {"pow(abs(score), 1.5)", 1e-5}, {"floor(score) + ceil(score)", 0},
    {"score / 3.0 + score / cap", 1e-6}, {"table[q_idx & 15] + halfs[kv_idx & 7]", 0},
    {"float(q_idx) * 0.5", 1e-7}, {"where(q_idx >= kv_idx, score, -inf)", 0},
    {"abs(score) + min(score, 1.0) + max(score, cap) + clamp(score, -1.0, 1.0)", 1e-6},
};

TEST(DeviceSemantics, EmittedCodeMatchesTheInterpreter) {
  // Everything up to the NVRTC compile runs without a GPU too (for sm_80 then).
  const MiniDriver& cu = driver();
  const Declarations decls = declarations();

  // Inputs: extremes first, then random points.
  std::vector<int> qs = {INT_MAX, INT_MIN, INT_MIN, 0, -1, 46341, 7, -7, 7, 65536};
  std::vector<int> ks = {1, -1, 1, 0, 0, 46341, -2, 2, 0, 65536};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> index(-1000, 1000);
  std::uniform_real_distribution<float> score_dist(-10.0f, 10.0f);
  while (qs.size() < 4096) {
    qs.push_back(index(rng));
    ks.push_back(index(rng));
  }
  std::vector<float> scores(qs.size());
  for (auto& s : scores) s = score_dist(rng);
  scores[3] = 0.0f;
  const int n = static_cast<int>(qs.size());

  std::vector<int32_t> doc(64);
  for (int i = 0; i < 64; ++i) doc[static_cast<size_t>(i)] = i / 10;
  std::vector<float> slope(16);
  for (int i = 0; i < 16; ++i) slope[static_cast<size_t>(i)] = std::exp2(-0.5f * static_cast<float>(i + 1));
  std::vector<uint16_t> table(16), halfs = {0x3c00, 0xc000, 0x3555, 0x0001, 0x7bff, 0x0400, 0x8001, 0x0000};
  for (int i = 0; i < 16; ++i) {
    const float v = 0.75f * static_cast<float>(i) - 3.0f;
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    table[static_cast<size_t>(i)] = static_cast<uint16_t>(bits >> 16);
  }
  std::vector<uint8_t> flags(16);
  for (int i = 0; i < 16; ++i) flags[static_cast<size_t>(i)] = static_cast<uint8_t>(i * 17);
  EvalInputs inputs;
  inputs.buffers["doc"] = {doc.data(), DType::i32, {64}};
  inputs.buffers["slope"] = {slope.data(), DType::f32, {16}};
  inputs.buffers["table"] = {table.data(), DType::bf16, {16}};
  inputs.buffers["halfs"] = {halfs.data(), DType::f16, {8}};
  inputs.buffers["flags"] = {flags.data(), DType::u8, {16}};
  inputs.params["cap"] = 2.5;
  inputs.params["window"] = 3;

  // One kernel per case, plus one that reads out of bounds.
  std::vector<Expr> exprs;
  for (const Case& c : kCases) {
    try {
      exprs.push_back(Expr::parse(ModKind::score, c.source, decls));
    } catch (const ExprError&) {
      exprs.push_back(Expr::parse(ModKind::mask, c.source, decls));  // bool-valued cases
    }
  }
  exprs.push_back(Expr::parse(ModKind::score, "doc[q_idx]", decls));
  std::string program = "#include \"flexjit_expr.cuh\"\n" + emit_mod_args_struct(decls);
  for (size_t i = 0; i < exprs.size(); ++i) {
    const bool is_float = exprs[i].type() == ScalarType::floating;
    program += "extern \"C\" __global__ void k" + std::to_string(i) +
               "(FlexjitModArgs args, const int* qs, const int* ks, const float* scores, int n, int* out_i, "
               "float* out_f, unsigned* error_word) {\n  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n"
               "  const int b = i & 1, h = i & 15, q_idx = qs[i], kv_idx = ks[i], q_len = 4096, kv_len = 4096;\n"
               "  const float score = scores[i];\n  (void)b; (void)h; (void)q_len; (void)kv_len; (void)score;\n"
               "  unsigned flexjit_errors = 0;\n"
               "  " + std::string(is_float ? "out_f[i] = " : "out_i[i] = ") +
               expr::emit_cuda_expression(*exprs[i].root()) + ";\n  flexjit_report_errors(flexjit_errors, error_word);\n}\n";
  }
  // Compile for this device.
  std::vector<char> cubin;
  ASSERT_NO_FATAL_FAILURE(compile_for_device(program, {"flexjit_expr.cuh"}, cubin));
  if (!cu.unavailable.empty()) GTEST_SKIP() << cu.unavailable << " (the program compiled for sm_80)";
  CUmodule module = nullptr;
  CU(cu.load(&module, cubin.data()));

  // Device memory and the FlexjitModArgs bytes, laid out by mod_args_layout.
  const CUdeviceptr d_q = device_copy(qs.data(), qs.size() * 4), d_k = device_copy(ks.data(), ks.size() * 4),
                    d_s = device_copy(scores.data(), scores.size() * 4);
  CUdeviceptr d_out_i = 0, d_out_f = 0;
  CU(cu.alloc(&d_out_i, qs.size() * 4));
  CU(cu.alloc(&d_out_f, qs.size() * 4));
  std::vector<CUdeviceptr> buffers;
  std::vector<unsigned char> args = pack_mod_args_for_test(decls, inputs, buffers);
  const uint32_t no_errors = 0;
  const CUdeviceptr d_flags = device_copy(&no_errors, 4);  // the kernels' error word

  std::vector<int> out_i(qs.size());
  std::vector<float> out_f(qs.size());
  for (size_t k = 0; k < exprs.size(); ++k) {
    const Expr& e = exprs[k];
    const uint32_t zero = 0;
    CU(cu.upload(d_flags, &zero, 4));
    CUfunction fn = nullptr;
    CU(cu.function(&fn, module, ("k" + std::to_string(k)).c_str()));
    int count = n;
    void* params[] = {args.data(), (void*)&d_q,     (void*)&d_k,     (void*)&d_s,
                      &count,      (void*)&d_out_i, (void*)&d_out_f, (void*)&d_flags};
    CU(cu.launch(fn, static_cast<unsigned>((n + 127) / 128), 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
    CU(cu.synchronize());
    CU(cu.download(out_i.data(), d_out_i, qs.size() * 4));
    CU(cu.download(out_f.data(), d_out_f, qs.size() * 4));
    uint32_t error_flags = 0;
    CU(cu.download(&error_flags, d_flags, 4));

    const auto evaluator = e.bind(inputs);
    const double rtol = k < std::size(kCases) ? kCases[k].rtol : 0.0;
    int mismatches = 0, out_of_bounds = 0;
    for (int i = 0; i < n && mismatches < 5; ++i) {
      EvalPoint p;
      p.b = i & 1;
      p.h = i & 15;
      p.q_idx = qs[static_cast<size_t>(i)];
      p.kv_idx = ks[static_cast<size_t>(i)];
      p.q_len = p.kv_len = 4096;
      p.score = scores[static_cast<size_t>(i)];
      double expected = 0.0;
      try {
        expected = evaluator(p);
      } catch (const ExprError&) {
        ++out_of_bounds;  // the device reads 0 instead
      }
      const double got = e.type() == ScalarType::floating ? static_cast<double>(out_f[static_cast<size_t>(i)])
                                                          : static_cast<double>(out_i[static_cast<size_t>(i)]);
      const bool same = rtol == 0.0 ? (e.type() == ScalarType::floating ? static_cast<float>(expected) == got : expected == got)
                                    : std::fabs(got - expected) <= rtol * std::fabs(expected) + 1e-6;
      if (!same) {
        ++mismatches;
        ADD_FAILURE() << e.source() << " at q_idx=" << p.q_idx << " kv_idx=" << p.kv_idx << " score=" << p.score
                      << ": device " << got << ", host " << expected;
      }
    }
    EXPECT_EQ(error_flags, out_of_bounds ? 1u : 0u) << e.source();
    if (k + 1 == exprs.size()) {
      EXPECT_GT(out_of_bounds, 1000) << "the last case reads out of bounds";
    }
  }
}

}  // namespace
}  // namespace flexjit::test
