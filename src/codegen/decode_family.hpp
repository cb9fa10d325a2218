#pragma once
// The decode and decode_combine kernel families (split-KV decoding over contiguous or paged KV):
// validation, shared memory, default tiles and template constants. kernel_spec.cpp's switches
// call these, one line per family, so the family can become one descriptor file.
#include <cstddef>

#include <nlohmann/json.hpp>

#include "codegen/kernel_spec.hpp"

namespace flexjit::codegen {

// Tiles of the decode kernel's key walk whose mask_mod classification is done at once (bounds
// the shared-memory tile list; any length is walked in chunks of this many tiles).
constexpr int kDecodeChunkTiles = 64;

// Throws UsageError naming the first field a decode / decode_combine spec gets wrong.
void validate_decode(const KernelSpec& spec);
size_t decode_shared_memory_bytes(const KernelSpec& spec);
// Tiles for `packed_rows` query rows per kv head (Sq x GQA group); 0 means "typical decode".
BlockConfig decode_default_config(Family family, int head_dim, int head_dim_v, int packed_rows = 0);
// Adds the family's kernel name, element type and constants to a template context.
void decode_template_context(const KernelSpec& spec, nlohmann::json& ctx, nlohmann::json& constants);
// The family-specific tail of KernelSpec::describe().
std::string decode_describe(const KernelSpec& spec);

}  // namespace flexjit::codegen
