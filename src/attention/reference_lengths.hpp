#pragma once
// Checks of the arguments the float64 reference takes: per-sequence lengths (reference_*_varlen)
// and the scale.
#include <cstdint>
#include <vector>

#include "flexjit/reference.hpp"

namespace flexjit::attention {

// B lengths each, q_lens[b] in [0, Sq] and kv_lens[b] in [0, Skv]; throws UsageError naming the
// sequence and the bound otherwise.
void check_reference_lengths(const ReferenceShape& s, const std::vector<int32_t>& q_lens,
                             const std::vector<int32_t>& kv_lens);

// The scale the reference multiplies q.k by: finite and non-zero (negative is allowed), as the
// GPU calls require; throws UsageError naming the value otherwise.
void check_reference_scale(double scale);

}  // namespace flexjit::attention
