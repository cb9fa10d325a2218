#pragma once
// Device code for the learnable-buffer reads of a score_mod: per read, d(score_mod)/d(read) and the
// row-major offset of the element it indexes, wrapped in `FlexjitBgRead<r>` traits that
// templates/flexjit_buffer_grad.cuh and buffer_grad_reduce.cu.j2 use.
#include <string>
#include <vector>

#include "flexjit/expr.hpp"

namespace flexjit::expr {

/// Accumulation schemes, as the device header numbers them (kBufferGrad* in flexjit_buffer_grad.cuh).
enum class BufferGradScheme { per_head = 0, diagonal = 1, per_score = 2, arbitrary = 3 };

/// The code for `reads` (from score_mod.buffer_gradients(), in that order) with one scheme each:
/// `FLEXJIT_BG_READS`, `FLEXJIT_BG_STAGED` (some read stages tiles in shared memory),
/// `FLEXJIT_BG_OFFSETS` (some read is arbitrary: offsets are staged too),
/// `FLEXJIT_BG_READS_SCORE` (some derivative reads `score`), the traits, and
/// `flexjit_bg_offset(read, ...)` dispatching on a run-time read number.
std::string emit_buffer_grad_reads(const std::vector<BufferReadGradient>& reads,
                                   const std::vector<BufferGradScheme>& schemes);

}  // namespace flexjit::expr
