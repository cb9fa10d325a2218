#pragma once
// Packs call-time parameter and buffer values into the bytes of the kernel argument
// `FlexjitModArgs`, following the layout the expression compiler emitted for the declarations.
#include <set>
#include <string>
#include <vector>

#include "flexjit/expr.hpp"
#include "flexjit/mod_values.hpp"

namespace flexjit::codegen {

// Throws UsageError for a missing or unknown name, a non-integral value for an int parameter,
// and ShapeError for a buffer whose dtype, rank or fixed extents differ from its declaration.
// `what` names the caller in messages (e.g. "forward"). Only the names in `required` (what the
// kernel's expressions read) must have values; other declared fields are zero-filled.
std::vector<unsigned char> pack_mod_args(const Declarations& declarations, const ModValues& values,
                                         const std::set<std::string>& required,
                                         const std::string& what);

// Whether the kernel's buffer reads may index in 32 bits (KernelSpec::buffer_offsets_32): at least
// one buffer in `read` is given, and every one given is non-empty with extents and strides that
// keep all its in-bounds element offsets within 0 .. 2^31 - 1 (no negative stride, extents below
// 2^31). Buffers not read do not count.
bool buffer_offsets_fit_32_bits(const ModValues& values, const std::set<std::string>& read);

// Whether a kernel takes the 32-bit reads when its call's buffers fit them: every kernel but the
// backward's dK/dV kernel that also sums dQ (`dq_accumulate`, both backward modes), where the
// documents mask measured 0.97x with them (H100, notes/perf.md "(t)", t8).
bool kernel_takes_32_bit_reads(bool dkdv_sums_dq);

// The parameter and buffer names `exprs` read.
std::set<std::string> names_read(std::initializer_list<const Expr*> exprs);

// Whether `exprs` read at least one of the buffers `declarations` declares (as opposed to params).
bool reads_buffers(const Declarations& declarations, std::initializer_list<const Expr*> exprs);

}  // namespace flexjit::codegen
