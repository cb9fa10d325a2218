#pragma once
// Helpers for attention GPU tests: fresh random inputs rounded to the kernel dtype, uploads in
// [B,H,S,D] or [B,S,H,D] storage, outputs poisoned with NaN, and the float64 CPU reference.
// Header-only because it needs the attention module, which only GPU tests link.
#include <gtest/gtest.h>
#include <algorithm>
#include <array>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/half.hpp"
#include "common/values.hpp"
#include "flexjit/attention.hpp"
#include "flexjit/reference.hpp"
#include "jit/driver.hpp"
#include "support/gpu.hpp"

namespace flexjit::test {

// A seed for "fresh random inputs": different every run, printed on failure so a run can be
// reproduced with FLEXJIT_TEST_SEED.
inline uint64_t fresh_seed() {
  const char* s = std::getenv("FLEXJIT_TEST_SEED");
  if (s != nullptr && *s != '\0') return std::strtoull(s, nullptr, 10);
  return std::random_device{}() * 0x9E3779B97F4A7C15ull ^ std::random_device{}();
}

// A non-blocking stream of the current context (made current first), destroyed with the object.
struct OwnedStream {
  CUstream stream = nullptr;
  OwnedStream() {
    jit::ensure_context();
    FLEXJIT_CU(jit::driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  }
  ~OwnedStream() { jit::driver().cuStreamDestroy(stream); }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
};

// Work captured into a CUDA graph on a stream and the graph launched once (replay); the graph and
// its executable are destroyed with the object, once the caller has read what it wrote.
class GraphReplay {
 public:
  explicit GraphReplay(CUstream stream) : stream_(stream) {}
  ~GraphReplay() {
    const jit::Driver& d = jit::driver();
    if (exec_) d.cuGraphExecDestroy(exec_);
    if (graph_) d.cuGraphDestroy(graph_);
  }
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;
  // Whether the driver has the stream-capture entry points replay needs.
  static bool available() {
    const jit::Driver& d = jit::driver();
    return d.cuStreamBeginCapture && d.cuStreamEndCapture && d.cuGraphInstantiate && d.cuGraphLaunch;
  }
  void replay(const std::function<void()>& work) {
    const jit::Driver& d = jit::driver();
    FLEXJIT_CU(d.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL));
    work();
    FLEXJIT_CU(d.cuStreamEndCapture(stream_, &graph_));
    FLEXJIT_CU(d.cuGraphInstantiate(&exec_, graph_, 0));
    FLEXJIT_CU(d.cuGraphLaunch(exec_, stream_));
  }

 private:
  CUstream stream_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

inline double round_to(double x, DType dtype) {
  switch (dtype) {
    case DType::bf16: return bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(x)));
    case DType::f16: return f16_bits_to_float(float_to_f16_bits(static_cast<float>(x)));
    case DType::f32: return static_cast<float>(x);
    case DType::i32: return static_cast<double>(static_cast<int32_t>(x));
    case DType::u8: return static_cast<double>(static_cast<uint8_t>(x));
  }
  return x;
}

// Normal(0, stddev) values already rounded to `dtype`.
inline std::vector<double> random_values(size_t n, std::mt19937_64& rng, DType dtype, double stddev = 1.0) {
  std::normal_distribution<double> normal(0.0, stddev);
  std::vector<double> out(n);
  for (auto& x : out) x = round_to(normal(rng), dtype);
  return out;
}

// Host bytes of `values` in `dtype`, and back.
inline std::vector<unsigned char> to_bytes(const std::vector<double>& values, DType dtype) {
  return encode_values(values, dtype);
}
inline std::vector<double> from_bytes(const std::vector<unsigned char>& bytes, DType dtype) {
  return decode_values(bytes.data(), bytes.size() / dtype_size(dtype), dtype);
}

// A [B, H, S, D] operand on the device, stored either [B,H,S,D] or [B,S,H,D].
struct DeviceOperand {
  DeviceBuffer buffer;
  TensorView view;
  bool bshd = false;
  int B = 0, H = 0, S = 0, D = 0;
  int pad = 0;  // columns after each row's D (row stride D + pad): NaN in inputs, never written in outputs

