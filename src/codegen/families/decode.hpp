#pragma once
// What the decode host code (src/attention/decode.cpp) needs of the decode family beyond its
// descriptor: the classification kernel's warps and the default tiles for a number of packed query rows.
#include "codegen/kernel_spec.hpp"

namespace flexjit::codegen {

// Warps of the mask classification kernel (kernel 1 of the decode family), and the most CTAs
// (parts of a sequence's tiles) it may give one (sequence, list head, row tile).
constexpr int kDecodeClassifyWarps = 16;
constexpr int kDecodeMaxClassifyParts = 8;
// The most key tiles a decode kernel classifies by tile bounds: its share of the kept tiles is
// listed in shared memory (4 bytes a tile), so a cache of more tiles takes the classification kernel.
constexpr int kDecodeBoundsMaxTiles = 1024;

// What a decode call's cache and lengths tell its default tiles (the defaults: a contiguous cache
// of unknown lengths that TMA cannot describe).
struct DecodeCacheFacts {
  bool paged = false;
  // TMA can describe the call's K and V (contiguous cache or pools: aligned bases, 16-byte
  // strides). On sm_90a such a cache takes the TMA tiles at head dims 65-128 and up to 16 packed
  // rows: a contiguous one past kDecodeContiguousTmaKeys keys, a paged one when `page_size` makes
  // boxes of whole swizzle atoms.
  bool tma_reads_cache = false;
  int page_size = 0;  // paged: the call's page size (0: unknown)
  // The call's CTAs are short and come in waves (at least two (sequence, kv head) units per SM and
  // at most kDecodeShortKeys keys per sequence): a paged cache then takes 64-key TMA tiles, two
  // CTAs per SM, so one CTA's start overlaps the other's stream.
  bool short_waves = false;
  int64_t longest_keys = 0;  // the call's longest sequence (0: unknown, taken as long)
};

// Tiles for `packed_rows` query rows per kv head (Sq x GQA group; 0 means "typical decode") read
// from the cache `cache` describes, within the shared memory of `arch`.
BlockConfig decode_default_config(Family family, int head_dim, int head_dim_v, int packed_rows = 0,
                                  const std::string& arch = "sm_90a", const DecodeCacheFacts& cache = {});
// The longest sequence (keys) of a call whose CTAs are short (decode_default_config's short_waves).
constexpr int64_t kDecodeShortKeys = 2048;
// A contiguous cache's sequences up to this many keys are read by cp.async: a step is short and
// TMA's start (barriers, descriptors) costs more than it saves (H200, graph-captured steps, B=1 4k
// to B=64 1k and B=1 16k: cp.async 1.003-1.04x; B=16 32k level in a graph, TMA 1.02x by bench).
constexpr int64_t kDecodeContiguousTmaKeys = 16384;

// True when a decode kernel of `spec` (its mask, tiles and head dims) classifies its key tiles by the
// mask's interval bounds (KernelSpec::decode_tile_bounds) instead of running the classification
// kernel: the mask has them (Expr::has_tile_bounds), a cache of `capacity` keys per sequence has at
// most kDecodeBoundsMaxTiles tiles (0: unknown, taken to fit), the list fits in `arch`'s shared
// memory beside the tiles, and FLEXJIT_DECODE_CLASSIFY is not `kernel` (for A/B measurements; read
// at every call, UsageError for a value other than bounds or kernel).
bool decode_classifies_by_bounds(const KernelSpec& spec, int64_t capacity, const std::string& arch);

}  // namespace flexjit::codegen
