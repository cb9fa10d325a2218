#pragma once
// Checks of the per-sequence lengths the float64 reference takes (reference_*_varlen).
#include <cstdint>
#include <vector>

#include "flexjit/reference.hpp"

namespace flexjit::attention {

// B lengths each, q_lens[b] in [0, Sq] and kv_lens[b] in [0, Skv]; throws UsageError naming the
// sequence and the bound otherwise.
void check_reference_lengths(const ReferenceShape& s, const std::vector<int32_t>& q_lens,
                             const std::vector<int32_t>& kv_lens);

}  // namespace flexjit::attention
