#pragma once
// Block-mask table arithmetic shared by the CPU builder, the GPU builder and user-given tables:
// where each table lives in the single device allocation, and how block classes become tables.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flexjit/block_mask.hpp"

namespace flexjit::mask {

// Every size of a block mask positive, and lengths and block sizes at most 2^30 (rounding a length
// up to whole blocks counts in int); throws ShapeError naming the size.
void check_block_mask_shape(const BlockMaskShape& shape);

enum BlockClass : unsigned char { kEmpty = 0, kPartial = 1, kFull = 2 };

// Byte offsets of the tables inside one device allocation (each 256-byte aligned), in the order
// of BlockMask::DeviceTables, then the scratch array of classes the GPU builder fills.
struct TableLayout {
  size_t offset[8];
  size_t classes_offset;
  size_t classes_bytes;
  size_t total_bytes;
};
TableLayout table_layout(const BlockMaskShape& shape);

// Refuses caller storage for tables of `needed` bytes that is too small or not 16-byte aligned
// (nullptr: none given, nothing to check).
void check_table_storage(const void* storage, size_t storage_bytes, size_t needed);

// Element counts of the tables in DeviceTables order.
void table_sizes(const BlockMaskShape& shape, size_t (&counts)[8]);

// Tables from classes laid out [batch*heads][num_q_blocks][num_kv_blocks].
BlockMaskTables tables_from_classes(const BlockMaskShape& shape, const std::vector<unsigned char>& classes);

// Classes from kv_* tables (validating them); throws ShapeError naming the bad entry.
std::vector<unsigned char> classes_from_kv_tables(const BlockMaskShape& shape, const BlockMaskTables& tables);

}  // namespace flexjit::mask
