#pragma once
// Split-KV decoding on the GPU: checks, kernel choice, split choice and the two launches behind
// Attention::decode.
#include <functional>
#include <string>

#include "flexjit/attention.hpp"
#include "flexjit/paged_kv.hpp"

namespace flexjit::attention {

// What Attention::decode knows about its variant. The target architecture is asked for only
// after every argument is checked (it may query the driver), so bad arguments are named errors
// with or without a GPU.
struct DecodeVariant {
  const AttentionSpec& spec;
  const Expr& score;
  const Expr& mask;
  float score_prescale;  // score.score_prescale(), computed once per Attention
  std::function<std::string()> arch;
};

// Runs decode and returns the choice it made (for Attention::last_choices).
KernelChoice run_decode(const DecodeVariant& variant, const TensorView& q, const KVCache& kv, const TensorView& out,
                        const TensorView& lse, Stream stream, const CallOptions& options);

}  // namespace flexjit::attention
