#pragma once
// How decoding splits each sequence's keys over the GPU (host side, no GPU needed: tested on the CPU).
#include <cstdint>
#include <vector>

namespace flexjit::attention {

struct DecodeSplit {
  int tiles_per_split = 1;  // key tiles each CTA walks
  int num_splits = 1;       // CTAs per (sequence, kv head, row tile): gridDim.x
};

// `units`: (sequence, kv head, packed-row tile) triples; `slots`: CTAs the GPU runs at once (SMs x
// CTAs per SM); `max_tiles`: key tiles of the longest sequence; `seq_tiles`: key tiles of each
// sequence when the host knows the lengths (empty otherwise). Equal lengths: the split count whose
// CTAs fill whole waves best (fewest splits among near-equals, so the combine stays cheap).
// Ragged lengths: a fixed number of tiles per CTA, small enough for several CTAs per slot, so the
// long sequences spread over the GPU while short ones finish early. (Splitting masked variants
// finer, so that a sliding window's few kept tiles spread over more CTAs, was measured on an H100
// and gained nothing there while costing the causal speculative step 7%: the kernel's per-tile
// mask classification, not the split, bounds those problems.)
DecodeSplit choose_decode_split(int64_t units, int max_tiles, const std::vector<int>& seq_tiles, int64_t slots);

}  // namespace flexjit::attention
