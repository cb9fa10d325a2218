#include "mask/tables.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

#include "flexjit/error.hpp"

namespace flexjit::mask {

void table_sizes(const BlockMaskShape& shape, size_t (&counts)[8]) {
  const size_t bh = static_cast<size_t>(shape.batch) * shape.heads;
  const size_t nq = static_cast<size_t>(shape.num_q_blocks());
  const size_t nk = static_cast<size_t>(shape.num_kv_blocks());
  counts[0] = bh * nq;       // kv_num_blocks
  counts[1] = bh * nq * nk;  // kv_indices
  counts[2] = bh * nq;       // full_kv_num_blocks
  counts[3] = bh * nq * nk;  // full_kv_indices
  counts[4] = bh * nk;       // q_num_blocks
  counts[5] = bh * nk * nq;  // q_indices
  counts[6] = bh * nk;       // full_q_num_blocks
  counts[7] = bh * nk * nq;  // full_q_indices
}

void check_table_storage(const void* storage, size_t storage_bytes, size_t needed) {
  if (storage == nullptr) return;
  if (storage_bytes < needed)
    throw ShapeError("block mask storage holds " + std::to_string(storage_bytes) + " bytes; these tables need " +
                     std::to_string(needed) + " (BlockMask::gpu_storage_bytes says how many)");
  if (reinterpret_cast<uintptr_t>(storage) % 16 != 0) {
    char address[32];
    std::snprintf(address, sizeof(address), "%p", storage);
    throw ShapeError(std::string("block mask storage at ") + address +
                     " is not 16-byte aligned: pass the start of an allocation (they are 256-byte aligned)");
  }
}

TableLayout table_layout(const BlockMaskShape& shape) {
  auto align = [](size_t x) { return (x + 255) / 256 * 256; };
  size_t counts[8];
  table_sizes(shape, counts);
  TableLayout layout{};
  size_t at = 0;
  for (int i = 0; i < 8; ++i) {
    layout.offset[i] = at;
    at = align(at + counts[i] * sizeof(int32_t));
  }
  layout.classes_offset = at;
  layout.classes_bytes = static_cast<size_t>(shape.batch) * shape.heads * shape.num_q_blocks() *
                         shape.num_kv_blocks();
  layout.total_bytes = align(at + layout.classes_bytes);
  return layout;
}

BlockMaskTables tables_from_classes(const BlockMaskShape& shape,
                                    const std::vector<unsigned char>& classes) {
  const int bh = shape.batch * shape.heads;
  const int nq = shape.num_q_blocks(), nk = shape.num_kv_blocks();
  BlockMaskTables t;
  size_t counts[8];
  table_sizes(shape, counts);
  std::vector<int32_t>* tables[8] = {&t.kv_num_blocks, &t.kv_indices, &t.full_kv_num_blocks,
                                     &t.full_kv_indices, &t.q_num_blocks, &t.q_indices,
                                     &t.full_q_num_blocks, &t.full_q_indices};
  for (int i = 0; i < 8; ++i) tables[i]->assign(counts[i], 0);
  for (int z = 0; z < bh; ++z) {
    for (int i = 0; i < nq; ++i) {
      const size_t row = static_cast<size_t>(z) * nq + i;
      int partial = 0, full = 0;
      for (int j = 0; j < nk; ++j) {
        const unsigned char c = classes[row * nk + j];
        if (c == kPartial) t.kv_indices[row * nk + partial++] = j;
        if (c == kFull) t.full_kv_indices[row * nk + full++] = j;
      }
      t.kv_num_blocks[row] = partial;
      t.full_kv_num_blocks[row] = full;
    }
    for (int j = 0; j < nk; ++j) {
      const size_t row = static_cast<size_t>(z) * nk + j;
      int partial = 0, full = 0;
      for (int i = 0; i < nq; ++i) {
        const unsigned char c = classes[(static_cast<size_t>(z) * nq + i) * nk + j];
        if (c == kPartial) t.q_indices[row * nq + partial++] = i;
        if (c == kFull) t.full_q_indices[row * nq + full++] = i;
      }
      t.q_num_blocks[row] = partial;
      t.full_q_num_blocks[row] = full;
    }
  }
  return t;
}

std::vector<unsigned char> classes_from_kv_tables(const BlockMaskShape& shape,
                                                  const BlockMaskTables& tables) {
  const int bh = shape.batch * shape.heads;
  const int nq = shape.num_q_blocks(), nk = shape.num_kv_blocks();
  size_t counts[8];
  table_sizes(shape, counts);
  auto check_size = [&](const std::vector<int32_t>& table, size_t expected, const char* name) {
    if (table.size() != expected)
      throw ShapeError(std::string("block mask table ") + name + " has " +
                       std::to_string(table.size()) + " entries; a mask of " +
                       std::to_string(shape.batch) + " x " + std::to_string(shape.heads) + " x " +
                       std::to_string(nq) + " query blocks x " + std::to_string(nk) +
                       " kv blocks needs " + std::to_string(expected));
  };
  check_size(tables.kv_num_blocks, counts[0], "kv_num_blocks");
  check_size(tables.kv_indices, counts[1], "kv_indices");
  const bool has_full = !tables.full_kv_num_blocks.empty() || !tables.full_kv_indices.empty();
  if (has_full) {
    check_size(tables.full_kv_num_blocks, counts[2], "full_kv_num_blocks");
    check_size(tables.full_kv_indices, counts[3], "full_kv_indices");
  }
  std::vector<unsigned char> classes(static_cast<size_t>(bh) * nq * nk, kEmpty);
  auto fill = [&](const std::vector<int32_t>& num, const std::vector<int32_t>& idx, unsigned char cls,
                  const char* num_name, const char* idx_name) {
    for (int z = 0; z < bh; ++z)
      for (int i = 0; i < nq; ++i) {
        const size_t row = static_cast<size_t>(z) * nq + i;
        const int n = num[row];
        const std::string where = "[" + std::to_string(z / shape.heads) + "][" +
                                  std::to_string(z % shape.heads) + "][" + std::to_string(i) + "]";
        if (n < 0 || n > nk)
          throw ShapeError(std::string("block mask table ") + num_name + where + " = " +
                           std::to_string(n) + " is outside [0, " + std::to_string(nk) + "]");
        for (int e = 0; e < n; ++e) {
          const int j = idx[row * nk + e];
          if (j < 0 || j >= nk)
            throw ShapeError(std::string("block mask table ") + idx_name + where + "[" +
                             std::to_string(e) + "] = " + std::to_string(j) +
                             " is not a kv block index (0 .. " + std::to_string(nk - 1) + ")");
          if (e > 0 && idx[row * nk + e - 1] >= j)
            throw ShapeError(std::string("block mask table ") + idx_name + where +
                             " is not strictly ascending at entry " + std::to_string(e) +
                             "; list each block once, in increasing order");
          unsigned char& c = classes[row * nk + j];
          if (c != kEmpty)
            throw ShapeError("block mask lists kv block " + std::to_string(j) + " of query block " +
                             where + " as both partial and full");
          c = cls;
        }
      }
  };
  fill(tables.kv_num_blocks, tables.kv_indices, kPartial, "kv_num_blocks", "kv_indices");
  if (has_full)
    fill(tables.full_kv_num_blocks, tables.full_kv_indices, kFull, "full_kv_num_blocks", "full_kv_indices");
  return classes;
}

}  // namespace flexjit::mask
