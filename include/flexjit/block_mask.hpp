#pragma once
/// \file
/// BlockMask: the block-sparse tables that tell attention kernels which (query block, kv block)
/// pairs to visit. Same meaning as FlexAttention's BlockMask: for query block i of batch z and head
/// h, `kv_num_blocks[z][h][i]` / `kv_indices[z][h][i][:]` list the partially masked kv blocks
/// (mask_mod runs), `full_kv_*` the blocks where every position is kept (mask_mod skipped); blocks
/// in neither are skipped. `q_*` tables are the transposes, for the backward pass. The z and h
/// dimensions are 1 when the mask ignores b / h (the tables broadcast).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flexjit/device.hpp"
#include "flexjit/expr.hpp"
#include "flexjit/mod_values.hpp"
#include "flexjit/seq_lens.hpp"

namespace flexjit {

/// Sizes of a block mask.
struct BlockMaskShape {
  int batch = 1;        ///< table batch: B, or 1 when the mask does not depend on b
  int heads = 1;        ///< table heads: Hq, or 1 when the mask does not depend on h
  int q_len = 0;        ///< query sequence length
  int kv_len = 0;       ///< key/value sequence length
  int q_block = 128;    ///< rows of a query block
  int kv_block = 128;   ///< rows of a kv block
  /// ceil(q_len / q_block)
  int num_q_blocks() const noexcept { return (q_len + q_block - 1) / q_block; }
  /// ceil(kv_len / kv_block)
  int num_kv_blocks() const noexcept { return (kv_len + kv_block - 1) / kv_block; }
  /// Field-wise equality.
  bool operator==(const BlockMaskShape& o) const noexcept {
    return batch == o.batch && heads == o.heads && q_len == o.q_len && kv_len == o.kv_len &&
           q_block == o.q_block && kv_block == o.kv_block;
  }
};

/// The tables of a block mask in host memory, int32, row-major:
/// kv_num_blocks [batch][heads][num_q_blocks], kv_indices [batch][heads][num_q_blocks][num_kv_blocks],
/// q_num_blocks [batch][heads][num_kv_blocks], q_indices [batch][heads][num_kv_blocks][num_q_blocks];
/// the full_* tables have the shapes of their partial counterparts. Unused index entries are 0.
struct BlockMaskTables {
  std::vector<int32_t> kv_num_blocks;       ///< partial kv blocks per query block
  std::vector<int32_t> kv_indices;          ///< their indices, ascending
  std::vector<int32_t> full_kv_num_blocks;  ///< full kv blocks per query block
  std::vector<int32_t> full_kv_indices;     ///< their indices, ascending
  std::vector<int32_t> q_num_blocks;        ///< partial query blocks per kv block
  std::vector<int32_t> q_indices;           ///< their indices, ascending
  std::vector<int32_t> full_q_num_blocks;   ///< full query blocks per kv block
  std::vector<int32_t> full_q_indices;      ///< their indices, ascending
};

/// Block-sparse tables, on the device (built by a JIT kernel) or on the host (built on the CPU or
/// given by the user; uploaded on first use by a kernel). Cheap to copy: copies share storage.
class BlockMask {
 public:
  /// Evaluates `mask` on the CPU with the interpreter (for tests and machines without a GPU).
  /// `batch`/`heads` are the attention's B and Hq; the tables keep those dimensions only where the
  /// mask reads `b` / `h`.
  static BlockMask build_on_cpu(const Expr& mask, int batch, int heads, int q_len, int kv_len,
                                const EvalInputs& inputs = {}, int q_block = 128, int kv_block = 128);
  /// Builds the tables on the GPU with a JIT kernel (compiled once per mask expression and block
  /// size, then cached): one CTA per block pair classifies it, a second kernel compacts the
  /// classes into the kv_* and q_* tables. `values` supplies the mask's buffers and parameters.
  /// Runs on `stream` and returns without synchronising. `arch` "" means the current device's.
  static BlockMask build_on_gpu(const Expr& mask, int batch, int heads, int q_len, int kv_len,
                                const ModValues& values = {}, Stream stream = nullptr,
                                int q_block = 128, int kv_block = 128, const std::string& arch = "");
  /// build_on_gpu for a padded batch with per-sequence lengths (`q_len` / `kv_len` are the padded
  /// lengths): mask_mod sees each sequence's lengths, blocks past a sequence's queries or keys are
  /// empty, and the tables have a row per sequence. Forward / backward calls accept these tables
  /// only with the same `lens` arrays (the same device pointers, holding the same lengths).
  /// Lengths outside the padded ones are clamped and reported by check_buffer_errors().
  ///
  /// `storage`: device memory the caller owns for the tables, at least gpu_storage_bytes() bytes
  /// and 16-byte aligned (from a framework's caching allocator, say). The mask then allocates
  /// nothing and frees nothing: building it can be captured into a CUDA graph, and dropping it
  /// never waits for the device (cuMemFree does). The caller keeps the memory alive and
  /// unchanged while any copy of the mask is in use, including kernels still queued. nullptr:
  /// the mask allocates its own (cuMemAlloc) and frees it with its last copy.
  static BlockMask build_on_gpu(const Expr& mask, int batch, int heads, int q_len, int kv_len, const SeqLens& lens,
                                const ModValues& values = {}, Stream stream = nullptr, int q_block = 128,
                                int kv_block = 128, const std::string& arch = "", void* storage = nullptr,
                                size_t storage_bytes = 0);
  /// The device bytes build_on_gpu's tables of these sizes take (what `storage` must hold);
  /// `with_lengths` for the build with per-sequence lengths. Throws ShapeError as build_on_gpu does.
  static size_t gpu_storage_bytes(const Expr& mask, int batch, int heads, int q_len, int kv_len,
                                  bool with_lengths = false, int q_block = 128, int kv_block = 128);
  /// Wraps user-given tables after checking their sizes and contents (counts within range,
  /// indices ascending, in range, no block listed twice). The q_* tables may be left empty: they
  /// are then derived from the kv_* tables. Throws ShapeError naming the bad table and entry.
  static BlockMask from_tables(const BlockMaskShape& shape, BlockMaskTables tables);
  /// A mask with every block full (what "no mask" means, as tables).
  static BlockMask all_full(const BlockMaskShape& shape);

