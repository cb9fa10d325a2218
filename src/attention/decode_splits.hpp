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
// long sequences spread over the GPU while short ones finish early. `masked` (a mask_mod, whose
// empty tiles are skipped where they fall: a sliding window keeps only the last few): at least
// eight waves of CTAs, so the kept tiles spread over the GPU too.
DecodeSplit choose_decode_split(int64_t units, int max_tiles, const std::vector<int>& seq_tiles, int64_t slots,
                                bool masked = false);

}  // namespace flexjit::attention
