#pragma once
/// \file
/// Float64 CPU reference attention with the same score_mod / mask_mod semantics as the kernels.
/// Slow and exact: for tests, `flexjit run --check`, and verifying a new variant.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "flexjit/expr.hpp"

namespace flexjit {

/// Problem sizes of a reference computation. Tensors are contiguous, row-major:
/// q [batch][q_heads][q_len][head_dim], k [batch][kv_heads][kv_len][head_dim],
/// v [batch][kv_heads][kv_len][head_dim_v], out [batch][q_heads][q_len][head_dim_v],
/// lse [batch][q_heads][q_len].
struct ReferenceShape {
  int batch = 1;       ///< B
  int q_heads = 1;     ///< Hq
  int kv_heads = 1;    ///< Hkv (divides Hq; query head h reads kv head h / (Hq / Hkv))
  int q_len = 1;       ///< Sq
  int kv_len = 1;      ///< Skv
  int head_dim = 64;   ///< D of Q and K
  int head_dim_v = 64; ///< D of V and the output
};

/// Output of the reference forward.
struct ReferenceForward {
  std::vector<double> out;  ///< [B][Hq][Sq][Dv]; 0 for fully masked rows
  std::vector<double> lse;  ///< [B][Hq][Sq], natural log; -inf for fully masked rows
};

/// O = softmax(mask(score_mod(scale * q k^T))) v in float64, evaluated with the expression
/// interpreter. Uses all hardware threads. Throws UsageError for inconsistent sizes.
ReferenceForward reference_forward(const Expr& score_mod, const Expr& mask_mod,
                                   const EvalInputs& inputs, const ReferenceShape& shape,
                                   const std::vector<double>& q, const std::vector<double>& k,
                                   const std::vector<double>& v, double scale);

/// reference_forward with each sequence's own number of keys (ragged batches, decoding): sequence b
/// attends to keys [0, kv_lens[b]) of its rows of k and v (shape.kv_len is their storage length S,
/// at least every kv_lens[b]), and `kv_len` in the expressions is kv_lens[b]. A length of 0 gives
/// out = 0 and lse = -inf. Throws UsageError for a length outside [0, S] or inconsistent sizes.
ReferenceForward reference_forward_ragged(const Expr& score_mod, const Expr& mask_mod, const EvalInputs& inputs,
                                          const ReferenceShape& shape, const std::vector<double>& q,
                                          const std::vector<double>& k, const std::vector<double>& v,
                                          const std::vector<int32_t>& kv_lens, double scale);

/// reference_forward with each sequence's own query rows and keys (padded batches, CallOptions::
/// seq_lens): sequence b has rows [0, q_lens[b]) and keys [0, kv_lens[b]) of its padded rows, and
/// `q_len` / `kv_len` in the expressions are q_lens[b] / kv_lens[b]. Rows at or past q_lens[b], and
/// rows with no keys, get out = 0 and lse = -inf. Throws UsageError for B lengths not given or a
/// length outside [0, Sq] / [0, Skv].
ReferenceForward reference_forward_varlen(const Expr& score_mod, const Expr& mask_mod, const EvalInputs& inputs,
                                          const ReferenceShape& shape, const std::vector<double>& q,
                                          const std::vector<double>& k, const std::vector<double>& v,
                                          const std::vector<int32_t>& q_lens, const std::vector<int32_t>& kv_lens,
                                          double scale);

/// Gradients from the reference backward, in the layouts of q, k and v.
struct ReferenceBackward {
  std::vector<double> dq;  ///< [B][Hq][Sq][D]
  std::vector<double> dk;  ///< [B][Hkv][Skv][D] (summed over the query heads sharing a kv head)
  std::vector<double> dv;  ///< [B][Hkv][Skv][Dv]
};

/// Gradients of sum(out * dout) with respect to q, k and v in float64, with score_mod's derivative
/// taken from Expr::gradient(). Fully masked rows contribute nothing. `dout` is [B][Hq][Sq][Dv].
ReferenceBackward reference_backward(const Expr& score_mod, const Expr& mask_mod, const EvalInputs& inputs,
                                     const ReferenceShape& shape, const std::vector<double>& q,
                                     const std::vector<double>& k, const std::vector<double>& v,
                                     const std::vector<double>& dout, double scale);

/// reference_backward with each sequence's own query rows and keys (as reference_forward_varlen):
/// dq rows at or past q_lens[b] and dk / dv rows at or past kv_lens[b] are zero, and dout there is
/// not read. Throws UsageError as reference_forward_varlen.
ReferenceBackward reference_backward_varlen(const Expr& score_mod, const Expr& mask_mod, const EvalInputs& inputs,
                                            const ReferenceShape& shape, const std::vector<double>& q,
                                            const std::vector<double>& k, const std::vector<double>& v,
                                            const std::vector<double>& dout, const std::vector<int32_t>& q_lens,
                                            const std::vector<int32_t>& kv_lens, double scale);

/// d(loss)/d(buffer), loss = sum(out * dout), for every learnable buffer that score_mod reads (by
/// name; row-major in the buffer's shape as given in `inputs`), in float64. Uses
/// Expr::buffer_gradients(): each score adds d(loss)/d(score_mod) * d(score_mod)/d(read) to the
/// element each read indexes; masked scores and fully masked rows add nothing. Throws UsageError
/// when a read with a nonzero derivative indexes outside its buffer.
std::map<std::string, std::vector<double>> reference_buffer_gradients(
    const Expr& score_mod, const Expr& mask_mod, const EvalInputs& inputs, const ReferenceShape& shape,
    const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
    const std::vector<double>& dout, double scale);

/// ‖out − ref‖₂ / ‖ref‖₂ over the finite entries; a NaN, or an infinity the reference does not have
/// at the same place, gives +infinity (a zero reference gives
/// ‖out‖₂). The error measure every GPU test and `flexjit run --check` reports.
double relative_error(const std::vector<double>& out, const std::vector<double>& ref);

}  // namespace flexjit
