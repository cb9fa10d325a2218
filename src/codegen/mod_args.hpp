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

// Whether a kernel takes the 32-bit reads when its call's buffers fit them. Every kernel does but
// the backward's dK/dV kernel that also sums dQ (`dq_accumulate`, both backward modes), which takes
// them where the score_mod reads a buffer by the score's position (a table: its offsets are
// computed per score), and where it reads any buffer beside a mask_mod that reads none. Such
// tables spill in the inner loop with 64-bit offsets: the 32-bit ones measured 1.02-1.87x beside
// masks without buffers (H200, notes/perf.md "(zzt)": bias[h][q_idx][kv_idx] 1.47-1.75x,
// bias[q_idx][kv_idx] 1.74-1.87x, rel[h][kv_idx - q_idx] 1.38-1.45x, rel[kv_idx - q_idx]
// 1.02-1.06x) and 1.01-1.19x beside a documents mask ("(zzu)"). A mask that reads buffers beside
// no table keeps the 64-bit reads: documents alone and beside ALiBi's slope[h] measured 0.95-0.96x
// with 32-bit ones (and 0.97x on the H100 in "(t)").
bool kernel_takes_32_bit_reads(bool dkdv_sums_dq, const Expr& score_mod, const Expr& mask_mod);

// The parameter and buffer names `exprs` read.
std::set<std::string> names_read(std::initializer_list<const Expr*> exprs);

// Whether `exprs` read at least one of the buffers `declarations` declares (as opposed to params).
bool reads_buffers(const Declarations& declarations, std::initializer_list<const Expr*> exprs);

}  // namespace flexjit::codegen
