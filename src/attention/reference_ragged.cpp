// The float64 reference with per-sequence key counts (decoding, ragged batches).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "attention/reference_lengths.hpp"
#include "common/parallel.hpp"
#include "flexjit/error.hpp"
#include "flexjit/reference.hpp"

namespace flexjit {

namespace attention {

void check_reference_scale(double scale) {
  if (std::isnan(scale) || std::isinf(scale) || scale == 0)
    throw UsageError("reference attention: scale must be a finite non-zero number (negative is allowed), got " +
                     std::string(std::isnan(scale) ? "nan" : std::isinf(scale) ? (scale > 0 ? "inf" : "-inf") : "0"));
}

void check_reference_lengths(const ReferenceShape& s, const std::vector<int32_t>& q_lens,
                             const std::vector<int32_t>& kv_lens) {
  for (auto [lens, what, bound] : {std::tuple<const std::vector<int32_t>*, const char*, int>{&q_lens, "q", s.q_len},
                                   {&kv_lens, "kv", s.kv_len}}) {
    if (lens->size() != size_t(s.batch))
      throw UsageError("reference attention: " + std::to_string(lens->size()) + " " + what +
                       " lengths for a batch of " + std::to_string(s.batch));
    for (int b = 0; b < s.batch; ++b)
      if ((*lens)[b] < 0 || (*lens)[b] > bound)
        throw UsageError("reference attention: " + std::string(what) + " length " + std::to_string((*lens)[b]) +
                         " of sequence " + std::to_string(b) + " is outside [0, " + std::to_string(bound) + "]");
  }
}

}  // namespace attention

ReferenceForward reference_forward_ragged(const Expr& score_mod, const Expr& mask_mod, const EvalInputs& inputs,
                                          const ReferenceShape& s, const std::vector<double>& q,
                                          const std::vector<double>& k, const std::vector<double>& v,
                                          const std::vector<int32_t>& kv_lens, double scale) {
  return reference_forward_varlen(score_mod, mask_mod, inputs, s, q, k, v,
                                  std::vector<int32_t>(size_t(std::max(s.batch, 0)), s.q_len), kv_lens, scale);
}

ReferenceForward reference_forward_varlen(const Expr& score_mod, const Expr& mask_mod, const EvalInputs& inputs,
                                          const ReferenceShape& s, const std::vector<double>& q,
                                          const std::vector<double>& k, const std::vector<double>& v,
                                          const std::vector<int32_t>& q_lens, const std::vector<int32_t>& kv_lens,
                                          double scale) {
  if (s.batch < 1 || s.q_heads < 1 || s.kv_heads < 1 || s.q_len < 1 || s.kv_len < 1 || s.head_dim < 1 ||
      s.head_dim_v < 1 || s.q_heads % s.kv_heads != 0)
    throw UsageError("reference attention: every size must be at least 1 and q_heads a multiple of kv_heads");
  if (q.size() != size_t(s.batch) * s.q_heads * s.q_len * s.head_dim ||
      k.size() != size_t(s.batch) * s.kv_heads * s.kv_len * s.head_dim ||
      v.size() != size_t(s.batch) * s.kv_heads * s.kv_len * s.head_dim_v)
    throw UsageError("reference attention: q/k/v sizes do not match the shape");
  attention::check_reference_lengths(s, q_lens, kv_lens);
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
    const int b = static_cast<int>(task) / s.q_heads, h = static_cast<int>(task) % s.q_heads, kvh = h / group;
    const int len = kv_lens[b];
    const double* kb = k.data() + (size_t(b) * s.kv_heads + kvh) * s.kv_len * s.head_dim;
    const double* vb = v.data() + (size_t(b) * s.kv_heads + kvh) * s.kv_len * s.head_dim_v;
    std::vector<double> scores(std::max(len, 1));
    EvalPoint point;
    point.b = b;
    point.h = h;
    point.q_len = q_lens[b];
    point.kv_len = len;
    for (int i = 0; i < q_lens[b]; ++i) {  // rows past the sequence's queries: out 0, lse -inf
      const double* qi = q.data() + ((size_t(b) * s.q_heads + h) * s.q_len + i) * s.head_dim;
      point.q_idx = i;
      double m = neg_inf;
      for (int j = 0; j < len; ++j) {
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
        m = std::max(m, score);
      }
      const size_t row = (size_t(b) * s.q_heads + h) * s.q_len + i;
      if (m == neg_inf) continue;
      double sum = 0;
      for (int j = 0; j < len; ++j) {
        scores[j] = scores[j] == neg_inf ? 0.0 : std::exp(scores[j] - m);
        sum += scores[j];
      }
      double* out = result.out.data() + row * s.head_dim_v;
      for (int j = 0; j < len; ++j) {
        if (scores[j] == 0.0) continue;
        const double p = scores[j] / sum;
        for (int d = 0; d < s.head_dim_v; ++d) out[d] += p * vb[size_t(j) * s.head_dim_v + d];
      }
      result.lse[row] = m + std::log(sum);
    }
  });
  return result;
}

}  // namespace flexjit
