// BlockMask::build_on_gpu: the block_mask kernel family, compiled once per mask expression and
// block size, evaluates mask_mod over the block grid and compacts the result into the tables.
#include <cstring>
#include <set>
#include <string>

#include "../../templates/flexjit_params.cuh"
#include "codegen/kernel_store.hpp"
#include "codegen/launch.hpp"
#include "codegen/mod_args.hpp"
#include "flexjit/block_mask.hpp"
#include "flexjit/error.hpp"
#include "mask/seq_lens.hpp"
#include "mask/tables.hpp"

namespace flexjit {

BlockMask BlockMask::build_on_gpu(const Expr& mask, int batch, int heads, int q_len, int kv_len,
                                  const ModValues& values, Stream stream, int q_block, int kv_block,
                                  const std::string& arch) {
  return build_on_gpu(mask, batch, heads, q_len, kv_len, SeqLens{}, values, stream, q_block, kv_block, arch);
}

namespace {

// The tables' sizes of a GPU build, checked: with lengths every sequence has tables of its own
// (its blocks past the ends are empty).
BlockMaskShape gpu_table_shape(const Expr& mask, int batch, int heads, int q_len, int kv_len, bool with_lengths,
                               int q_block, int kv_block) {
  if (mask.kind() != ModKind::mask)
    throw UsageError("BlockMask::build_on_gpu needs a mask_mod, got a score_mod");
  BlockMaskShape shape{mask.uses("b") || with_lengths ? batch : 1, mask.uses("h") ? heads : 1, q_len, kv_len,
                       q_block, kv_block};
  if (batch < 1 || heads < 1 || q_len < 1 || kv_len < 1)
    throw ShapeError("block mask sizes must be positive: batch " + std::to_string(batch) +
                     ", heads " + std::to_string(heads) + ", q_len " + std::to_string(q_len) +
                     ", kv_len " + std::to_string(kv_len));
  mask::check_block_mask_shape(shape);  // block sizes, and lengths within 2^30, before the grid is sized
  return shape;
}

}  // namespace

size_t BlockMask::gpu_storage_bytes(const Expr& mask, int batch, int heads, int q_len, int kv_len, bool with_lengths,
                                    int q_block, int kv_block) {
  return mask::table_layout(gpu_table_shape(mask, batch, heads, q_len, kv_len, with_lengths, q_block, kv_block))
      .total_bytes;
}

BlockMask BlockMask::build_on_gpu(const Expr& mask, int batch, int heads, int q_len, int kv_len, const SeqLens& lens,
                                  const ModValues& values, Stream stream, int q_block, int kv_block,
                                  const std::string& arch, void* storage, size_t storage_bytes) {
  const bool with_lengths = !lens.empty();
  const BlockMaskShape shape = gpu_table_shape(mask, batch, heads, q_len, kv_len, with_lengths, q_block, kv_block);
  // Caller storage is checked before anything compiles or runs.
  const mask::TableLayout layout = mask::table_layout(shape);
  mask::check_table_storage(storage, storage_bytes, layout.total_bytes);
  FlexjitSeqLens kernel_lens;
  std::memset(&kernel_lens, 0, sizeof(kernel_lens));
  if (with_lengths) {
    kernel_lens = flexjit::mask::check_seq_lens(lens, batch, q_len, kv_len, mask, nullptr, "block mask");
  }
  codegen::KernelSpec spec = codegen::block_mask_kernel_spec(mask, q_block, kv_block, with_lengths);
  const std::set<std::string> mask_reads = codegen::names_read({&mask});
  spec.buffer_offsets_32 = codegen::buffer_offsets_fit_32_bits(values, mask_reads);
  const auto ready = codegen::ready_kernel(spec, codegen::resolve_arch(arch));
  const std::vector<unsigned char> mod_args = codegen::pack_mod_args(spec.declarations, values, mask_reads, "block mask");

  DeviceBuffer memory = storage != nullptr ? DeviceBuffer::borrow(storage, storage_bytes)
                                           : DeviceBuffer::allocate(layout.total_bytes);
  auto* base = static_cast<unsigned char*>(memory.data());
  FlexjitBlockMaskParams p;
  std::memset(&p, 0, sizeof(p));
  p.classes = base + layout.classes_offset;
  int** tables[8] = {&p.kv_num_blocks, &p.kv_indices, &p.full_kv_num_blocks, &p.full_kv_indices,
                     &p.q_num_blocks,  &p.q_indices,  &p.full_q_num_blocks,  &p.full_q_indices};
  for (int i = 0; i < 8; ++i) *tables[i] = reinterpret_cast<int*>(base + layout.offset[i]);
  p.table_batch = shape.batch;
  p.table_heads = shape.heads;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.num_q_blocks = shape.num_q_blocks();
  p.num_kv_blocks = shape.num_kv_blocks();
  const unsigned bh = static_cast<unsigned>(shape.batch * shape.heads);
  if (p.num_q_blocks > 65535 || bh > 65535)
    throw ShapeError("block mask grid too large: " + std::to_string(p.num_q_blocks) +
                     " query blocks and " + std::to_string(bh) +
                     " (batch x heads) rows; each must be at most 65535 — use larger blocks");

  codegen::CallShape call;
  call.batch = shape.batch, call.heads = shape.heads, call.q_len = q_len, call.kv_len = kv_len;
  if (with_lengths)
    codegen::ConfiguredKernel(*ready, call, 0)
        .launch(stream, {&p, const_cast<unsigned char*>(mod_args.data()), &kernel_lens});
  else
    codegen::ConfiguredKernel(*ready, call, 0).launch(stream, {&p, const_cast<unsigned char*>(mod_args.data())});
  codegen::ConfiguredKernel(*ready, call, 1).launch(stream, {&p});
  return from_device(shape, std::move(memory), BuiltLengths{lens.q_lens.data, lens.kv_lens.data}, mask.canonical());
}

}  // namespace flexjit