  static DeviceOperand allocate(int B, int H, int S, int D, DType dtype, bool bshd, int pad = 0) {
    DeviceOperand op;
    op.bshd = bshd;
    op.B = B, op.H = H, op.S = S, op.D = D, op.pad = pad;
    const int64_t L = D + pad;
    op.buffer = DeviceBuffer::allocate(size_t(B) * H * S * L * dtype_size(dtype));
    if (bshd)
      op.view = TensorView::strided(op.buffer.data(), dtype, {B, H, S, D}, {int64_t(S) * H * L, L, int64_t(H) * L, 1});
    else if (pad > 0)
      op.view = TensorView::strided(op.buffer.data(), dtype, {B, H, S, D}, {int64_t(H) * S * L, int64_t(S) * L, L, 1});
    else
      op.view = TensorView::contiguous(op.buffer.data(), dtype, {B, H, S, D});
    return op;
  }
  // Memory position of logical element (b, h, s, d).
  size_t memory_index(size_t logical) const {
    if (!bshd && pad == 0) return logical;
    const size_t d = logical % D, s = (logical / D) % S, h = (logical / D / S) % H, b = logical / D / S / H;
    const size_t L = size_t(D) + pad;
    return bshd ? ((b * S + s) * H + h) * L + d : ((b * H + h) * S + s) * L + d;
  }
  size_t memory_elements() const { return size_t(B) * H * S * (D + pad); }
  void upload(const std::vector<double>& logical) {
    std::vector<double> memory(memory_elements(), std::nan(""));  // the padding NaN: a kernel that reads it fails
    for (size_t i = 0; i < logical.size(); ++i) memory[memory_index(i)] = logical[i];
    const auto bytes = to_bytes(memory, view.dtype);
    buffer.upload(bytes.data(), bytes.size());
  }
  // Whether every padding element is still NaN (as poison_with_nan left it): nothing wrote past D.
  bool padding_untouched() const {
    if (pad == 0) return true;
    std::vector<unsigned char> bytes(buffer.bytes());
    buffer.download(bytes.data(), bytes.size());
    const auto memory = from_bytes(bytes, view.dtype);
    for (size_t row = 0; row < memory.size() / (D + pad); ++row)
      for (int c = D; c < D + pad; ++c)
        if (!std::isnan(memory[row * (D + pad) + c])) return false;
    return true;
  }
  std::vector<double> download() const {
    std::vector<unsigned char> bytes(buffer.bytes());
    buffer.download(bytes.data(), bytes.size());
    return logical_values(bytes);
  }
  // As download(), by a copy queued on `stream` (ordered after the work already there), waiting
  // for that stream only.
  std::vector<double> download_after(Stream stream) const {
    std::vector<unsigned char> bytes(buffer.bytes());
    const jit::Driver& d = jit::driver();
    FLEXJIT_CU(d.cuMemcpyDtoHAsync(bytes.data(), reinterpret_cast<CUdeviceptr>(buffer.data()), bytes.size(), stream));
    FLEXJIT_CU(d.cuStreamSynchronize(stream));
    return logical_values(bytes);
  }

 private:
  std::vector<double> logical_values(const std::vector<unsigned char>& bytes) const {
    const auto memory = from_bytes(bytes, view.dtype);
    std::vector<double> logical(size_t(B) * H * S * D);
    for (size_t i = 0; i < logical.size(); ++i) logical[i] = memory[memory_index(i)];
    return logical;
  }
};

// A buffer the mods read: host values (for the reference) and device copy (for the kernels).
struct TestBuffer {
  BufferDecl decl;
  std::vector<double> values;
};

// Document ids for `length` positions: random segment lengths, like the suite's packed documents.
inline TestBuffer document_ids(int length, std::mt19937_64& rng, const std::string& name = "doc") {
  TestBuffer b;
  b.decl = BufferDecl{name, DType::i32, {length}};
  std::uniform_int_distribution<int> segment(1, std::max(2, length / 6));
  int doc = 0;
  while (static_cast<int>(b.values.size()) < length) {
    const int n = segment(rng);
    for (int i = 0; i < n && static_cast<int>(b.values.size()) < length; ++i) b.values.push_back(doc);
    ++doc;
  }
  return b;
}

// start[d]: the first position of document d of `doc` (document_ids: ids ascending from 0).
inline TestBuffer document_starts(const TestBuffer& doc, const std::string& name = "start") {
  TestBuffer b;
  for (size_t i = 0; i < doc.values.size(); ++i)
    if (i == 0 || doc.values[i] != doc.values[i - 1]) b.values.push_back(static_cast<double>(i));
  b.decl = BufferDecl{name, DType::i32, {static_cast<int>(b.values.size())}};
  return b;
}

