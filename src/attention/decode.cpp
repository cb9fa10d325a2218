#include "attention/decode.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../../templates/flexjit_params.cuh"
#include "attention/decode_splits.hpp"
#include "attention/stream_scratch.hpp"
#include "attention/tensor_checks.hpp"
#include "codegen/families/decode.hpp"
#include "codegen/launch.hpp"
#include "codegen/kernel_store.hpp"
#include "codegen/mod_args.hpp"
#include "codegen/tma_maps.hpp"
#include "flexjit/error.hpp"
#include "jit/driver.hpp"

namespace flexjit::attention {

namespace {

std::string extent(int64_t v) { return std::to_string(v); }

// The message is built only when the check fails: these checks run on every decode call, and
// formatting the shapes of valid tensors cost as much as the rest of the host path (tests/host_cost).
template <class Message>
void expect(bool ok, const Message& message) {
  if (!ok) throw ShapeError(message());
}

// A paged pool [num_pages, page_size, Hkv, D]: dtype, contiguous last dimension, 16-byte strides.
void check_pool(const TensorView& t, const char* name, DType dtype) {
  expect(t.data != nullptr, [&] { return std::string(name) + " has a null data pointer"; });
  expect(t.rank() == 4 && t.strides.size() == 4,
         [&] { return std::string(name) + " must have 4 dimensions [num_pages, page_size, Hkv, D], got " + t.describe(); });
  for (int d = 0; d < 4; ++d)
    expect(t.shape[d] >= 1 && t.shape[d] <= INT32_MAX,
           [&] { return std::string(name) + " dimension " + std::to_string(d) + " has extent " + extent(t.shape[d]) +
               "; extents must be between 1 and 2^31-1"; });
  expect(t.dtype == dtype, [&] {
    return std::string(name) + " is " + std::string(dtype_name(t.dtype)) + " but the variant computes in " +
           std::string(dtype_name(dtype));
  });
  expect(t.strides[3] == 1,
         [&] { return std::string(name) + " dimension 3 (D) must be contiguous (stride 1), got " + t.describe(); });
  const int64_t vector = 16 / static_cast<int64_t>(dtype_size(dtype));
  for (int d = 0; d < 3; ++d)
    expect(t.strides[d] % vector == 0, [&] {
      return std::string(name) + " stride of dimension " + std::to_string(d) + " is " + std::to_string(t.strides[d]) +
             " elements; kernels load 16-byte vectors, so strides must be multiples of " + std::to_string(vector) +
             " elements";
    });
  expect(reinterpret_cast<uintptr_t>(t.data) % 16 == 0,
         [&] {
           return std::string(name) +
                  " data pointer is not 16-byte aligned; kernels load 16-byte vectors (allocations from "
                  "cuMemAlloc/cudaMalloc are aligned; a pool sliced from a larger buffer must start on 16 bytes)";
         });
}

void check_int_tensor(const TensorView& t, const char* name, std::initializer_list<int64_t> shape, const char* layout) {
  expect(t.data != nullptr, [&] { return std::string(name) + " has a null data pointer"; });
  expect(t.dtype == DType::i32,
         [&] { return std::string(name) + " must be i32, got " + std::string(dtype_name(t.dtype)); });
  expect(t.rank() == static_cast<int>(shape.size()) && t.strides.size() == shape.size(),
         [&] { return std::string(name) + " must be " + layout + ", got " + t.describe(); });
  int d = 0;
  for (int64_t want : shape) {
    expect(t.shape[d] == want, [&] {
      return std::string(name) + " must be " + layout + ": dimension " + std::to_string(d) + " is " +
             extent(t.shape[d]) + ", expected " + extent(want);
    });
    ++d;
  }
  expect(t.strides.back() == 1,
         [&] { return std::string(name) + " must have a contiguous last dimension, got " + t.describe(); });
  expect(reinterpret_cast<uintptr_t>(t.data) % 4 == 0,
         [&] { return std::string(name) + " data pointer is not 4-byte aligned"; });
}

int ceil_div(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

// The ragged plan's knobs, with the environment's overrides (read once; for measurements).
DecodeSplitTuning split_tuning() {
  static const DecodeSplitTuning tuning = [] {
    DecodeSplitTuning t;
    auto read = [](const char* name, int& value) {
      if (const char* text = std::getenv(name)) {
        char* end = nullptr;
        const long v = std::strtol(text, &end, 10);
        if (end == text || *end != '\0' || v < 1 || v > 64)
          throw UsageError(std::string(name) + "='" + text + "' is not a whole number between 1 and 64");
        value = static_cast<int>(v);
      }
    };
    read("FLEXJIT_DECODE_CTAS_PER_SLOT", t.ctas_per_slot);
    read("FLEXJIT_DECODE_TAIL_DIV", t.tail_div);
    read("FLEXJIT_DECODE_SPLITS", t.forced_splits);
    return t;
  }();
  return tuning;
}

// With a mask_mod, a split walks at least this many kept tiles: its fixed costs (loading Q,
// merging its warps, writing a partial the combine reads back) stay small beside its loads.
constexpr int kMinMaskedTilesPerSplit = 4;

}  // namespace

KernelChoice run_decode(const DecodeVariant& variant, const TensorView& q, const KVCache& kv, const TensorView& out,
                        const TensorView& lse, Stream stream, const CallOptions& options) {
  const AttentionSpec& spec = variant.spec;
  check_operand(q, "q", spec.dtype);
  check_operand(out, "out", spec.dtype);
  check_written(out, "out");
  const int B = static_cast<int>(q.shape[0]), Hq = static_cast<int>(q.shape[1]), Sq = static_cast<int>(q.shape[2]);
  expect(q.shape[3] == spec.head_dim, [&] {
    return "q dimension 3 (D) is " + extent(q.shape[3]) + ", but the variant was compiled for head_dim " +
           std::to_string(spec.head_dim);
  });
  expect(out.shape == std::vector<int64_t>{B, Hq, Sq, spec.head_dim_v}, [&] {
    return "out must be [B, Hq, Sq, Dv] = [" + extent(B) + ", " + extent(Hq) + ", " + extent(Sq) + ", " +
           std::to_string(spec.head_dim_v) + "], got " + out.describe();
  });
  const bool paged = kv.is_paged();
  int Hkv = 0;
  if (paged) {
    check_pool(kv.k, "k_pages", spec.dtype);
    check_pool(kv.v, "v_pages", spec.dtype);
    Hkv = static_cast<int>(kv.k.shape[2]);
    expect(kv.v.shape[0] == kv.k.shape[0] && kv.v.shape[1] == kv.k.shape[1] && kv.v.shape[2] == kv.k.shape[2], [&] {
      return "v_pages " + kv.v.describe() + " must have the pages, page size and heads of k_pages " + kv.k.describe();
    });
    check_int_tensor(kv.page_table, "page_table", {B, kv.page_table.rank() == 2 ? kv.page_table.shape[1] : 0}, "[B, max_pages] int32");
    expect(kv.page_table.shape[1] >= 1, [&] { return "page_table needs at least one column"; });
  } else {
    check_operand(kv.k, "k", spec.dtype);
    check_operand(kv.v, "v", spec.dtype);
    Hkv = static_cast<int>(kv.k.shape[1]);
    expect(kv.k.shape[0] == B && kv.v.shape[0] == B, [&] {
      return "k and v must have the batch of q (" + extent(B) + "), got " + kv.k.describe() + " and " + kv.v.describe();
    });
    expect(kv.v.shape[1] == Hkv && kv.v.shape[2] == kv.k.shape[2],
           [&] { return "v " + kv.v.describe() + " must have the heads and length of k " + kv.k.describe(); });
  }
  const int dim_k = static_cast<int>(kv.k.shape[3]), dim_v = static_cast<int>(kv.v.shape[3]);
  expect(dim_k == spec.head_dim, [&] {
    return std::string(paged ? "k_pages" : "k") + " dimension 3 (D) is " + extent(dim_k) +
           ", but the variant was compiled for head_dim " + std::to_string(spec.head_dim);
  });
  expect(dim_v == spec.head_dim_v, [&] {
    return std::string(paged ? "v_pages" : "v") + " dimension 3 (Dv) is " + extent(dim_v) +
           ", but the variant was compiled for head_dim_v " + std::to_string(spec.head_dim_v);
  });
  expect(Hq % Hkv == 0,
         [&] { return "q has " + extent(Hq) + " heads, not a multiple of the cache's " + extent(Hkv) + " kv heads"; });
  check_int_tensor(kv.seq_lens, "seq_lens", {B}, "[B] int32");
  if (lse.data != nullptr) {
    ProblemShape rows;
    rows.batch = B, rows.q_heads = Hq, rows.q_len = Sq;
    check_row_stats(lse, "lse", rows);
    check_written(lse, "lse");
  }
  const int64_t capacity = kv.capacity();
  expect(capacity <= kMaxSequenceLength,
         [&] {
           return "the cache holds " + extent(capacity) + " keys per sequence (" +
                  (paged ? "max_pages " + extent(kv.page_table.shape[1]) + " x page_size " + extent(kv.k.shape[1])
                         : "S = " + extent(kv.k.shape[2])) +
                  "); decoding takes at most 2^30 = 1073741824";
         });
  const int page_size = kv.page_size();
  const int max_pages = paged ? static_cast<int>(kv.page_table.shape[1]) : 0;
  const int64_t num_pages = paged ? kv.k.shape[0] : 0;
  validate_kv_on_host(kv.host_seq_lens, B, capacity, paged ? kv.host_page_table : nullptr, max_pages, page_size, num_pages);
  if (!kv.host_seq_lens && paged && kv.host_page_table)
    throw UsageError("decode: host_page_table without host_seq_lens cannot be checked (which entries are used "
                     "depends on the lengths); give both");
  const float scale = checked_scale(options.scale, spec.head_dim, "decode");
  const std::set<std::string> mods_read = codegen::names_read({&variant.score, &variant.mask});
  const std::vector<unsigned char> mod_args = codegen::pack_mod_args(spec.declarations, options.values, mods_read, "decode");

  const int group = Hq / Hkv;
  codegen::KernelSpec ks;
  ks.family = codegen::Family::decode;
  ks.dtype = spec.dtype;
  ks.set_head_dims(spec.head_dim, spec.head_dim_v);
  ks.gqa_group = group;
  ks.paged = paged;
  ks.negative_scale = scale < 0.f;  // no fold of the scale into exp2 (KernelSpec::negative_scale)
  ks.declarations = spec.declarations;
  ks.score_mod = variant.score;
  ks.mask_mod = variant.mask;
  // Buffers whose offsets fit 31 bits are read with 32-bit offset math (the decode kernel and its
  // classification kernel alike; KernelSpec::buffer_offsets_32).
  ks.buffer_offsets_32 = codegen::buffer_offsets_fit_32_bits(options.values, mods_read);
  // The default reads the cache through TMA where TMA can describe K and V (aligned bases, 16-byte
  // strides: not a stride of 0); otherwise its default is the cp.async tiles.
  const bool tma_reads_cache = codegen::tma_unsupported_reason(kv.k, "k", codegen::kDecodeTmaReader).empty() &&
                               codegen::tma_unsupported_reason(kv.v, "v", codegen::kDecodeTmaReader).empty();
  if (int64_t(Sq) * group > INT32_MAX)
    throw ShapeError("decode: " + extent(int64_t(Sq) * group) + " query rows per kv head (Sq x Hq/Hkv) are beyond "
                     "2^31-1; split the queries into calls");
  const std::string arch = variant.arch();
  // The SM count of the current context's device, read once per thread and context (a device query
  // per decode step would cost more than the launch).
  static thread_local std::pair<CUcontext, int> sm_cache{nullptr, 0};
  const CUcontext context = jit::ensure_context();
  if (sm_cache.first != context) sm_cache = {context, current_device().sm_count};
  int64_t longest = kv.max_seq_len > 0 ? std::min<int64_t>(kv.max_seq_len, capacity) : capacity;
  if (kv.host_seq_lens != nullptr) {
    longest = 0;
    for (int b = 0; b < B; ++b) longest = std::max<int64_t>(longest, kv.host_seq_lens[b]);
  }
  // Short CTAs in waves: two (sequence, kv head, 16-row tile) units per SM, short sequences.
  const bool short_waves = int64_t(B) * Hkv * ceil_div(int64_t(Sq) * group, 16) >= 2 * int64_t(sm_cache.second) &&
                           longest <= codegen::kDecodeShortKeys;
  codegen::DecodeCacheFacts facts;
  facts.paged = paged;
  facts.tma_reads_cache = tma_reads_cache;
  facts.page_size = kv.page_size();
  facts.short_waves = short_waves;
  facts.longest_keys = std::max<int64_t>(longest, 1);
  const BlockConfig default_config =
      codegen::decode_default_config(codegen::Family::decode, ks.head_dim, ks.head_dim_v, Sq * group, arch, facts);
  ks.config = spec.decode_config.value_or(default_config);
  ks.decode_box_rows = codegen::decode_box_rows(ks.config, paged, page_size);
  // A mask whose tiles interval bounds can classify is classified inside the decode kernel where
  // its list fits in shared memory; others (float math, buffers indexed by kv_idx, caches of more
  // than kDecodeBoundsMaxTiles tiles) by the classification kernel.
  ks.decode_tile_bounds = codegen::decode_classifies_by_bounds(ks, capacity, arch);
  KernelChoice choice;
  choice.family = "decode";
  choice.config = ks.config;
  choice.source = spec.decode_config ? "fixed" : "defaults";
  choice.default_config = default_config;
  codegen::check_shared_memory(ks, arch);
  const auto kernel = codegen::ready_kernel(ks, arch);
  choice.compile_ms = kernel->compiled.compile_ms;
  choice.from_disk_cache = kernel->compiled.from_disk_cache;

  // Splits: from the SM count, the CTAs that fit on an SM and the lengths (when the host knows them).
  const int block_n = ks.config.block_n;
  const int row_tiles = ceil_div(int64_t(Sq) * group, ks.config.block_m);
  if (int64_t(B) * Hkv > INT32_MAX) throw ShapeError("decode: B x Hkv = " + extent(int64_t(B) * Hkv) + " is beyond 2^31-1");
  if (row_tiles > 65535)
    throw ShapeError("decode: " + extent(int64_t(Sq) * group) + " query rows per kv head (Sq x Hq/Hkv) need " +
                     std::to_string(row_tiles) + " row tiles, beyond the grid's 65535; split the queries into calls");
  std::vector<int> seq_tiles;
  if (kv.host_seq_lens != nullptr) {
    seq_tiles.reserve(B);
    for (int b = 0; b < B; ++b) seq_tiles.push_back(ceil_div(kv.host_seq_lens[b], block_n));
  }
  const jit::LoadedKernel fn = kernel->kernel();
  const size_t smem_bytes = ks.shared_memory_bytes();
  fn.set_max_dynamic_smem(smem_bytes);
  int per_sm = 0;
  FLEXJIT_CU(jit::driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn.function, ks.threads(), smem_bytes));
  // A contiguous cache keeps memory busy with one CTA per SM; a paged one needs every slot busy
  // (its rows are 256-byte pieces scattered over the pool: H100, B=16, page 64: one CTA per SM
  // 2.64-2.71 TB/s whatever the stages, two 2.92-2.96).
  const int64_t slots = int64_t(std::max(per_sm, 1)) * sm_cache.second;
  // How long a sequence one CTA streams faster alone than split (no combine): by the rows of its
  // TMA boxes, a page's rows inside a tile (pages of 16 and the cp.async tiles: never).
  const int box_rows = ks.config.tma && paged ? codegen::decode_tile_box_rows(ks) : 0;
  const DecodeSplit split = choose_decode_split(int64_t(B) * Hkv * row_tiles, ceil_div(longest, block_n), seq_tiles,
                                                slots, paged ? slots : sm_cache.second, split_tuning(),
                                                one_split_tile_limit(box_rows));

