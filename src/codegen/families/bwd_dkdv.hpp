#pragma once
// What the backward's host code (src/attention/attention.cpp) needs of the bwd_dkdv family beyond
// its descriptor: the facts of the warp-specialised kernel's column slices (above head dim 128)
// that change what a call must set up around it.
#include "codegen/kernel_spec.hpp"

namespace flexjit::codegen {

// The kv length the kernel's tail-free form (KernelSpec::is_divisible) needs a multiple of: its
// kv tiles, or with column slices two of them (kv tiles 2c and 2c + 1 may run as a cluster, and
// an odd count adds a tile wholly past the keys, whose rows only the range test drops).
int dkdv_kv_len_multiple(const KernelSpec& spec);

// The kernel adds its dQ shares through a TMA map of the fp32 accumulator (FlexjitBwdTma::dq,
// codegen::encode_dq_accum_tma) rather than with bulk copies of whole rows: its column slices.
bool dkdv_adds_dq_through_tensor_map(const KernelSpec& spec);

// The deterministic mode's turn counters per (query tile, chain) (FlexjitBwdParams::dq_order) of
// a backward at these head dims: one per column slice of the warp-specialised kernel, each of
// whose writer warps takes its own turns.
int ordered_dq_counters_per_tile(int head_dim, int head_dim_v);

}  // namespace flexjit::codegen