inline TestBuffer alibi_slopes(int heads) {
  TestBuffer b;
  b.decl = BufferDecl{"slope", DType::f32, {heads}};
  for (int h = 0; h < heads; ++h) b.values.push_back(std::exp2(-8.0 * (h + 1) / heads));
  return b;
}

// score_mods whose constants the kernels fold into the softmax scale and log2(e)
// (Expr::emit_cuda_prescaled): a temperature, soft-capping beside ALiBi's `slope` buffer, a quotient
// and a negation at the root, factors that differ (none folded).
inline const std::vector<std::string>& score_mods_with_constant_factors() {
  static const std::vector<std::string> mods = {
      "score * 1.5",
      "8.0 * tanh(score * 0.125) + slope[h] * (kv_idx - q_idx)",
      "exp2(score * 0.5) / 4.0",
      "-(score * score) / 64.0",
      "where(score > 0.0, score / 4.0, score * 0.25)",
  };
  return mods;
}

struct FwdProblem {
  std::string score_mod, mask_mod;
  std::vector<TestBuffer> buffers;
  std::vector<ParamDecl> param_decls;
  std::map<std::string, double> params;
  int B = 1, Hq = 2, Hkv = 2, Sq = 256, Skv = 256, D = 128, Dv = 128;
  DType dtype = DType::bf16;
  bool use_block_mask = true;
  int q_block = 128, kv_block = 128;  // the block mask's blocks
  bool bshd = false;
  std::optional<bool> out_bshd;            // the forward's out in a layout of its own (default: bshd's)
  // Columns after every row of Q, K, V, O, dO and the gradients (DeviceOperand::pad): the inputs'
  // are NaN and the outputs' must stay as poisoned (FwdOutcome / BwdOutcome::padding_untouched).
  int row_padding = 0;
  std::optional<BlockConfig> config;       // forward
  std::optional<BlockConfig> dq_config;    // backward dQ kernel
  std::optional<BlockConfig> dkdv_config;  // backward dK/dV kernel
  std::optional<float> scale;
  std::optional<BackwardMode> backward_mode;  // unset: FLEXJIT_DETERMINISTIC decides (default fast)
  bool reversed_buffers = false;  // pass the buffers as reversed views (upload_buffers): the 64-bit reads
  // Backward checks: tables a caller gives (BlockMask::from_tables) in place of the mask's own, and
  // the mask_mod the float64 reference applies for them (the kernels see only the tables).
  std::optional<BlockMask> given_tables;
  std::string reference_mask_mod;
  // Backward checks: the dO row (batch, query head, query) set to NaN before the backward; the
  // gradients it reaches are then NaN (BwdOutcome's errors are infinite, its values tell where).
  std::optional<std::array<int, 3>> nan_dout_row;

  Declarations declarations() const {
    Declarations d;
    for (const auto& b : buffers) d.buffers.push_back(b.decl);
    d.params = param_decls;
    return d;
  }
};

// The variant a test problem describes (configs left to the defaults where the problem sets none).
inline Attention make_attention(const FwdProblem& p) {
  AttentionSpec spec;
  spec.score_mod = p.score_mod;
  spec.mask_mod = p.mask_mod;
  spec.declarations = p.declarations();
  spec.dtype = p.dtype;
  spec.head_dim = p.D;
  spec.head_dim_v = p.Dv;
  spec.fwd_config = p.config;
  spec.bwd_dq_config = p.dq_config;
  spec.bwd_dkdv_config = p.dkdv_config;
  return Attention(spec);
}

struct FwdOutcome {
  double out_error = 0;
  double lse_error = 0;
  uint64_t seed = 0;
  std::vector<double> out, lse, ref_out, ref_lse;
  bool padding_untouched = true;  // FwdProblem::row_padding: no column of out past Dv was written
};

