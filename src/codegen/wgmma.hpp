#pragma once
// Generated device wrappers for Hopper's warpgroup MMA (wgmma.mma_async, sm_90a). One wgmma of
// shape m64nNk16 names N/2 accumulator registers in its asm operand list, so the wrappers are
// written out per (N, operand source, transpose) by C++ rather than by hand or by the template
// engine (whose tag syntax collides with PTX operand braces).
#include <string>
#include <vector>

#include "flexjit/dtype.hpp"

namespace flexjit::codegen {

struct WgmmaShape {
  int n = 0;                     // N of m64nNk16 (multiple of 8, at most 256)
  bool a_in_registers = false;   // A from registers (the P / dS fragments) or shared memory
  bool transpose_b = false;      // B stored N-major (N contiguous) instead of K-major
  bool transpose_a = false;      // A in shared memory stored M-major (M contiguous): WgmmaSSTa
  bool operator==(const WgmmaShape& o) const {
    return n == o.n && a_in_registers == o.a_in_registers && transpose_b == o.transpose_b &&
           transpose_a == o.transpose_a;
  }
};

// `flexjit_wgmma.cuh`: the wrapper structs WgmmaSS<N, TRANS_B> (A and B in shared memory),
// WgmmaSSTa<N, TRANS_B> (the same with A stored M-major) and WgmmaRS<N, TRANS_B> (A in registers)
// for the shapes listed. It includes the static part
// (descriptors, fences, waits), templates/flexjit_wgmma_ops.cuh.
std::string wgmma_header(DType dtype, const std::vector<WgmmaShape>& shapes);

}  // namespace flexjit::codegen
