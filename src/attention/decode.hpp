#pragma once
// Split-KV decoding on the GPU: checks, kernel choice, split choice and the two launches behind
// Attention::decode.
#include <string>

#include "flexjit/attention.hpp"
#include "flexjit/paged_kv.hpp"

namespace flexjit::attention {

// What Attention::decode knows about its variant.
struct DecodeVariant {
  const AttentionSpec& spec;
  const Expr& score;
  const Expr& mask;
  const std::string& arch;
};

// Runs decode and returns the choice it made (for Attention::last_choices).
KernelChoice run_decode(const DecodeVariant& variant, const TensorView& q, const KVCache& kv, const TensorView& out,
                        const TensorView& lse, Stream stream, const CallOptions& options);

}  // namespace flexjit::attention
