#include "mask/seq_lens.hpp"

#include <cstring>
#include <string>

#include "flexjit/error.hpp"

namespace flexjit::mask {
namespace {

// One length array: absent, or [B] int32 with stride 1 on the device; its host copy inside [0, padded].
void check_lengths(const TensorView& t, const int32_t* host, const char* name, int batch, int padded,
                   const char* padded_name, const std::string& what) {
  const std::string field = what + ": seq_lens." + name;
  if (t.data == nullptr) {
    if (host != nullptr)
      throw ShapeError(what + ": seq_lens.host_" + name + " is given without seq_lens." + name +
                       " (the kernels read the device array): pass both");
    return;
  }
  if (t.dtype != DType::i32)
    throw ShapeError(field + " must be i32, got " + std::string(dtype_name(t.dtype)) + " (" + t.describe() + ")");
  if (t.rank() != 1 || t.strides.size() != 1 || t.shape[0] != batch)
    throw ShapeError(field + " must be [B] = [" + std::to_string(batch) + "] int32, got " + t.describe());
  if (t.strides[0] != 1) throw ShapeError(field + " must be contiguous (stride 1), got " + t.describe());
  if (host == nullptr) return;
  for (int b = 0; b < batch; ++b)
    if (host[b] < 0 || host[b] > padded)
      throw ShapeError(what + ": seq_lens.host_" + name + "[" + std::to_string(b) + "] = " + std::to_string(host[b]) +
                       " is outside [0, " + std::to_string(padded) + "] (" + padded_name + ")");
}

}  // namespace

FlexjitSeqLens check_seq_lens(const SeqLens& lens, int batch, int q_len, int kv_len, const Expr& mask_mod,
                              const BlockMask* block_mask, const char* what) {
  FlexjitSeqLens out;
  std::memset(&out, 0, sizeof(out));
  check_lengths(lens.q_lens, lens.host_q_lens, "q_lens", batch, q_len, "Sq, the padded length of q", what);
  check_lengths(lens.kv_lens, lens.host_kv_lens, "kv_lens", batch, kv_len, "Skv, the padded length of k and v", what);
  if (block_mask != nullptr) {
    const BlockMask::BuiltLengths& built = block_mask->built_lengths();
    const bool built_with_lengths = built.q_lens != nullptr || built.kv_lens != nullptr;
    if (built_with_lengths && (built.q_lens != lens.q_lens.data || built.kv_lens != lens.kv_lens.data))
      throw UsageError(std::string(what) +
                       ": the block mask was built with per-sequence lengths other than this call's seq_lens "
                       "(its tables have nothing past those lengths); pass the q_lens / kv_lens arrays it was "
                       "built with, or build it for this call");
    const bool reads_q = mask_mod.uses("q_len"), reads_kv = mask_mod.uses("kv_len");
    if (!lens.empty() && !built_with_lengths && (reads_q || reads_kv)) {
      const std::string reads = reads_q && reads_kv ? "q_len and kv_len" : (reads_q ? "q_len" : "kv_len");
      throw UsageError(std::string(what) + ": mask_mod reads " + reads +
                       ", so block-mask tables built for the padded lengths are wrong for shorter sequences; "
                       "build them with the lengths (Attention::block_mask with seq_lens) or pass no block mask");
    }
  }
  out.q_lens = static_cast<const int*>(lens.q_lens.data);
  out.kv_lens = static_cast<const int*>(lens.kv_lens.data);
  return out;
}

}  // namespace flexjit::mask
