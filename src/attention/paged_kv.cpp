#include "flexjit/paged_kv.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>

#include "flexjit/error.hpp"

namespace flexjit {

KVCache KVCache::contiguous(TensorView k, TensorView v, TensorView seq_lens) {
  KVCache c;
  c.k = std::move(k);
  c.v = std::move(v);
  c.seq_lens = std::move(seq_lens);
  return c;
}

KVCache KVCache::paged(TensorView k_pages, TensorView v_pages, TensorView page_table, TensorView seq_lens) {
  KVCache c = contiguous(std::move(k_pages), std::move(v_pages), std::move(seq_lens));
  c.page_table = std::move(page_table);
  return c;
}

int KVCache::page_size() const noexcept {
  return is_paged() && k.rank() == 4 ? static_cast<int>(k.shape[1]) : 0;
}

int64_t KVCache::capacity() const noexcept {
  if (k.rank() != 4) return 0;
  if (!is_paged()) return k.shape[2];
  return page_table.rank() == 2 ? page_table.shape[1] * k.shape[1] : 0;
}

void validate_kv_on_host(const int32_t* seq_lens, int batch, int64_t capacity, const int32_t* page_table,
                         int max_pages, int page_size, int64_t num_pages) {
  if (seq_lens == nullptr) return;
  for (int b = 0; b < batch; ++b) {
    const int64_t len = seq_lens[b];
    // Built only for an error: this loop runs over every sequence of every decode call.
    auto where = [&] { return "seq_lens[" + std::to_string(b) + "] = " + std::to_string(len); };
    if (len < 0) throw ShapeError(where() + " is negative; a sequence holds 0 or more keys");
    if (len > capacity) {
      if (page_table != nullptr)
        throw ShapeError(where() + " is beyond the " + std::to_string(capacity) + " keys its page-table row holds (" +
                         std::to_string(max_pages) + " pages of " + std::to_string(page_size) +
                         "); give the table more columns or shorten the sequence");
      throw ShapeError(where() + " is beyond the cache's " + std::to_string(capacity) +
                       " positions (dimension 2 of k and v)");
    }
    if (page_table == nullptr || page_size < 1) continue;
    const int64_t used = (len + page_size - 1) / page_size;
    for (int64_t j = 0; j < used; ++j) {
      const int64_t page = page_table[int64_t(b) * max_pages + j];
      if (page < 0 || page >= num_pages)
        throw ShapeError("page_table[" + std::to_string(b) + "][" + std::to_string(j) + "] = " + std::to_string(page) +
                         " is outside the page pool (" + std::to_string(num_pages) + " pages, 0 to " +
                         std::to_string(num_pages - 1) + "); sequence " + std::to_string(b) + " uses its first " +
                         std::to_string(used) + " entries");
    }
  }
}

HostPagedKV page_kv_on_host(const std::vector<double>& k, const std::vector<double>& v, int batch, int kv_heads,
                            int kv_len, int head_dim, int head_dim_v, const std::vector<int32_t>& seq_lens,
                            int page_size, uint64_t seed) {
  if (page_size < 1) throw UsageError("page size must be at least 1, got " + std::to_string(page_size));
  if (seq_lens.size() != size_t(batch))
    throw UsageError("seq_lens holds " + std::to_string(seq_lens.size()) + " lengths; the batch has " +
                     std::to_string(batch) + " sequences");
  if (k.size() != size_t(batch) * kv_heads * kv_len * head_dim || v.size() != size_t(batch) * kv_heads * kv_len * head_dim_v)
    throw UsageError("page_kv_on_host: k/v sizes do not match [B, Hkv, S, D]");
  validate_kv_on_host(seq_lens.data(), batch, kv_len);
  HostPagedKV out;
  out.page_size = page_size;
  // 64-bit: a page size near 2^31 must not wrap the rounding up.
  out.max_pages = static_cast<int>((int64_t(kv_len) + page_size - 1) / page_size);
  std::vector<int> pages_of(batch);
  int64_t num_pages = 0;
  for (int b = 0; b < batch; ++b) {
    pages_of[b] = static_cast<int>((int64_t(seq_lens[b]) + page_size - 1) / page_size);
    num_pages += pages_of[b];
  }
  if (num_pages > INT32_MAX)
    throw UsageError("paging this cache takes " + std::to_string(num_pages) + " pages, more than 2^31-1; use larger pages");
  out.num_pages = std::max(static_cast<int>(num_pages), 1);
  std::vector<int32_t> order(out.num_pages);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  out.page_table.assign(size_t(batch) * out.max_pages, 0);
  out.k_pages.assign(size_t(out.num_pages) * page_size * kv_heads * head_dim, 0.0);
  out.v_pages.assign(size_t(out.num_pages) * page_size * kv_heads * head_dim_v, 0.0);
  int next = 0;
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < pages_of[b]; ++j) out.page_table[size_t(b) * out.max_pages + j] = order[next++];
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < seq_lens[b]; ++t) {
      const size_t page = out.page_table[size_t(b) * out.max_pages + t / page_size], slot = t % page_size;
      for (int h = 0; h < kv_heads; ++h) {
        const size_t src = (size_t(b) * kv_heads + h) * kv_len + t;
        const size_t dst = (page * page_size + slot) * kv_heads + h;
        std::copy_n(k.begin() + src * head_dim, head_dim, out.k_pages.begin() + dst * head_dim);
        std::copy_n(v.begin() + src * head_dim_v, head_dim_v, out.v_pages.begin() + dst * head_dim_v);
      }
    }
  return out;
}

std::vector<double> gather_pages_on_host(const std::vector<double>& pages, const std::vector<int32_t>& page_table,
                                         const std::vector<int32_t>& seq_lens, int batch, int kv_heads, int head_dim,
                                         int page_size, int max_pages, int num_pages, int64_t view_len) {
  if (page_size < 1) throw UsageError("a paged cache needs pages of at least 1 token, got a page size of " + std::to_string(page_size));
  if (max_pages < 1) throw UsageError("a page table needs at least one column (entries per sequence), got " + std::to_string(max_pages));
  if (seq_lens.size() != size_t(batch) || page_table.size() != size_t(batch) * max_pages ||
      pages.size() != size_t(num_pages) * page_size * kv_heads * head_dim)
    throw UsageError("gather_pages_on_host: sizes of pages / page_table / seq_lens do not match the shape");
  const int64_t capacity = int64_t(max_pages) * page_size;
  validate_kv_on_host(seq_lens.data(), batch, capacity, page_table.data(), max_pages, page_size, num_pages);
  const int64_t longest = seq_lens.empty() ? 0 : *std::max_element(seq_lens.begin(), seq_lens.end());
  if (view_len < 0) view_len = capacity;
  if (view_len < longest)
    throw UsageError("gather_pages_on_host: view_len " + std::to_string(view_len) + " is shorter than the longest "
                     "sequence (" + std::to_string(longest) + " keys)");
  std::vector<double> out(size_t(batch) * kv_heads * view_len * head_dim, 0.0);
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < seq_lens[b]; ++t) {
      const size_t page = page_table[size_t(b) * max_pages + t / page_size], slot = t % page_size;
      for (int h = 0; h < kv_heads; ++h)
        std::copy_n(pages.begin() + ((page * page_size + slot) * kv_heads + h) * head_dim, head_dim,
                    out.begin() + ((size_t(b) * kv_heads + h) * view_len + t) * head_dim);
    }
  return out;
}

}  // namespace flexjit
