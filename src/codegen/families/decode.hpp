#pragma once
// What the decode host code (src/attention/decode.cpp) needs of the decode family beyond its
// descriptor: the tile list chunk and the default tiles for a number of packed query rows.
#include "codegen/kernel_spec.hpp"

namespace flexjit::codegen {

// Tiles of the decode kernel's key walk whose mask_mod classification is done at once (bounds
// the shared-memory tile list; any length is walked in chunks of this many tiles).
constexpr int kDecodeChunkTiles = 64;

// Tiles for `packed_rows` query rows per kv head (Sq x GQA group); 0 means "typical decode".
BlockConfig decode_default_config(Family family, int head_dim, int head_dim_v, int packed_rows = 0);

}  // namespace flexjit::codegen
