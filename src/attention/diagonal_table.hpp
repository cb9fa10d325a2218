#pragma once
// The table of a call's diagonal values (codegen::forward_diagonal_table, dkdv_diagonal_table):
// written by the diagonal_table kernel into stream-ordered memory, ahead of the kernel that reads it.
#include <optional>
#include <string>
#include <vector>

#include "attention/stream_scratch.hpp"
#include "codegen/kernel_spec.hpp"
#include "codegen/kernel_store.hpp"
#include "flexjit/device.hpp"
#include "../../templates/flexjit_params.cuh"

namespace flexjit::attention {

// The table's layout for `heads` rows and the call's padded lengths: `origin` (q_len rounded up to
// even, plus 256) puts the first entry of every slice the kernels copy at 0 or past it (tile rows
// up to 191 past a tile's first), `row` (origin + kv_len + 384, rounded up to four) keeps its last
// inside the row (tile keys below kv_len + 128, slices of up to 320 entries), so that every row
// starts 16-byte aligned (8-byte pairs, or with `raw` 4-byte words).
struct DiagonalTableLayout {
  int origin = 0;
  int row = 0;
  size_t entries_bytes = 0;
  size_t errors_bytes = 0;
  size_t total_bytes() const { return entries_bytes + errors_bytes + 16; }
};
DiagonalTableLayout diagonal_table_layout(int heads, int q_len, int kv_len, bool raw);

// Queues the diagonal_table kernel for `reader` (a forward or dK/dV spec that takes the table
// form) on `stream`, into `memory` (allocated here, freed in stream order when the caller drops
// it), and returns the reader's view: the forward's pairs, or with `raw` (the dK/dV kernel's) V's
// bits a word an entry. `mod_args`: the call's packed arguments, which the table's kernel shares
// with the reader. `score_scale`: the forward's (FlexjitFwdParams::score_scale; unused with raw).
// `kernel`: the table's kernel for `reader` where the caller has it loaded, else null (looked up).
FlexjitDiagonalTable write_diagonal_table(const codegen::KernelSpec& reader, const codegen::ReadyKernel* kernel,
                                          const std::string& arch, int heads,
                                          int q_len, int kv_len, float score_scale, bool raw,
                                          const std::vector<unsigned char>& mod_args,
                                          std::optional<StreamScratch>& memory, Stream stream);

}  // namespace flexjit::attention