// Uploads the mods' buffers and returns their device storage (kept alive by the caller) and views.
// `reversed`: each buffer is stored back to front and passed as a view with negated strides
// (first element last in memory), the same values through addresses that only 64-bit reads take
// (KernelSpec::buffer_offsets_32 is off for a negative stride).
inline ModValues upload_buffers(const std::vector<TestBuffer>& buffers, std::vector<DeviceBuffer>& storage,
                                const std::map<std::string, double>& params, bool reversed = false) {
  ModValues values;
  values.params = params;
  for (const auto& b : buffers) {
    std::vector<double> stored = b.values;
    if (reversed) std::reverse(stored.begin(), stored.end());
    const auto bytes = to_bytes(stored, b.decl.dtype);
    storage.push_back(DeviceBuffer::allocate(std::max<size_t>(bytes.size(), 16)));
    storage.back().upload(bytes.data(), bytes.size());
    std::vector<int64_t> shape = b.decl.shape;
    if (shape.size() == 1 && shape[0] < 0) shape[0] = static_cast<int64_t>(b.values.size());
    TensorView view = TensorView::contiguous(storage.back().data(), b.decl.dtype, shape);
    if (reversed && !b.values.empty()) {
      view.data = static_cast<unsigned char*>(view.data) + (b.values.size() - 1) * dtype_size(b.decl.dtype);
      for (int64_t& stride : view.strides) stride = -stride;
    }
    values.buffers[b.decl.name] = view;
  }
  return values;
}

inline EvalInputs host_inputs(const std::vector<TestBuffer>& buffers, const std::map<std::string, double>& params,
                              std::vector<std::vector<unsigned char>>& storage) {
  EvalInputs inputs;
  inputs.params = params;
  for (const auto& b : buffers) {
    storage.push_back(to_bytes(b.values, b.decl.dtype));
    std::vector<int64_t> shape = b.decl.shape;
    if (shape.size() == 1 && shape[0] < 0) shape[0] = static_cast<int64_t>(b.values.size());
    inputs.buffers[b.decl.name] = HostBufferView{storage.back().data(), b.decl.dtype, shape};
  }
  return inputs;
}

// Runs the forward kernel on fresh random inputs and compares with the float64 reference.
inline FwdOutcome run_forward_check(const FwdProblem& p, uint64_t seed = fresh_seed()) {
  FwdOutcome r;
  r.seed = seed;
  std::mt19937_64 rng(seed);
  const Attention attention = make_attention(p);

  const auto q = random_values(size_t(p.B) * p.Hq * p.Sq * p.D, rng, p.dtype);
  const auto k = random_values(size_t(p.B) * p.Hkv * p.Skv * p.D, rng, p.dtype);
  const auto v = random_values(size_t(p.B) * p.Hkv * p.Skv * p.Dv, rng, p.dtype);
  auto dq = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.D, p.dtype, p.bshd, p.row_padding);
  auto dk = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.D, p.dtype, p.bshd, p.row_padding);
  auto dv = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.Dv, p.dtype, p.bshd, p.row_padding);
  auto dout = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.Dv, p.dtype, p.out_bshd.value_or(p.bshd), p.row_padding);
  dq.upload(q);
  dk.upload(k);
  dv.upload(v);
  poison_with_nan(dout.buffer, p.dtype);
  DeviceBuffer lse = DeviceBuffer::allocate(size_t(p.B) * p.Hq * p.Sq * 4);
  poison_with_nan(lse, DType::f32);
  const TensorView lse_view = TensorView::contiguous(lse.data(), DType::f32, {p.B, p.Hq, p.Sq});

  std::vector<DeviceBuffer> buffer_storage;
  CallOptions options;
  options.values = upload_buffers(p.buffers, buffer_storage, p.params, p.reversed_buffers);
  options.scale = p.scale;
  std::optional<BlockMask> mask;
  if (p.use_block_mask)
    mask = p.q_block == 128 && p.kv_block == 128
               ? attention.block_mask(p.B, p.Hq, p.Sq, p.Skv, nullptr, options.values)
               : BlockMask::build_on_gpu(attention.mask_mod(), p.B, p.Hq, p.Sq, p.Skv, options.values, nullptr,
                                         p.q_block, p.kv_block);
  attention.forward(dq.view, dk.view, dv.view, dout.view, lse_view, mask ? &*mask : nullptr, nullptr, options);
  synchronize();
  check_buffer_errors();  // tail positions must never index the mods' buffers out of bounds
  r.out = dout.download();
  r.padding_untouched = dout.padding_untouched();
  r.lse = from_bytes(lse.to_host<unsigned char>(), DType::f32);

  std::vector<std::vector<unsigned char>> host_storage;
  const EvalInputs inputs = host_inputs(p.buffers, p.params, host_storage);
  ReferenceShape shape{p.B, p.Hq, p.Hkv, p.Sq, p.Skv, p.D, p.Dv};
  const double scale = p.scale ? *p.scale : 1.0 / std::sqrt(double(p.D));
  ReferenceForward ref = reference_forward(attention.score_mod(), attention.mask_mod(), inputs, shape, q, k, v, scale);
  r.ref_out = std::move(ref.out);
  r.ref_lse = std::move(ref.lse);
  r.out_error = flexjit::relative_error(r.out, r.ref_out);
  r.lse_error = flexjit::relative_error(r.lse, r.ref_lse);
  return r;
}