  FlexjitDecodeParams p;
  std::memset(&p, 0, sizeof(p));
  p.q = q.data;
  p.k = kv.k.data;
  p.v = kv.v.data;
  p.page_table = paged ? static_cast<const int*>(kv.page_table.data) : nullptr;
  p.seq_lens = static_cast<const int*>(kv.seq_lens.data);
  p.o = out.data;
  p.lse = static_cast<float*>(lse.data);
  p.q_stride_b = q.strides[0], p.q_stride_h = q.strides[1], p.q_stride_s = q.strides[2];
  if (paged) {  // [page, slot, head, D]
    p.k_stride_b = kv.k.strides[0], p.k_stride_s = kv.k.strides[1], p.k_stride_h = kv.k.strides[2];
    p.v_stride_b = kv.v.strides[0], p.v_stride_s = kv.v.strides[1], p.v_stride_h = kv.v.strides[2];
    p.page_table_stride_b = kv.page_table.strides[0];
  } else {
    p.k_stride_b = kv.k.strides[0], p.k_stride_h = kv.k.strides[1], p.k_stride_s = kv.k.strides[2];
    p.v_stride_b = kv.v.strides[0], p.v_stride_h = kv.v.strides[1], p.v_stride_s = kv.v.strides[2];
  }
  p.o_stride_b = out.strides[0], p.o_stride_h = out.strides[1], p.o_stride_s = out.strides[2];
  if (lse.data != nullptr) p.lse_stride_b = lse.strides[0], p.lse_stride_h = lse.strides[1], p.lse_stride_s = lse.strides[2];
  p.batch = B;
  p.num_q_heads = Hq;
  p.num_kv_heads = Hkv;
  p.q_len = Sq;
  p.kv_capacity = static_cast<int>(capacity);
  p.page_size = paged ? page_size : 1;
  p.page_shift = -1;
  if (paged && (page_size & (page_size - 1)) == 0)
    for (int s = 0; (1 << s) <= page_size; ++s)
      if ((1 << s) == page_size) p.page_shift = s;
  p.num_pages = static_cast<int>(num_pages);
  p.num_splits = split.num_splits;
  p.tiles_per_split = split.tiles_per_split;
  p.big_splits = split.big_splits;
  p.tail_tiles_per_split = split.tail_tiles_per_split;
  p.scale = scale;
  p.scale_log2 = scale * FLEXJIT_LOG2E;
  p.score_scale = scale * variant.score_prescale;

