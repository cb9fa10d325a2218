#pragma once
/// \file
/// Attention: a compiled attention variant. Built once from a spec (expression strings, buffers,
/// parameters, dtype, head dims); called many times on device tensors. Kernels are specialised per
/// call shape (divisibility, GQA group, block mask or not) on first use and kept in the in-process
/// and on-disk caches, so later calls cost a hash lookup.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flexjit/block_mask.hpp"
#include "flexjit/config.hpp"
#include "flexjit/device.hpp"
#include "flexjit/dtype.hpp"
#include "flexjit/expr.hpp"
#include "flexjit/mod_values.hpp"
#include "flexjit/paged_kv.hpp"
#include "flexjit/seq_lens.hpp"
#include "flexjit/tensor.hpp"

namespace flexjit {

/// What an attention variant computes.
struct AttentionSpec {
  std::string score_mod;          ///< score_mod expression; "" means `score` (no modification)
  std::string mask_mod;           ///< mask_mod expression; "" means no mask
  Declarations declarations;      ///< buffers and parameters the expressions read
  DType dtype = DType::bf16;      ///< element type of Q, K, V and O (bf16 or f16)
  int head_dim = 128;             ///< D of Q and K: a multiple of 8 from 8 to 256 (the kernels pad their tiles to a multiple of 64)
  int head_dim_v = 0;             ///< D of V and O; 0 means head_dim
  std::optional<BlockConfig> fwd_config;  ///< forward tiles; default: autotuned or built-in default
  std::optional<BlockConfig> bwd_dq_config;    ///< dQ kernel tiles (block_m query rows per CTA)
  std::optional<BlockConfig> bwd_dkdv_config;  ///< dK/dV kernel tiles (block_n kv rows per CTA)
  std::optional<BlockConfig> decode_config;    ///< decode kernel tiles (block_m packed query rows)
  std::string arch;               ///< target ("sm_90a", ...); "" means the current device's
  bool rows_guaranteed_safe = false;  ///< promise: no query row is fully masked
};

/// The sizes of an attention call, for compiling ahead of time.
struct ProblemSize {
  int batch = 1;     ///< B
  int q_heads = 1;   ///< Hq
  int kv_heads = 1;  ///< Hkv (divides Hq)
  int q_len = 1;     ///< Sq
  int kv_len = 1;    ///< Skv
};

/// One kernel compiled by Attention::warm_up.
struct WarmedKernel {
  std::string family;   ///< "fwd", "bwd_dq", "block_mask", ...
  std::string config;   ///< block config ("" for kernels without one)
  std::string arch;     ///< target
  double compile_ms = 0;  ///< NVRTC time (of the original compile when it came from the cache)
  bool from_cache = false;  ///< found in the disk cache
  int registers = 0;      ///< per thread
  int spill_bytes = 0;    ///< spill stores per thread
};

/// The block config one kernel family used in the latest call, and where it came from.
struct KernelChoice {
  std::string family;          ///< "fwd", "bwd_dq" or "bwd_dkdv"
  BlockConfig config;          ///< the config launched
  std::string source;          ///< "fixed" (the spec's), "defaults", "cache" (autotune.json) or "tuned" (just now)
  std::optional<double> ms;    ///< the winner's time when tuned or cached
  std::optional<double> default_ms;  ///< the default config's time, when it was measured
  BlockConfig default_config;  ///< what FLEXJIT_AUTOTUNE=off would use
  int candidates = 0;          ///< configs measured to choose it (0 unless tuned now or cached)
  double compile_ms = 0;       ///< NVRTC time of the launched kernel (of its original compile if cached)
  bool from_disk_cache = false;  ///< the launched kernel came from the disk cache in this process
  double load_ms = 0;          ///< wall time this process spent getting it ready (compile or disk
                               ///< read, plus module load); 0 once it is in the in-process cache
  /// The kernel's lean form ran: its full form (more values live, for overlap) spilled registers
  /// beside this call's mods, so the one with fewer live values was compiled instead.
  bool lean_registers = false;
  /// The launched kernel's tiles' head dims (q and k, v and o): the call's head dims rounded up
  /// to whole 64-column slabs, or where the family's kernel takes others on the GPU (the backward
  /// on sm_90a: 256 for 192; the fast dK/dV kernel 192 for 129 to 192 beside a v of 65 to 192).
  int tile_head_dim = 0;
  int tile_head_dim_v = 0;  ///< see tile_head_dim
  /// bwd_dkdv only: "fast" (dQ summed by the dK/dV kernel in whatever order its CTAs run) or
  /// "deterministic" (the same bits every run; dq_path says how).
  std::string backward_mode;
  /// bwd_dkdv only: how dQ was summed: "reductions" (fast: the dK/dV kernel's fp32 reductions, in
  /// any order), "ordered reductions" (deterministic: the same reductions, taking turns in a fixed
  /// order) or "dq kernel" (deterministic: a separate dQ kernel recomputes the scores).
  std::string dq_path;
  /// bwd_dkdv only: why the call ran deterministically when the fast mode was asked for (the
  /// default; learnable buffers, a GPU without sm_90a, head dims without fast tiles); empty
  /// otherwise.
  std::string backward_mode_reason;
  /// bwd_dkdv only: CTAs that shared each (kv tile, kv head)'s GQA group of query heads, their dK
  /// and dV summed in fp32 after them (the fast mode's warp-specialised kernel with few kv heads;
  /// FLEXJIT_BWD_HEAD_SPLITS sets it); 1: one CTA walked the whole group.
  int kv_head_splits = 1;
};

/// How the backward sums dQ over the kv tiles.
enum class BackwardMode {
  /// dQ summed in fp32 by the dK/dV kernel (on sm_90a the warp-specialised one: a writer warp adds
  /// each tile's dQ with bulk reductions), then converted: 5 GEMMs instead of 7. dQ varies in its
  /// last bits from run to run. Runs on sm_90a for head dims up to 256 (129 to 192 on 192-column
  /// tiles beside a v of 65 to 192, else 256-column ones; a head dim of 64 or less beside one above
  /// 128 takes 128-column tiles: KernelChoice::tile_head_dim) on calls its TMA reads can take,
  /// without learnable buffers; elsewhere the call runs deterministically (KernelChoice says why).
  /// The default.
  fast,
  /// The same bits on every run and stream. Where the fast mode's warp-specialised kernel runs,
  /// its dQ reductions take turns in a fixed order (each 64-row query tile's sum from the last kv
  /// tile down); elsewhere (other GPUs, tensors its TMA reads cannot take, learnable buffers,
  /// and where DeterministicDq picks it) a separate dQ kernel recomputes the scores (7 GEMMs
  /// instead of 5).
  deterministic,
};

/// How the deterministic mode sums dQ where both ways can run.
enum class DeterministicDq {
  /// The default: ordered where it measured faster than the dQ kernel: no more 128-key tiles than
  /// 64-query tiles (no query tile's chain of turns outlasts a kv tile's walk), and no mask, or at
  /// head dims above 64 a mask with tile bounds (computed from positions: causal, windows,
  /// prefixes); the dQ kernel elsewhere (document masks, masked head dim 64).
  automatic,
  /// The warp-specialised dK/dV kernel's reductions, in a fixed order, wherever that kernel runs.
  ordered,
  /// A separate dQ kernel (the only way on other GPUs and shapes).
  kernel,
};

/// The way `FLEXJIT_DETERMINISTIC_DQ` asks for: unset, empty or "auto": automatic; "ordered":
/// ordered; "kernel": kernel. Throws UsageError for any other value.
DeterministicDq deterministic_dq_from_env();

/// The mode `FLEXJIT_DETERMINISTIC` asks for: unset, empty or 0: fast; 1: deterministic. Throws
/// UsageError for any other value.
BackwardMode backward_mode_from_env();

/// Per-call options.
struct CallOptions {
  ModValues values;              ///< parameters and buffers of the mods
  std::optional<float> scale;    ///< multiplies Q·Kᵀ before score_mod; default 1/sqrt(head_dim)
  /// backward only: where to write d(loss)/d(buffer) of each learnable buffer, by name (every
  /// learnable buffer must have one): fp32, contiguous, the shape of the buffer passed in `values`.
  /// Written in full (zero where no score reads an element), deterministically: the same bits on
  /// every run, accumulated without float atomics.
  std::map<std::string, TensorView> buffer_grads;
  /// forward and backward: each sequence's own query and key counts in padded tensors (see
  /// SeqLens for what is read and written). Empty: every sequence has the tensors' lengths. The
  /// backward must get the lengths its forward got.
  SeqLens seq_lens;
  /// backward only: how dQ is summed; unset: FLEXJIT_DETERMINISTIC decides (default fast).
  std::optional<BackwardMode> backward_mode;
};

/// A compiled attention variant. Cheap to copy (copies share kernels). Thread-safe.
class Attention {
 public:
  /// Parses and checks the expressions (throws ExprError) and validates the spec (UsageError).
  /// Kernels are compiled on first use.
  explicit Attention(AttentionSpec spec);

