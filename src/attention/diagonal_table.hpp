#pragma once
// The forward's table of diagonal values (codegen::forward_diagonal_table): written for one call by
// the diagonal_table kernel into stream-ordered memory, ahead of the forward that reads it.
#include <optional>
#include <string>
#include <vector>

#include "attention/stream_scratch.hpp"
#include "codegen/kernel_spec.hpp"
#include "flexjit/device.hpp"
#include "../../templates/flexjit_params.cuh"

namespace flexjit::attention {

// The table's layout for `heads` rows and the call's padded lengths: `origin` puts the first pair
// of every slice the forward copies at 0 or past it (tile rows below q_len - 1 + 128), `row` keeps
// its last inside the row (tile keys below kv_len + 128, slices of up to 256 pairs) and is even,
// so that every row starts 16-byte aligned.
struct DiagonalTableLayout {
  int origin = 0;
  int row = 0;
  size_t pairs_bytes = 0;
  size_t errors_bytes = 0;
  size_t total_bytes() const { return pairs_bytes + errors_bytes + 16; }
};
DiagonalTableLayout diagonal_table_layout(int heads, int q_len, int kv_len);

// Queues the diagonal_table kernel for `forward` (a spec that takes the table form) on `stream`,
// into `memory` (allocated here, freed in stream order when the caller drops it), and returns the
// forward's view. `mod_args`: the call's packed arguments, which the table's kernel shares with the
// forward. `score_scale`: the forward's (FlexjitFwdParams::score_scale).
FlexjitDiagonalTable write_diagonal_table(const codegen::KernelSpec& forward, const std::string& arch, int heads,
                                          int q_len, int kv_len, float score_scale,
                                          const std::vector<unsigned char>& mod_args,
                                          std::optional<StreamScratch>& memory, Stream stream);

}  // namespace flexjit::attention
