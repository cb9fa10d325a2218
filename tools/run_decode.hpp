#pragma once
// `flexjit run` with per-sequence lengths (--seq-lens): decoding through Attention::decode on the
// GPU, or the float64 ragged reference with --device cpu. K/V come contiguous (--k/--v, optionally
// paged by the CLI itself with --page-size N into a shuffled pool) or already paged
// (--k-pages/--v-pages/--page-table).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/npy.hpp"
#include "flexjit/expr.hpp"

namespace flexjit::cli {

struct DecodeRunArgs {
  std::string q, k, v, k_pages, v_pages, page_table, seq_lens, out_dir, device, score, mask, config;
  int page_size = 0;
  std::optional<double> scale;  // none: 1/sqrt(D)
  bool check = false;
  DType dtype = DType::bf16;
  std::vector<std::pair<std::string, NpyArray>> buffers;
  std::vector<std::pair<ParamDecl, double>> params;
};

// Runs it and writes out.npy and lse.npy; returns the exit code (failure when --check fails).
int run_decode(const DecodeRunArgs& args);

}  // namespace flexjit::cli