  /// The spec, with head_dim_v resolved.
  const AttentionSpec& spec() const noexcept;
  /// The checked score_mod (identity when none was given).
  const Expr& score_mod() const noexcept;
  /// The checked mask_mod (`true` when none was given).
  const Expr& mask_mod() const noexcept;

  /// Builds the block mask of this variant's mask_mod on the GPU for a problem of `batch` x
  /// `q_heads` heads and the given lengths. Asynchronous on `stream`.
  BlockMask block_mask(int batch, int q_heads, int q_len, int kv_len, Stream stream = nullptr,
                       const ModValues& values = {}) const;
  /// The block mask for a padded batch with per-sequence lengths (the `seq_lens` a forward or
  /// backward call then passes in CallOptions, the same arrays): mask_mod sees each sequence's
  /// q_len / kv_len, and blocks past a sequence's ends are skipped. `q_len` / `kv_len` are the
  /// padded lengths. See BlockMask::build_on_gpu.
  BlockMask block_mask(int batch, int q_heads, int q_len, int kv_len, const SeqLens& seq_lens, Stream stream = nullptr,
                       const ModValues& values = {}) const;

  /// Forward attention on device tensors q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv],
  /// out [B, Hq, Sq, Dv] (any strides with a contiguous last dimension, so [B, S, H, D] storage
  /// works as a strided view), lse [B, Hq, Sq] fp32 (pass a view with data == nullptr to skip it).
  /// `block_mask` lists the blocks to visit: without one, every tile is visited and mask_mod
  /// evaluated everywhere (correct, slower). Asynchronous on `stream`. Throws ShapeError naming the
  /// tensor and dimension that is wrong.
  void forward(const TensorView& q, const TensorView& k, const TensorView& v, const TensorView& out,
               const TensorView& lse, const BlockMask* block_mask, Stream stream = nullptr,
               const CallOptions& options = {}) const;