  /// Sizes.
  const BlockMaskShape& shape() const noexcept;
  /// The per-sequence length arrays (device pointers) the tables were built with; both null for
  /// tables of the padded lengths.
  struct BuiltLengths {
    const void* q_lens = nullptr;   ///< SeqLens::q_lens.data of the build
    const void* kv_lens = nullptr;  ///< SeqLens::kv_lens.data of the build
  };
  /// See BuiltLengths.
  const BuiltLengths& built_lengths() const noexcept;
  /// The canonical text of the mask_mod the tables were built from (build_on_cpu, build_on_gpu);
  /// empty for from_tables and all_full, whose tables no expression vouches for.
  const std::string& built_from() const noexcept;
  /// Fraction of (query block, kv block) pairs visited (partial or full), over all b and h.
  double density() const;
  /// Fraction of pairs that are partial (mask_mod evaluated).
  double partial_fraction() const;
  /// The tables in host memory (downloads them when the mask lives on the device).
  const BlockMaskTables& host_tables() const;
  /// True when the tables are (also) in device memory.
  bool on_device() const noexcept;

  /// Internal: device storage (uploads host tables on first call). Pointers stay valid as long
  /// as any copy of this BlockMask lives.
  struct DeviceTables {
    const int32_t* kv_num_blocks;
    const int32_t* kv_indices;
    const int32_t* full_kv_num_blocks;
    const int32_t* full_kv_indices;
    const int32_t* q_num_blocks;
    const int32_t* q_indices;
    const int32_t* full_q_num_blocks;
    const int32_t* full_q_indices;
  };
  /// Device pointers of the tables (uploading host tables on first use).
  const DeviceTables& device_tables() const;

  /// Internal: wraps device storage laid out as `DeviceTables` describes (used by the GPU builder).
  static BlockMask from_device(const BlockMaskShape& shape, DeviceBuffer storage);
  /// Internal: from_device for tables built with the per-sequence lengths `built`.
  /// `built_from`: the canonical text of the mask_mod the tables were built from (built_from()).
  static BlockMask from_device(const BlockMaskShape& shape, DeviceBuffer storage, BuiltLengths built,
                               std::string built_from = {});

  /// Opaque shared state.
  struct State;

 private:
  explicit BlockMask(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace flexjit
