#pragma once
/// \file
/// KVCache: the keys and values a decoding step reads, with each sequence's own length, stored
/// either contiguously ([B, Hkv, S, D]) or in pages of a shared pool
/// ([num_pages, page_size, Hkv, D], the layout vLLM and FlashInfer use) found through a page table.
/// A view: flexjit never allocates, copies or owns the cache. Expressions always see logical
/// positions: `kv_idx` counts the tokens of sequence b and `kv_len` is that sequence's length.

#include <cstdint>
#include <vector>

#include "flexjit/tensor.hpp"

namespace flexjit {

/// A contiguous or paged KV cache with per-sequence lengths, on the device.
struct KVCache {
  /// Contiguous: [B, Hkv, S, D] (any strides with a contiguous last dimension). Paged:
  /// [num_pages, page_size, Hkv, D], pages in any order.
  TensorView k;
  /// As `k`, with the value head dim Dv.
  TensorView v;
  /// [B] int32 on the device: keys of each sequence (0 to S, or to max_pages * page_size). Keys
  /// past a sequence's length are never read; a length of 0 gives out = 0 and lse = -inf.
  TensorView seq_lens;
  /// Paged only: [B, max_pages] int32 on the device, entry j of row b = the pool page that holds
  /// tokens [j * page_size, (j + 1) * page_size) of sequence b. data == nullptr: contiguous cache.
  TensorView page_table;
  /// Optional host copy of seq_lens (B values, the same as on the device). With it, the split of
  /// the keys over the GPU follows the real lengths (ragged batches) and the lengths are checked
  /// on the host with named errors; without it, splits assume `max_seq_len`.
  const int32_t* host_seq_lens = nullptr;
  /// Optional host copy of the page table ([B, max_pages] row-major): checked on the host (every
  /// entry a sequence uses must be inside the pool), naming the sequence and the entry.
  const int32_t* host_page_table = nullptr;
  /// Optional upper bound of the lengths, used to split the keys when host_seq_lens is not given
  /// (0: the cache's capacity). A length above it is still attended to in full (slower, never wrong).
  int max_seq_len = 0;

  /// A contiguous cache: k [B, Hkv, S, D], v [B, Hkv, S, Dv], seq_lens [B] int32.
  static KVCache contiguous(TensorView k, TensorView v, TensorView seq_lens);
  /// A paged cache: k_pages / v_pages [num_pages, page_size, Hkv, D(v)], page_table [B, max_pages]
  /// int32, seq_lens [B] int32.
  static KVCache paged(TensorView k_pages, TensorView v_pages, TensorView page_table, TensorView seq_lens);

  /// True when the cache is paged (page_table.data != nullptr).
  bool is_paged() const noexcept { return page_table.data != nullptr; }
  /// Tokens per page (paged), or 0.
  int page_size() const noexcept;
  /// Keys one sequence can hold: S, or max_pages * page_size.
  int64_t capacity() const noexcept;
};

/// The name the issue and FlashInfer-style code use for the same view.
using PagedKV = KVCache;

/// Checks host-visible lengths (and, for a paged cache, the page-table entries every sequence
/// uses) before a call: throws ShapeError naming the sequence, the value and the limit, e.g.
/// "seq_lens[3] = 5000 is beyond the 4096 keys its page-table row holds (64 pages of 64)".
/// `page_table` may be null (contiguous cache: `capacity` = S); `num_pages` is the pool's size.
void validate_kv_on_host(const int32_t* seq_lens, int batch, int64_t capacity, const int32_t* page_table = nullptr,
                         int max_pages = 0, int page_size = 0, int64_t num_pages = 0);

/// A paged copy of a contiguous cache, built on the host (the CLI and tests use it to run any
/// problem paged): pages of `page_size` tokens in a shuffled order (seeded), sequence b's tokens
/// [0, seq_lens[b]) copied, the rest of each page zero. Values are stored as doubles here;
/// `k` is [B][Hkv][S][D] row-major.
struct HostPagedKV {
  std::vector<double> k_pages;      ///< [num_pages][page_size][Hkv][D]
  std::vector<double> v_pages;      ///< [num_pages][page_size][Hkv][Dv]
  std::vector<int32_t> page_table;  ///< [B][max_pages]; entries past a sequence's pages: page 0
  int num_pages = 0;                ///< pages in the pool
  int max_pages = 0;                ///< entries per page-table row: ceil(S / page_size)
  int page_size = 0;                ///< tokens per page
};

/// Pages a contiguous host cache (see HostPagedKV). Unused table entries point at page 0.
/// Throws UsageError for a page size below 1 or lengths outside [0, S].
HostPagedKV page_kv_on_host(const std::vector<double>& k, const std::vector<double>& v, int batch, int kv_heads,
                            int kv_len, int head_dim, int head_dim_v, const std::vector<int32_t>& seq_lens,
                            int page_size, uint64_t seed);

/// The contiguous [B][Hkv][view_len][D] view of a host paged cache (zeros past each sequence's
/// length), for the CPU reference. `view_len` -1 means the table's capacity, max_pages * page_size;
/// any value from the longest length up keeps every key (a wide table with short sequences then
/// costs no memory). Validates the table first (validate_kv_on_host); throws UsageError for a
/// view_len below the longest length.
std::vector<double> gather_pages_on_host(const std::vector<double>& pages, const std::vector<int32_t>& page_table,
                                         const std::vector<int32_t>& seq_lens, int batch, int kv_heads, int head_dim,
                                         int page_size, int max_pages, int num_pages, int64_t view_len = -1);

}  // namespace flexjit