  /// Backward attention: dq, dk, dv (shapes and dtypes of q, k, v) from the forward's inputs, its
  /// output `out` and log-sum-exp `lse` (ask the forward for lse to keep what the backward needs)
  /// and the output gradient `dout` (shape of out). The derived d(score_mod)/d(score) scales the
  /// score gradient. `options.backward_mode` picks how dQ is summed over the kv tiles: fast (fp32
  /// reductions, run-to-run bits may differ in the last place) or deterministic (the same bits
  /// every run); dk/dv are the same bits every run in both. GQA gradients of the query heads
  /// sharing a kv head are summed into dk/dv. `block_mask` must be the one the forward used (its
  /// q_* tables drive dk/dv). NaN in dout reaches every gradient that reads it and no other batch
  /// or head; dv = Pᵀ·dout multiplies a masked score's exact 0 by it as a matrix product does
  /// (IEEE 0·NaN), so dv rows of keys in a tile the NaN row visits may be NaN too. Asynchronous on
  /// `stream`; every tensor is written in full.
  void backward(const TensorView& q, const TensorView& k, const TensorView& v, const TensorView& out,
                const TensorView& lse, const TensorView& dout, const TensorView& dq, const TensorView& dk,
                const TensorView& dv, const BlockMask* block_mask, Stream stream = nullptr,
                const CallOptions& options = {}) const;

  /// Decoding (and chunked prefill) against a KV cache with per-sequence lengths: q [B, Hq, Sq, D]
  /// (Sq query rows per sequence, the last Sq positions of each sequence under the usual causal
  /// mask `q_idx + kv_len - q_len >= kv_idx`), `kv` contiguous or paged (see KVCache), out
  /// [B, Hq, Sq, Dv], lse [B, Hq, Sq] fp32 (data == nullptr to skip). In the mods, `kv_len` is
  /// sequence b's length and `q_len` is Sq; `kv_idx` is a logical position. The query heads of a
  /// kv head share one pass over its keys (any GQA ratio); the keys are split over the GPU and the
  /// splits merged in a fixed order, so a rerun gives the same bits. The kernel classifies its key
  /// tiles with mask_mod itself (no block mask to build; tiles with nothing kept are never read),
  /// so new lengths never recompile or rebuild anything. Asynchronous on `stream`. Throws
  /// ShapeError naming the tensor that is wrong, and for host-visible lengths or page tables
  /// (KVCache::host_seq_lens / host_page_table) that are out of range. On the device, a bad page-table
  /// entry or length is never read; check_buffer_errors() reports it.
  void decode(const TensorView& q, const KVCache& kv, const TensorView& out, const TensorView& lse,
              Stream stream = nullptr, const CallOptions& options = {}) const;

  /// The configs the latest forward and backward calls used, one entry per kernel family.
  std::vector<KernelChoice> last_choices() const;

  /// Compiles into the disk cache every kernel that forward (and, with `backward`, backward) will
  /// need for calls of this size with a block mask when the variant has a mask_mod: cache warm-up
  /// for a service, and the no-GPU path of `flexjit tune`. Needs no GPU when `arch` is given (""
  /// means the current device's). Kernels compile in parallel on `jobs` threads (0: one per core).
  std::vector<WarmedKernel> warm_up(const ProblemSize& size, bool backward = true, const std::string& arch = "",
                                    int jobs = 0) const;

  /// Opaque implementation.
  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

/// Waits for all work on the current CUDA context, then reports score_mod / mask_mod buffer
/// reads that were out of bounds in any kernel since the last check, on any stream (such reads
/// yield 0 instead of faulting, so without this check they would go unnoticed). Throws ShapeError
/// naming each kernel's variant; clears the record either way. `flexjit run` and the tests call
/// it after every launch; a service can call it whenever it synchronises anyway.
void check_buffer_errors();

/// Like check_buffer_errors(), for the work of one stream only: waits for `stream`, then reports
/// (and clears) the out-of-bounds reads of the calls made on it (forward, backward, block masks;
/// a backward's dQ kernel, which runs on a side stream, counts as the caller's stream). Errors of
/// other streams stay recorded for their own check.
void check_buffer_errors(Stream stream);

}  // namespace flexjit
