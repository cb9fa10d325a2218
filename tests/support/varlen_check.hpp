// The per-sequence lengths check (CallOptions::seq_lens) shared by the GPU tests: forward and
// backward on fresh random inputs against the float64 reference with the same lengths, whole
// tensors and row by row (row_errors.hpp); rows past
// a sequence's queries stay as they were (NaN), gradients past its lengths are zero, a sequence
// without keys gives out 0 and lse -inf, and with `repeat` a second backward gives the same bits.
// The inputs' padding past the lengths (q, k, v, dout) is NaN, which no result may show.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/attention_harness.hpp"
#include "support/row_errors.hpp"

namespace flexjit::test {

struct Lengths {
  std::vector<int32_t> q, kv;
};

// Values of the rows of `all` ([B][H][S][D]) that lie inside each sequence's first lens[b] rows.
inline std::vector<double> rows_inside(const std::vector<double>& all, int B, int H, int S, int D,
                                const std::vector<int32_t>& lens, bool inside = true) {
  std::vector<double> out;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int s = 0; s < S; ++s)
        if ((s < lens[b]) == inside)
          for (int d = 0; d < D; ++d) out.push_back(all[((size_t(b) * H + h) * S + s) * D + d]);
  return out;
}

inline int count_if_not(const std::vector<double>& values, bool (*ok)(double)) {
  int bad = 0;
  for (double x : values) bad += ok(x) ? 0 : 1;
  return bad;
}

// Forward (and with `backward` the backward, twice with `repeat`) with lengths on random inputs
// drawn from `seed`; every check is an EXPECT naming `what` and the seed.
// Block-mask tables of a check: none, of the padded lengths, or built with the lengths.
enum class Tables { none, padded, with_lengths };