  // With a mask_mod, the classification kernel lists each unit's kept tiles (room for every tile
  // of the capacity, so no length can overflow a list) and the splits divide the kept tiles; the
  // host's split count from the full lengths is an upper bound on the splits worth having.
  const bool masked = ks.has_mask();
  // Tile bounds: every CTA lists its own share of its unit's tiles in shared memory (no parts).
  const DecodeTileLists lists =
      plan_decode_tile_lists(B, Hkv, row_tiles, ks.mask_mod.uses("h"), capacity, block_n, sm_cache.second,
                             ks.decode_tile_bounds ? 1 : codegen::kDecodeMaxClassifyParts);
  p.list_heads = lists.list_heads;
  p.classify_parts = lists.parts;
  p.tile_list_stride = lists.stride;
  p.min_tiles_per_split = kMinMaskedTilesPerSplit;

  const int64_t rows = int64_t(B) * Hq * Sq;
  const size_t partial_bytes =
      split.num_splits > 1 ? size_t(split.num_splits) * rows * (ks.head_dim_v + 1) * sizeof(float) : 0;
  const size_t list_bytes = masked && !ks.decode_tile_bounds ? lists.bytes : 0;  // tile bounds list in shared memory
  std::optional<StreamScratch> scratch;
  if (partial_bytes + list_bytes > 0) {
    scratch.emplace(partial_bytes + list_bytes, stream);
    unsigned char* base = static_cast<unsigned char*>(scratch->data());
    if (partial_bytes > 0) {
      p.o_partial = reinterpret_cast<float*>(base);
      p.lse_partial = p.o_partial + size_t(split.num_splits) * rows * ks.head_dim_v;
    }
    if (list_bytes > 0) {
      p.tile_count = reinterpret_cast<int*>(base + partial_bytes);
      p.tile_list = p.tile_count + lists.units * lists.parts;
    }
  }
  codegen::CallShape shape;
  shape.batch = B, shape.heads = Hq, shape.kv_heads = Hkv, shape.q_len = Sq, shape.splits = split.num_splits;
  shape.classify_parts = lists.parts;
  // TMA configs: the maps first, so a tensor TMA cannot describe fails before anything runs.
  FlexjitDecodeTma maps;
  if (ks.config.tma) maps = codegen::encode_decode_tma(kv.k, kv.v, ks);
  if (masked && !ks.decode_tile_bounds)
    codegen::ConfiguredKernel(*kernel, shape, 1).launch(stream, {&p, const_cast<unsigned char*>(mod_args.data())});
  if (ks.config.tma) {
    codegen::ConfiguredKernel(*kernel, shape).launch(stream, {&p, const_cast<unsigned char*>(mod_args.data()), &maps});
  } else {
    codegen::ConfiguredKernel(*kernel, shape).launch(stream, {&p, const_cast<unsigned char*>(mod_args.data())});
  }
  if (split.num_splits > 1) {
    codegen::KernelSpec cs;
    cs.family = codegen::Family::decode_combine;
    cs.dtype = spec.dtype;
    cs.set_head_dims(spec.head_dim, spec.head_dim_v);
    cs.config = codegen::decode_default_config(codegen::Family::decode_combine, cs.head_dim, cs.head_dim_v);
    const auto combine = codegen::ready_kernel(cs, arch);
    FlexjitDecodeCombineParams c;
    std::memset(&c, 0, sizeof(c));
    c.o_partial = p.o_partial;
    c.lse_partial = p.lse_partial;
    c.o = out.data;
    c.lse = p.lse;
    c.o_stride_b = p.o_stride_b, c.o_stride_h = p.o_stride_h, c.o_stride_s = p.o_stride_s;
    c.lse_stride_b = p.lse_stride_b, c.lse_stride_h = p.lse_stride_h, c.lse_stride_s = p.lse_stride_s;
    c.batch = B;
    c.num_q_heads = Hq;
    c.q_len = Sq;
    c.num_splits = split.num_splits;
    codegen::ConfiguredKernel(*combine, shape).launch(stream, {&c});
  }
  return choice;
}

}  // namespace flexjit::attention
