#pragma once
// What the tiled attention families (fwd, bwd_dq, bwd_dkdv) share: dtype / head-dim checks, the
// tile checks, the common template constants and the description line. Internal to families/.
#include <string>

#include "codegen/family.hpp"

namespace flexjit::codegen::families {

// Block-mask block sizes: multiples of 16 between 16 and 1024 (what the block-mask kernels build).
void validate_sparse_blocks(const KernelSpec& s);

// Head dims in memory: multiples of 8 from 8 to 256; the tiles' multiples of 64 that hold them (as
// set_head_dims pads them). `prefix` starts each message (a family's name and ": ", or nothing).
void validate_head_dims(const KernelSpec& s, const std::string& prefix);

// dtype bf16/f16, head dims (validate_head_dims), gqa_group >= 1.
void validate_attention_inputs(const KernelSpec& s);

// The tile checks of a tiled attention kernel. `kv_rows`: the warps split kv rows (block_n) and
// the query tiles stream (dK/dV); otherwise the reverse. `wgmma_extra` runs after the wgmma
// checks, `extra` after the tile checks (family-specific conditions; may be null).
void validate_tiles(const KernelSpec& s, bool kv_rows, void (*wgmma_extra)(const KernelSpec&),
                    void (*extra)(const KernelSpec&));

// ctx["kernel_name"], ctx["element_type"], ctx["wgmma"], and D .. WGMMA (in the order the
// templates' constants have always had).
void add_tile_constants(const KernelSpec& s, nlohmann::json& ctx, nlohmann::json& constants);

// "fwd bf16 d128/128 m128n64w4s2 gqa1 divisible=0 ... mask_mod=..." (the family name first).
std::string describe_attention(const KernelSpec& s);

// "bf16" or "f16": the element type name the templates use.
const char* element_type(const KernelSpec& s);

// Grid (tiles, heads, batch) over query tiles of block_m rows (fwd, bwd_dq).
LaunchGeometry query_tile_geometry(const KernelSpec& s, const CallShape& shape);

bool is_power_of_two(int x);

}  // namespace flexjit::codegen::families
