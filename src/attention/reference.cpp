#include "flexjit/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/reference_lengths.hpp"
#include "common/parallel.hpp"
#include "flexjit/error.hpp"

namespace flexjit {

namespace {

void check_sizes(const ReferenceShape& s, size_t q, size_t k, size_t v) {
  if (s.batch < 1 || s.q_heads < 1 || s.kv_heads < 1 || s.q_len < 1 || s.kv_len < 1 ||
      s.head_dim < 1 || s.head_dim_v < 1)
    throw UsageError("reference attention: every size must be at least 1");
  if (s.q_heads % s.kv_heads != 0)
    throw UsageError("reference attention: q_heads (" + std::to_string(s.q_heads) +
                     ") must be a multiple of kv_heads (" + std::to_string(s.kv_heads) + ")");
  const size_t want_q = size_t(s.batch) * s.q_heads * s.q_len * s.head_dim;
  const size_t want_k = size_t(s.batch) * s.kv_heads * s.kv_len * s.head_dim;
  const size_t want_v = size_t(s.batch) * s.kv_heads * s.kv_len * s.head_dim_v;
  if (q != want_q || k != want_k || v != want_v)
    throw UsageError("reference attention: q/k/v hold " + std::to_string(q) + "/" +
                     std::to_string(k) + "/" + std::to_string(v) + " values; the shape needs " +
                     std::to_string(want_q) + "/" + std::to_string(want_k) + "/" +
                     std::to_string(want_v));
}

// The running row maximum, with NaN sticky: std::max(-inf, NaN) is -inf, which turned a row of
// NaN scores into a "fully masked" row (O = 0, LSE = -inf) instead of NaN.
double nan_max(double m, double score) {
  if (std::isnan(m) || std::isnan(score)) return std::numeric_limits<double>::quiet_NaN();
  return std::max(m, score);
}

}  // namespace

ReferenceForward reference_forward(const Expr& score_mod, const Expr& mask_mod,
                                   const EvalInputs& inputs, const ReferenceShape& s,
                                   const std::vector<double>& q, const std::vector<double>& k,
                                   const std::vector<double>& v, double scale) {
  check_sizes(s, q.size(), k.size(), v.size());
  attention::check_reference_scale(scale);
  const bool identity = score_mod.is_identity();
  const bool unmasked = mask_mod.is_always_true();
  const expr::BoundEvaluator score_eval = score_mod.bind(inputs);
  const expr::BoundEvaluator mask_eval = mask_mod.bind(inputs);
  const int group = s.q_heads / s.kv_heads;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  ReferenceForward result;
  result.out.assign(size_t(s.batch) * s.q_heads * s.q_len * s.head_dim_v, 0.0);
  result.lse.assign(size_t(s.batch) * s.q_heads * s.q_len, neg_inf);
  parallel_for(size_t(s.batch) * s.q_heads, 0, [&](size_t task) {
    const int bh = static_cast<int>(task);
    const int b = bh / s.q_heads, h = bh % s.q_heads, kvh = h / group;
    const double* kb = k.data() + (size_t(b) * s.kv_heads + kvh) * s.kv_len * s.head_dim;
    const double* vb = v.data() + (size_t(b) * s.kv_heads + kvh) * s.kv_len * s.head_dim_v;
    std::vector<double> scores(s.kv_len);
    EvalPoint point;
    point.b = b;
    point.h = h;
    point.q_len = s.q_len;
    point.kv_len = s.kv_len;
    for (int i = 0; i < s.q_len; ++i) {
      const double* qi = q.data() + ((size_t(b) * s.q_heads + h) * s.q_len + i) * s.head_dim;
      point.q_idx = i;
      double m = neg_inf;
      for (int j = 0; j < s.kv_len; ++j) {
        point.kv_idx = j;
        if (!unmasked && mask_eval(point) == 0.0) {
          scores[j] = neg_inf;
          continue;
        }
        double dot = 0;
        for (int d = 0; d < s.head_dim; ++d) dot += qi[d] * kb[size_t(j) * s.head_dim + d];
        double score = dot * scale;
        if (!identity) {
          point.score = score;
          score = score_eval(point);
        }
        scores[j] = score;
        m = nan_max(m, score);
      }
      const size_t row = (size_t(b) * s.q_heads + h) * s.q_len + i;
      if (m == neg_inf) continue;  // fully masked: O = 0, LSE = -inf (a NaN row is not: m is NaN)
      double sum = 0;
      for (int j = 0; j < s.kv_len; ++j) {
        scores[j] = scores[j] == neg_inf ? 0.0 : std::exp(scores[j] - m);
        sum += scores[j];
      }
      double* out = result.out.data() + row * s.head_dim_v;
      for (int j = 0; j < s.kv_len; ++j) {
        if (scores[j] == 0.0) continue;
        const double p = scores[j] / sum;
        for (int d = 0; d < s.head_dim_v; ++d) out[d] += p * vb[size_t(j) * s.head_dim_v + d];
      }
      result.lse[row] = m + std::log(sum);
    }
  });
  return result;
}

namespace {

// The reference backward; with `lengths`, sequence b has q_lens[b] query rows and kv_lens[b] keys
// (checked by the caller) and gets no gradient past them.
ReferenceBackward backward_with_lengths(const Expr& score_mod, const Expr& mask_mod, const EvalInputs& inputs,
                                        const ReferenceShape& s, const std::vector<double>& q,
                                        const std::vector<double>& k, const std::vector<double>& v,
                                        const std::vector<double>& dout, double scale, const int32_t* q_lens,
                                        const int32_t* kv_lens) {
  check_sizes(s, q.size(), k.size(), v.size());
  attention::check_reference_scale(scale);
  if (dout.size() != size_t(s.batch) * s.q_heads * s.q_len * s.head_dim_v)
    throw UsageError("reference backward: dout holds " + std::to_string(dout.size()) +
                     " values; [B][Hq][Sq][Dv] needs " +
                     std::to_string(size_t(s.batch) * s.q_heads * s.q_len * s.head_dim_v));
  const bool identity = score_mod.is_identity();
  const bool unmasked = mask_mod.is_always_true();
  const Expr gradient = score_mod.gradient();
  const expr::BoundEvaluator score_eval = score_mod.bind(inputs);
  const expr::BoundEvaluator grad_eval = gradient.bind(inputs);
  const expr::BoundEvaluator mask_eval = mask_mod.bind(inputs);
  const int group = s.q_heads / s.kv_heads;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  ReferenceBackward r;
  r.dq.assign(q.size(), 0.0);
  r.dk.assign(k.size(), 0.0);
  r.dv.assign(v.size(), 0.0);
  // One task per (b, kv head): it owns dk/dv of that head and dq of the query heads of its group.
  parallel_for(size_t(s.batch) * s.kv_heads, 0, [&](size_t task) {
    const int bkv = static_cast<int>(task);
    const int b = bkv / s.kv_heads, kvh = bkv % s.kv_heads;
    const size_t kv_off = (size_t(b) * s.kv_heads + kvh) * s.kv_len;
    const double* kb = k.data() + kv_off * s.head_dim;
    const double* vb = v.data() + kv_off * s.head_dim_v;
    double* dkb = r.dk.data() + kv_off * s.head_dim;
    double* dvb = r.dv.data() + kv_off * s.head_dim_v;
    std::vector<double> prob(s.kv_len), grad(s.kv_len), dp(s.kv_len);
    const int q_len = q_lens != nullptr ? q_lens[b] : s.q_len;
    const int kv_len = kv_lens != nullptr ? kv_lens[b] : s.kv_len;
    EvalPoint point;
    point.b = b;
    point.q_len = q_len;
    point.kv_len = kv_len;
    for (int h = kvh * group; h < (kvh + 1) * group; ++h) {
      point.h = h;
      for (int i = 0; i < q_len; ++i) {
        const size_t row = (size_t(b) * s.q_heads + h) * s.q_len + i;
        const double* qi = q.data() + row * s.head_dim;
        const double* doi = dout.data() + row * s.head_dim_v;
        point.q_idx = i;
        double m = neg_inf;
        for (int j = 0; j < kv_len; ++j) {
          point.kv_idx = j;
          grad[j] = 1.0;
          if (!unmasked && mask_eval(point) == 0.0) {
            prob[j] = neg_inf;
            continue;
          }
          double dot = 0;
          for (int d = 0; d < s.head_dim; ++d) dot += qi[d] * kb[size_t(j) * s.head_dim + d];
          double score = dot * scale;
          if (!identity) {
            point.score = score;
            grad[j] = grad_eval(point);
            score = score_eval(point);
          }
          prob[j] = score;
          m = nan_max(m, score);
        }
        if (m == neg_inf) continue;  // fully masked row: no gradient
        double sum = 0;
        for (int j = 0; j < kv_len; ++j) sum += prob[j] == neg_inf ? 0.0 : std::exp(prob[j] - m);
        double delta = 0;
        for (int j = 0; j < kv_len; ++j) {
          prob[j] = prob[j] == neg_inf ? 0.0 : std::exp(prob[j] - m) / sum;
          double acc = 0;
          for (int d = 0; d < s.head_dim_v; ++d) acc += doi[d] * vb[size_t(j) * s.head_dim_v + d];
          dp[j] = acc;
          delta += prob[j] * acc;
        }
        double* dqi = r.dq.data() + row * s.head_dim;
        for (int j = 0; j < kv_len; ++j) {
          if (prob[j] == 0.0) continue;
          const double ds = prob[j] * (dp[j] - delta) * grad[j] * scale;
          for (int d = 0; d < s.head_dim; ++d) {
            dqi[d] += ds * kb[size_t(j) * s.head_dim + d];
            dkb[size_t(j) * s.head_dim + d] += ds * qi[d];
          }
          for (int d = 0; d < s.head_dim_v; ++d) dvb[size_t(j) * s.head_dim_v + d] += prob[j] * doi[d];
        }
      }
    }
  });
  return r;
}

}  // namespace

ReferenceBackward reference_backward(const Expr& score_mod, const Expr& mask_mod, const EvalInputs& inputs,
                                     const ReferenceShape& s, const std::vector<double>& q,
                                     const std::vector<double>& k, const std::vector<double>& v,
                                     const std::vector<double>& dout, double scale) {
  return backward_with_lengths(score_mod, mask_mod, inputs, s, q, k, v, dout, scale, nullptr, nullptr);
}

ReferenceBackward reference_backward_varlen(const Expr& score_mod, const Expr& mask_mod, const EvalInputs& inputs,
                                            const ReferenceShape& s, const std::vector<double>& q,
                                            const std::vector<double>& k, const std::vector<double>& v,
                                            const std::vector<double>& dout, const std::vector<int32_t>& q_lens,
                                            const std::vector<int32_t>& kv_lens, double scale) {
  attention::check_reference_lengths(s, q_lens, kv_lens);
  return backward_with_lengths(score_mod, mask_mod, inputs, s, q, k, v, dout, scale, q_lens.data(), kv_lens.data());
}

namespace {

// One read of a learnable buffer, bound for evaluation.
struct BoundRead {
  std::vector<double>* gradient;  // the per-task gradient of the buffer read
  std::vector<int64_t> shape;
  expr::BoundEvaluator derivative;
  std::vector<expr::BoundEvaluator> indices;
  std::string text;
};

// Row-major offset of the element a read indexes at `point`, or throws like an out-of-bounds read.
size_t element_offset(const BoundRead& read, const EvalPoint& point) {
  size_t offset = 0;
  for (size_t d = 0; d < read.indices.size(); ++d) {
    const double index = read.indices[d](point);
    if (index < 0 || index >= double(read.shape[d]))
      throw UsageError("reference buffer gradient: read " + read.text + " indexes " + std::to_string(int64_t(index)) +
                       " in dimension " + std::to_string(d + 1) + " (extent " + std::to_string(read.shape[d]) +
                       ") at b=" + std::to_string(point.b) + " h=" + std::to_string(point.h) +
                       " q_idx=" + std::to_string(point.q_idx) + " kv_idx=" + std::to_string(point.kv_idx));
    offset = offset * size_t(read.shape[d]) + size_t(index);
  }
  return offset;
}

}  // namespace

std::map<std::string, std::vector<double>> reference_buffer_gradients(
    const Expr& score_mod, const Expr& mask_mod, const EvalInputs& inputs, const ReferenceShape& s,
    const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
    const std::vector<double>& dout, double scale) {
  check_sizes(s, q.size(), k.size(), v.size());
  attention::check_reference_scale(scale);
  if (dout.size() != size_t(s.batch) * s.q_heads * s.q_len * s.head_dim_v)
    throw UsageError("reference buffer gradients: dout holds " + std::to_string(dout.size()) +
                     " values; [B][Hq][Sq][Dv] needs " +
                     std::to_string(size_t(s.batch) * s.q_heads * s.q_len * s.head_dim_v));
  check_learnable_buffers(score_mod, mask_mod);
  const std::vector<BufferReadGradient> reads = score_mod.buffer_gradients();
  std::map<std::string, std::vector<double>> result;
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& read : reads) {
    const auto it = inputs.buffers.find(read.buffer);
    if (it == inputs.buffers.end())
      throw UsageError("reference buffer gradients: no values given for buffer '" + read.buffer + "'");
    size_t elements = 1;
    for (int64_t extent : it->second.shape) elements *= size_t(extent);
    result[read.buffer].assign(elements, 0.0);
    shapes[read.buffer] = it->second.shape;
  }
  if (reads.empty()) return result;

