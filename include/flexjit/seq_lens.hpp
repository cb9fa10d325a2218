#pragma once
/// \file
/// SeqLens: per-sequence lengths of a forward or backward call over padded tensors (a batch of
/// sequences of different lengths stored as [B, H, Sq, D] / [B, H, Skv, D], each sequence at the
/// start of its rows). Decoding takes its lengths from KVCache instead.

#include <cstdint>

#include "flexjit/tensor.hpp"

namespace flexjit {

/// The lengths of each sequence of a padded batch, for Attention::forward and ::backward (through
/// CallOptions::seq_lens). With them, sequence b has q_lens[b] query rows and kv_lens[b] keys:
/// - `q_len` and `kv_len` in score_mod / mask_mod are that sequence's lengths, so
///   `q_idx + kv_len - q_len >= kv_idx` is causal for every sequence;
/// - keys at or past kv_lens[b] are never attended to, and nothing in the padding past the lengths
///   (NaN included) reaches a result (the warp-specialised forward reads it with its TMA tiles and
///   discards it);
/// - forward: query rows at or past q_lens[b] are not written (out and lse keep whatever they
///   held); a row with no keys (kv_lens[b] = 0) gets out = 0 and lse = -inf;
/// - backward: dq rows at or past q_lens[b] and dk / dv rows at or past kv_lens[b] are zero;
///   out, lse and dout rows past q_lens[b] are never used (any values, NaN included).
/// Lengths of 0 are allowed. AttentionSpec::rows_guaranteed_safe is not used in such calls (an
/// empty sequence has rows with nothing to attend to). Block masks: tables built with the same
/// arrays (Attention::block_mask with seq_lens) skip the blocks past each sequence's ends; tables
/// of the padded lengths are accepted only when mask_mod reads neither `q_len` nor `kv_len`
/// (otherwise a named error); without tables mask_mod is evaluated on every tile with each
/// sequence's lengths. Not combined with learnable buffers.
struct SeqLens {
  /// [B] int32 on the device: query rows of each sequence, 0 to Sq. data == nullptr: all Sq.
  TensorView q_lens;
  /// [B] int32 on the device: keys of each sequence, 0 to Skv. data == nullptr: all Skv.
  TensorView kv_lens;
  /// Optional host copy of q_lens (B values, equal to the device array): checked on the host with
  /// a named error. Without it, a device length outside [0, Sq] is clamped into that range (nothing
  /// outside the tensors is read) and reported by check_buffer_errors().
  const int32_t* host_q_lens = nullptr;
  /// Optional host copy of kv_lens, checked the same way against [0, Skv].
  const int32_t* host_kv_lens = nullptr;

  /// True when neither device array is given (every sequence has the padded lengths).
  bool empty() const noexcept { return q_lens.data == nullptr && kv_lens.data == nullptr; }
};

}  // namespace flexjit