inline double tolerance(DType dtype) { return dtype == DType::f16 ? 5e-3 : 1e-2; }

}  // namespace flexjit::test

namespace flexjit::test {

struct BwdOutcome {
  double dq_error = 0, dk_error = 0, dv_error = 0;
  uint64_t seed = 0;
  std::vector<double> dq, dk, dv;  // as computed on the GPU (logical [B,H,S,D] order)
  std::vector<double> ref_dq, ref_dk, ref_dv;  // the float64 reference's, same order
  std::string mode, mode_reason;   // the backward mode that ran (KernelChoice of bwd_dkdv)
  std::string dq_path;             // how it summed dQ (KernelChoice::dq_path)
  int dkdv_tile_d = 0, dkdv_tile_dv = 0;  // the dK/dV kernel's tiles (KernelChoice::tile_head_dim)
  int kv_head_splits = 1;          // CTAs per GQA group of the dK/dV kernel (KernelChoice::kv_head_splits)
  bool padding_untouched = true;   // FwdProblem::row_padding: no gradient column past D / Dv was written
};

// Forward then backward on fresh random inputs; gradients against the float64 reference.
// With `repeat`, runs the backward a second time on the same inputs and requires identical bits
// (of dQ too when the deterministic mode ran).
// With a `stream`, everything runs on it and the gradients are copied back by copies queued on it
// after the backward, with only that stream synchronised. With `enqueue`, the backward call is
// handed to it (to capture it into a graph and launch that, say) instead of being made directly.
using BackwardEnqueuer = std::function<void(const std::function<void()>& backward)>;
inline BwdOutcome run_backward_check(const FwdProblem& p, bool repeat = false, uint64_t seed = fresh_seed(),
                                     Stream stream = nullptr, const BackwardEnqueuer& enqueue = nullptr) {
  BwdOutcome r;
  r.seed = seed;
  std::mt19937_64 rng(seed);
  const Attention attention = make_attention(p);

  const auto q = random_values(size_t(p.B) * p.Hq * p.Sq * p.D, rng, p.dtype);
  const auto k = random_values(size_t(p.B) * p.Hkv * p.Skv * p.D, rng, p.dtype);
  const auto v = random_values(size_t(p.B) * p.Hkv * p.Skv * p.Dv, rng, p.dtype);
  auto dout = random_values(size_t(p.B) * p.Hq * p.Sq * p.Dv, rng, p.dtype);
  if (p.nan_dout_row) {
    const auto [nb, nh, nq] = *p.nan_dout_row;
    const size_t row = ((size_t(nb) * p.Hq + nh) * p.Sq + nq) * p.Dv;
    std::fill(dout.begin() + row, dout.begin() + row + p.Dv, std::nan(""));
  }
  const int pad = p.row_padding;
  auto dq_ = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.D, p.dtype, p.bshd, pad);
  auto dk_ = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.D, p.dtype, p.bshd, pad);
  auto dv_ = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.Dv, p.dtype, p.bshd, pad);
  auto dout_ = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.Dv, p.dtype, p.bshd, pad);
  auto out_ = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.Dv, p.dtype, p.bshd, pad);
  auto gq = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.D, p.dtype, p.bshd, pad);
  auto gk = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.D, p.dtype, p.bshd, pad);
  auto gv = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.Dv, p.dtype, p.bshd, pad);
  dq_.upload(q);
  dk_.upload(k);
  dv_.upload(v);
  dout_.upload(dout);
  poison_with_nan(out_.buffer, p.dtype);  // O's padding (row_padding) stays NaN: the backward must not read it
  DeviceBuffer lse = DeviceBuffer::allocate(size_t(p.B) * p.Hq * p.Sq * 4);
  const TensorView lse_view = TensorView::contiguous(lse.data(), DType::f32, {p.B, p.Hq, p.Sq});

  std::vector<DeviceBuffer> buffer_storage;
  CallOptions options;
  options.values = upload_buffers(p.buffers, buffer_storage, p.params, p.reversed_buffers);
  options.scale = p.scale;
  options.backward_mode = p.backward_mode;
  std::optional<BlockMask> mask = p.given_tables;
  if (!mask && p.use_block_mask)
    mask = p.q_block == 128 && p.kv_block == 128
               ? attention.block_mask(p.B, p.Hq, p.Sq, p.Skv, stream, options.values)
               : BlockMask::build_on_gpu(attention.mask_mod(), p.B, p.Hq, p.Sq, p.Skv, options.values, stream,
                                         p.q_block, p.kv_block);
  attention.forward(dq_.view, dk_.view, dv_.view, out_.view, lse_view, mask ? &*mask : nullptr, stream, options);
  synchronize(stream);
  auto run = [&] {
    poison_with_nan(gq.buffer, p.dtype);
    poison_with_nan(gk.buffer, p.dtype);
    poison_with_nan(gv.buffer, p.dtype);
    const auto backward = [&] {
      attention.backward(dq_.view, dk_.view, dv_.view, out_.view, lse_view, dout_.view, gq.view, gk.view, gv.view,
                         mask ? &*mask : nullptr, stream, options);
    };
    if (enqueue)
      enqueue(backward);
    else
      backward();
    if (stream == nullptr) {
      synchronize();
      check_buffer_errors();
    }
  };
  run();
  if (stream != nullptr) {
    r.dq = gq.download_after(stream);
    r.dk = gk.download_after(stream);
    r.dv = gv.download_after(stream);
    check_buffer_errors();
  } else {
    r.dq = gq.download();
    r.dk = gk.download();
    r.dv = gv.download();
  }
  r.padding_untouched = gq.padding_untouched() && gk.padding_untouched() && gv.padding_untouched();
  for (const KernelChoice& c : attention.last_choices())
    if (c.family == "bwd_dkdv") {
      r.mode = c.backward_mode, r.mode_reason = c.backward_mode_reason, r.dq_path = c.dq_path;
      r.kv_head_splits = c.kv_head_splits;
      r.dkdv_tile_d = c.tile_head_dim, r.dkdv_tile_dv = c.tile_head_dim_v;
    }
  if (repeat) {
    std::vector<unsigned char> first_q(gq.buffer.bytes()), first_k(gk.buffer.bytes()), first_v(gv.buffer.bytes());
    gq.buffer.download(first_q.data(), first_q.size());
    gk.buffer.download(first_k.data(), first_k.size());
    gv.buffer.download(first_v.data(), first_v.size());
    run();
    std::vector<unsigned char> again(gq.buffer.bytes());
    gq.buffer.download(again.data(), again.size());
    // The fast mode sums dQ with atomic adds in whatever order the CTAs run; dK and dV are
    // written once in both modes.
    if (r.mode == "deterministic") {
      EXPECT_TRUE(again == first_q) << "dq differs between two runs on the same inputs";
    }
    again.resize(gk.buffer.bytes());
    gk.buffer.download(again.data(), again.size());
    EXPECT_TRUE(again == first_k) << "dk differs between two runs on the same inputs";
    again.resize(gv.buffer.bytes());
    gv.buffer.download(again.data(), again.size());
    EXPECT_TRUE(again == first_v) << "dv differs between two runs on the same inputs";
  }

  std::vector<std::vector<unsigned char>> host_storage;
  const EvalInputs inputs = host_inputs(p.buffers, p.params, host_storage);
  ReferenceShape shape{p.B, p.Hq, p.Hkv, p.Sq, p.Skv, p.D, p.Dv};
  const double scale = p.scale ? *p.scale : 1.0 / std::sqrt(double(p.D));
  const Expr reference_mask = p.reference_mask_mod.empty()
                                 ? attention.mask_mod()
                                 : Expr::parse(ModKind::mask, p.reference_mask_mod, p.declarations());
  ReferenceBackward ref = reference_backward(attention.score_mod(), reference_mask, inputs, shape, q, k, v, dout, scale);
  r.dq_error = flexjit::relative_error(r.dq, ref.dq);
  r.dk_error = flexjit::relative_error(r.dk, ref.dk);
  r.dv_error = flexjit::relative_error(r.dv, ref.dv);
  r.ref_dq = std::move(ref.dq);
  r.ref_dk = std::move(ref.dk);
  r.ref_dv = std::move(ref.dv);
  return r;
}

}  // namespace flexjit::test