  const expr::BoundEvaluator score_eval = score_mod.bind(inputs);
  const expr::BoundEvaluator mask_eval = mask_mod.bind(inputs);
  const bool unmasked = mask_mod.is_always_true();
  const int group = s.q_heads / s.kv_heads;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  // One task per (b, h), each with its own gradient arrays, summed in task order afterwards so the
  // result does not depend on the thread schedule.
  const size_t tasks = size_t(s.batch) * s.q_heads;
  std::vector<std::map<std::string, std::vector<double>>> partial(tasks);
  parallel_for(tasks, 0, [&](size_t task) {
    const int b = static_cast<int>(task) / s.q_heads, h = static_cast<int>(task) % s.q_heads, kvh = h / group;
    auto& mine = partial[task];
    std::vector<BoundRead> bound;
    for (const auto& read : reads) {
      auto& gradient = mine[read.buffer];
      if (gradient.empty()) gradient.assign(result[read.buffer].size(), 0.0);
      BoundRead r{&gradient, shapes[read.buffer], read.derivative.bind(inputs), {}, read.read};
      for (const auto& index : read.indices) r.indices.push_back(index.bind(inputs));
      bound.push_back(std::move(r));
    }
    const size_t kv_off = (size_t(b) * s.kv_heads + kvh) * s.kv_len;
    const double* kb = k.data() + kv_off * s.head_dim;
    const double* vb = v.data() + kv_off * s.head_dim_v;
    std::vector<double> score(s.kv_len), prob(s.kv_len), dp(s.kv_len);
    EvalPoint point;
    point.b = b;
    point.h = h;
    point.q_len = s.q_len;
    point.kv_len = s.kv_len;
    for (int i = 0; i < s.q_len; ++i) {
      const size_t row = (size_t(b) * s.q_heads + h) * s.q_len + i;
      const double* qi = q.data() + row * s.head_dim;
      const double* doi = dout.data() + row * s.head_dim_v;
      point.q_idx = i;
      double m = neg_inf;
      for (int j = 0; j < s.kv_len; ++j) {
        point.kv_idx = j;
        prob[j] = neg_inf;
        if (!unmasked && mask_eval(point) == 0.0) continue;
        double dot = 0;
        for (int d = 0; d < s.head_dim; ++d) dot += qi[d] * kb[size_t(j) * s.head_dim + d];
        score[j] = dot * scale;
        point.score = score[j];
        prob[j] = score_eval(point);
        m = std::max(m, prob[j]);
      }
      if (m == neg_inf) continue;  // fully masked row: no gradient
      double sum = 0;
      for (int j = 0; j < s.kv_len; ++j) sum += prob[j] == neg_inf ? 0.0 : std::exp(prob[j] - m);
      double delta = 0;
      for (int j = 0; j < s.kv_len; ++j) {
        prob[j] = prob[j] == neg_inf ? 0.0 : std::exp(prob[j] - m) / sum;
        double acc = 0;
        for (int d = 0; d < s.head_dim_v; ++d) acc += doi[d] * vb[size_t(j) * s.head_dim_v + d];
        dp[j] = acc;
        delta += prob[j] * acc;
      }
      for (int j = 0; j < s.kv_len; ++j) {
        if (prob[j] == 0.0) continue;
        const double ds = prob[j] * (dp[j] - delta);  // d(loss)/d(score_mod output)
        point.kv_idx = j;
        point.score = score[j];
        for (const BoundRead& read : bound) {
          const double partial_derivative = read.derivative(point);
          if (partial_derivative == 0.0) continue;
          (*read.gradient)[element_offset(read, point)] += ds * partial_derivative;
        }
      }
    }
  });
  for (auto& task : partial)
    for (auto& [name, gradient] : task) {
      auto& total = result[name];
      for (size_t e = 0; e < gradient.size(); ++e) total[e] += gradient[e];
    }
  return result;
}

double relative_error(const std::vector<double>& out, const std::vector<double>& ref) {
  if (out.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double diff = 0, norm = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      // Matching infinities (e.g. LSE of fully masked rows) and NaN where the reference has NaN
      // (NaN in, NaN out) are equal; anything else is a failure.
      if (out[i] == ref[i] || (std::isnan(out[i]) && std::isnan(ref[i]))) continue;
      return std::numeric_limits<double>::infinity();
    }
    if (!std::isfinite(ref[i])) return std::numeric_limits<double>::infinity();
    diff += (out[i] - ref[i]) * (out[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

}  // namespace flexjit