// With `backward_mode_reason`, the backward's KernelChoice of bwd_dkdv says there why the mode
// that ran is not the one asked for (empty where it is).
inline void check_varlen(const FwdProblem& p, const Lengths& lens, const std::string& what, bool backward = true,
                         bool repeat = false, bool host_copies = true, Tables tables = Tables::none,
                         uint64_t seed = fresh_seed(), std::string* backward_mode_reason = nullptr) {
  std::mt19937_64 rng(seed);
  const std::string where = what + ", seed " + std::to_string(seed);
  const Attention attention = make_attention(p);
  auto q = random_values(size_t(p.B) * p.Hq * p.Sq * p.D, rng, p.dtype);
  auto k = random_values(size_t(p.B) * p.Hkv * p.Skv * p.D, rng, p.dtype);
  auto v = random_values(size_t(p.B) * p.Hkv * p.Skv * p.Dv, rng, p.dtype);
  auto dout = random_values(size_t(p.B) * p.Hq * p.Sq * p.Dv, rng, p.dtype);
  // The padding past each sequence's lengths holds NaN: nothing there may reach a result (keys past
  // kv_len are never attended to, a 0 * NaN in P V would still be NaN).
  const auto pad_with_nan = [&](std::vector<double>& x, int H, int S, int D, const std::vector<int32_t>& len) {
    for (int b = 0; b < p.B; ++b)
      for (int h = 0; h < H; ++h)
        for (int s = std::max(len[b], 0); s < S; ++s)
          for (int d = 0; d < D; ++d) x[((size_t(b) * H + h) * S + s) * D + d] = std::nan("");
  };
  pad_with_nan(q, p.Hq, p.Sq, p.D, lens.q);
  pad_with_nan(k, p.Hkv, p.Skv, p.D, lens.kv);
  pad_with_nan(v, p.Hkv, p.Skv, p.Dv, lens.kv);
  pad_with_nan(dout, p.Hq, p.Sq, p.Dv, lens.q);
  auto q_ = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.D, p.dtype, p.bshd);
  auto k_ = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.D, p.dtype, p.bshd);
  auto v_ = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.Dv, p.dtype, p.bshd);
  auto out_ = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.Dv, p.dtype, p.bshd);
  auto dout_ = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.Dv, p.dtype, p.bshd);
  q_.upload(q);
  k_.upload(k);
  v_.upload(v);
  dout_.upload(dout);
  poison_with_nan(out_.buffer, p.dtype);
  DeviceBuffer lse = DeviceBuffer::allocate(size_t(p.B) * p.Hq * p.Sq * 4);
  poison_with_nan(lse, DType::f32);
  const TensorView lse_view = TensorView::contiguous(lse.data(), DType::f32, {p.B, p.Hq, p.Sq});
  DeviceBuffer q_lens = DeviceBuffer::allocate(size_t(p.B) * 4), kv_lens = DeviceBuffer::allocate(size_t(p.B) * 4);
  q_lens.upload(lens.q.data(), lens.q.size() * 4);
  kv_lens.upload(lens.kv.data(), lens.kv.size() * 4);

  std::vector<DeviceBuffer> buffer_storage;
  CallOptions options;
  options.backward_mode = p.backward_mode;
  options.values = upload_buffers(p.buffers, buffer_storage, p.params);
  options.scale = p.scale;
  options.seq_lens.q_lens = TensorView::contiguous(q_lens.data(), DType::i32, {p.B});
  options.seq_lens.kv_lens = TensorView::contiguous(kv_lens.data(), DType::i32, {p.B});
  if (host_copies) {
    options.seq_lens.host_q_lens = lens.q.data();
    options.seq_lens.host_kv_lens = lens.kv.data();
  }
  std::optional<BlockMask> mask;
  if (tables == Tables::padded) mask = attention.block_mask(p.B, p.Hq, p.Sq, p.Skv, nullptr, options.values);
  if (tables == Tables::with_lengths)
    mask = attention.block_mask(p.B, p.Hq, p.Sq, p.Skv, options.seq_lens, nullptr, options.values);
  attention.forward(q_.view, k_.view, v_.view, out_.view, lse_view, mask ? &*mask : nullptr, nullptr, options);
  synchronize();
  check_buffer_errors();
  const std::vector<double> out = out_.download();
  const std::vector<double> lse_values = from_bytes(lse.to_host<unsigned char>(), DType::f32);

  std::vector<std::vector<unsigned char>> host_storage;
  const EvalInputs inputs = host_inputs(p.buffers, p.params, host_storage);
  const ReferenceShape shape{p.B, p.Hq, p.Hkv, p.Sq, p.Skv, p.D, p.Dv};
  const double scale = p.scale ? *p.scale : 1.0 / std::sqrt(double(p.D));
  const ReferenceForward ref =
      reference_forward_varlen(attention.score_mod(), attention.mask_mod(), inputs, shape, q, k, v, lens.q, lens.kv, scale);
  const double tol = tolerance(p.dtype);
  EXPECT_LT(flexjit::relative_error(rows_inside(out, p.B, p.Hq, p.Sq, p.Dv, lens.q), rows_inside(ref.out, p.B, p.Hq, p.Sq, p.Dv, lens.q)),
            tol) << where << ": out";
  EXPECT_LT(flexjit::relative_error(rows_inside(lse_values, p.B, p.Hq, p.Sq, 1, lens.q), rows_inside(ref.lse, p.B, p.Hq, p.Sq, 1, lens.q)),
            tol) << where << ": lse";
  const RowError out_row = worst_row_error(rows_inside(out, p.B, p.Hq, p.Sq, p.Dv, lens.q),
                                           rows_inside(ref.out, p.B, p.Hq, p.Sq, p.Dv, lens.q), p.Dv);
  EXPECT_LT(out_row.error, kRowTolerance * tol) << where << ": out, worst row inside the lengths " << out_row;
  // Rows past a sequence's queries are not written: still the NaN they were poisoned with.
  auto is_nan = [](double x) { return std::isnan(x); };
  EXPECT_EQ(count_if_not(rows_inside(out, p.B, p.Hq, p.Sq, p.Dv, lens.q, false), +is_nan), 0) << where << ": out past q_len";
  EXPECT_EQ(count_if_not(rows_inside(lse_values, p.B, p.Hq, p.Sq, 1, lens.q, false), +is_nan), 0)
      << where << ": lse past q_len";
  // A sequence without keys: out exactly 0 and lse -inf on its rows, no NaN.
  for (int b = 0; b < p.B; ++b) {
    if (lens.kv[b] != 0) continue;
    for (int h = 0; h < p.Hq; ++h)
      for (int i = 0; i < lens.q[b]; ++i) {
        const size_t row = (size_t(b) * p.Hq + h) * p.Sq + i;
        EXPECT_EQ(lse_values[row], -INFINITY) << where << ": lse of empty sequence " << b;
        for (int d = 0; d < p.Dv; ++d) ASSERT_EQ(out[row * p.Dv + d], 0.0) << where << ": out of empty sequence " << b;
      }
  }
  if (!backward) return;

  auto gq = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.D, p.dtype, p.bshd);
  auto gk = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.D, p.dtype, p.bshd);
  auto gv = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.Dv, p.dtype, p.bshd);
  std::vector<unsigned char> first[3];
  for (int run = 0; run < (repeat ? 2 : 1); ++run) {
    poison_with_nan(gq.buffer, p.dtype);
    poison_with_nan(gk.buffer, p.dtype);
    poison_with_nan(gv.buffer, p.dtype);
    // out and lse rows past q_len hold NaN: the backward must not use them.
    attention.backward(q_.view, k_.view, v_.view, out_.view, lse_view, dout_.view, gq.view, gk.view, gv.view,
                       mask ? &*mask : nullptr, nullptr, options);
    synchronize();
    check_buffer_errors();
    // The fast mode sums dQ with atomic adds: only dK and dV keep their bits there.
    bool fast = false;
    for (const KernelChoice& c : attention.last_choices()) {
      fast = fast || (c.family == "bwd_dkdv" && c.backward_mode == "fast");
      if (c.family == "bwd_dkdv" && backward_mode_reason != nullptr) *backward_mode_reason = c.backward_mode_reason;
    }
    DeviceOperand* grads[3] = {&gq, &gk, &gv};
    for (int i = fast ? 1 : 0; i < 3; ++i) {
      std::vector<unsigned char> bits(grads[i]->buffer.bytes());
      grads[i]->buffer.download(bits.data(), bits.size());
      if (run == 0)
        first[i] = std::move(bits);
      else
        EXPECT_TRUE(bits == first[i]) << where << ": gradient " << "qkv"[i] << " differs on a second run";
    }
  }
  const ReferenceBackward g = reference_backward_varlen(attention.score_mod(), attention.mask_mod(), inputs, shape, q,
                                                        k, v, dout, lens.q, lens.kv, scale);
  const std::vector<double> dq = gq.download(), dk = gk.download(), dv = gv.download();
  EXPECT_LT(flexjit::relative_error(dq, g.dq), tol) << where << ": dq";
  EXPECT_LT(flexjit::relative_error(dk, g.dk), tol) << where << ": dk";
  EXPECT_LT(flexjit::relative_error(dv, g.dv), tol) << where << ": dv";
  const RowError dq_row = worst_row_error(dq, g.dq, p.D), dk_row = worst_row_error(dk, g.dk, p.D),
                 dv_row = worst_row_error(dv, g.dv, p.Dv);
  EXPECT_LT(dq_row.error, kScoreGradientRowTolerance * tol) << where << ": dq, worst row " << dq_row;
  EXPECT_LT(dk_row.error, kScoreGradientRowTolerance * tol) << where << ": dk, worst row " << dk_row;
  EXPECT_LT(dv_row.error, kRowTolerance * tol) << where << ": dv, worst row " << dv_row;
  auto is_zero = [](double x) { return x == 0.0; };
  EXPECT_EQ(count_if_not(rows_inside(dq, p.B, p.Hq, p.Sq, p.D, lens.q, false), +is_zero), 0) << where << ": dq past q_len";
  EXPECT_EQ(count_if_not(rows_inside(dk, p.B, p.Hkv, p.Skv, p.D, lens.kv, false), +is_zero), 0) << where << ": dk past kv_len";
  EXPECT_EQ(count_if_not(rows_inside(dv, p.B, p.Hkv, p.Skv, p.Dv, lens.kv, false), +is_zero), 0) << where << ": dv past kv_len";
}

}  // namespace flexjit::test
