// Decoding (Attention::decode) on a GPU against the float64 CPU reference with per-sequence
// lengths: Sq 1, 3, 16, 64; GQA ratios 1, 4, 7, 8; contiguous caches and page sizes 16, 64, 256 with
// shuffled pages; ragged lengths with 0, 1 and lengths that are no multiple of a page or tile;
// mods reading kv_len / q_len, buffers and params; bitwise identical reruns; bad page tables.
// Fresh random inputs (seed printed on failure), outputs poisoned with NaN before every run.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "flexjit/error.hpp"
#include "flexjit/paged_kv.hpp"
#include "support/attention_harness.hpp"
#include "support/random_draws.hpp"
#include "support/row_errors.hpp"
#include "support/scoped.hpp"

namespace flexjit::test {
namespace {

struct DecodeProblem {
  std::string score_mod, mask_mod;
  std::vector<TestBuffer> buffers;
  std::vector<ParamDecl> param_decls;
  std::map<std::string, double> params;
  int B = 3, Hq = 8, Hkv = 2, Sq = 1, S = 1000, D = 128, Dv = 128;
  std::vector<int32_t> lens;  // per sequence, each <= S
  int page_size = 0;          // 0: contiguous cache
  bool host_lens = true;      // give KVCache::host_seq_lens
  int max_seq_len = 0;
  bool reversed_buffers = false;  // pass the buffers as reversed views (upload_buffers): the 64-bit reads
  DType dtype = DType::bf16;
  std::optional<BlockConfig> config;
  // Edits the random inputs (q [B,Hq,Sq,D], k [B,Hkv,S,D], v [B,Hkv,S,Dv]) before they are used.
  std::function<void(std::vector<double>& q, std::vector<double>& k, std::vector<double>& v)> edit_inputs;
};

struct DecodeOutcome {
  double out_error = 0, lse_error = 0;
  uint64_t seed = 0;
  std::vector<double> out, lse, ref_out, ref_lse;
  bool rerun_identical = true;
  std::string config;  // the tiles the call launched
};

DecodeOutcome run_decode_check(const DecodeProblem& p, bool rerun = false, uint64_t seed = fresh_seed()) {
  DecodeOutcome r;
  r.seed = seed;
  std::mt19937_64 rng(seed);
  AttentionSpec spec;
  spec.score_mod = p.score_mod;
  spec.mask_mod = p.mask_mod;
  for (const auto& b : p.buffers) spec.declarations.buffers.push_back(b.decl);
  spec.declarations.params = p.param_decls;
  spec.dtype = p.dtype;
  spec.head_dim = p.D;
  spec.head_dim_v = p.Dv;
  spec.decode_config = p.config;
  const Attention attention(spec);

  auto q = random_values(size_t(p.B) * p.Hq * p.Sq * p.D, rng, p.dtype);
  auto k = random_values(size_t(p.B) * p.Hkv * p.S * p.D, rng, p.dtype);
  auto v = random_values(size_t(p.B) * p.Hkv * p.S * p.Dv, rng, p.dtype);
  if (p.edit_inputs) p.edit_inputs(q, k, v);
  auto dq = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.D, p.dtype, false);
  auto dout = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.Dv, p.dtype, false);
  dq.upload(q);
  DeviceBuffer lse = DeviceBuffer::allocate(size_t(p.B) * p.Hq * p.Sq * 4);
  const TensorView lse_view = TensorView::contiguous(lse.data(), DType::f32, {p.B, p.Hq, p.Sq});
  DeviceBuffer lens = DeviceBuffer::from_host(p.lens);
  const TensorView lens_view = TensorView::contiguous(lens.data(), DType::i32, {p.B});

  DeviceBuffer k_store, v_store, table_store;
  KVCache kv;
  std::vector<int32_t> host_table;
  if (p.page_size > 0) {
    const HostPagedKV paged = page_kv_on_host(k, v, p.B, p.Hkv, p.S, p.D, p.Dv, p.lens, p.page_size, seed);
    const auto kb = to_bytes(paged.k_pages, p.dtype), vb = to_bytes(paged.v_pages, p.dtype);
    k_store = DeviceBuffer::allocate(kb.size());
    k_store.upload(kb.data(), kb.size());
    v_store = DeviceBuffer::allocate(vb.size());
    v_store.upload(vb.data(), vb.size());
    table_store = DeviceBuffer::from_host(paged.page_table);
    host_table = paged.page_table;
    kv = KVCache::paged(
        TensorView::contiguous(k_store.data(), p.dtype, {paged.num_pages, p.page_size, p.Hkv, p.D}),
        TensorView::contiguous(v_store.data(), p.dtype, {paged.num_pages, p.page_size, p.Hkv, p.Dv}),
        TensorView::contiguous(table_store.data(), DType::i32, {p.B, paged.max_pages}), lens_view);
    if (p.host_lens) kv.host_page_table = host_table.data();
  } else {
    auto dk = DeviceOperand::allocate(p.B, p.Hkv, p.S, p.D, p.dtype, false);
    auto dv = DeviceOperand::allocate(p.B, p.Hkv, p.S, p.Dv, p.dtype, false);
    dk.upload(k);
    dv.upload(v);
    kv = KVCache::contiguous(dk.view, dv.view, lens_view);
    k_store = std::move(dk.buffer);
    v_store = std::move(dv.buffer);
  }
  if (p.host_lens) kv.host_seq_lens = p.lens.data();
  kv.max_seq_len = p.max_seq_len;

  std::vector<DeviceBuffer> buffer_storage;
  CallOptions options;
  options.values = upload_buffers(p.buffers, buffer_storage, p.params, p.reversed_buffers);
  auto run_once = [&]() {
    poison_with_nan(dout.buffer, p.dtype);
    poison_with_nan(lse, DType::f32);
    attention.decode(dq.view, kv, dout.view, lse_view, nullptr, options);
    for (const KernelChoice& c : attention.last_choices())
      if (c.family == "decode") r.config = c.config.str();
    synchronize();
    check_buffer_errors();
  };
  run_once();
  const std::vector<unsigned char> out_bits = dout.buffer.to_host<unsigned char>();
  const std::vector<unsigned char> lse_bits = lse.to_host<unsigned char>();
  r.out = dout.download();
  r.lse = from_bytes(lse_bits, DType::f32);
  if (rerun) {
    run_once();
    r.rerun_identical = out_bits == dout.buffer.to_host<unsigned char>() && lse_bits == lse.to_host<unsigned char>();
  }

  std::vector<std::vector<unsigned char>> host_storage;
  const EvalInputs inputs = host_inputs(p.buffers, p.params, host_storage);
  const ReferenceShape shape{p.B, p.Hq, p.Hkv, p.Sq, p.S, p.D, p.Dv};
  ReferenceForward ref = reference_forward_ragged(attention.score_mod(), attention.mask_mod(), inputs, shape, q, k, v,
                                                  p.lens, 1.0 / std::sqrt(double(p.D)));
  r.ref_out = std::move(ref.out);
  r.ref_lse = std::move(ref.lse);
  r.out_error = flexjit::relative_error(r.out, r.ref_out);
  r.lse_error = flexjit::relative_error(r.lse, r.ref_lse);
  return r;
}

void expect_close(const DecodeProblem& p, const std::string& what) {
  const DecodeOutcome r = run_decode_check(p);
  EXPECT_LT(r.out_error, tolerance(p.dtype)) << what << ": output error, seed " << r.seed;
  EXPECT_LT(r.lse_error, tolerance(p.dtype)) << what << ": LSE error, seed " << r.seed;
}

const char* kCausalDecode = "q_idx + kv_len - q_len >= kv_idx";

TEST(DecodeGpu, SingleQueryContiguousRagged) {
  FLEXJIT_REQUIRE_GPU();
  DecodeProblem p;  // ratio 4
  p.lens = {1000, 1, 517};
  expect_close(p, "contiguous Sq=1 ratio 4");
}

TEST(DecodeGpu, RatioSevenPaged16WithAnEmptySequence) {
  FLEXJIT_REQUIRE_GPU();
  DecodeProblem p;
  p.Hq = 14, p.Hkv = 2, p.S = 800;
  p.lens = {777, 0, 300};
  p.page_size = 16;
  const DecodeOutcome r = run_decode_check(p);
  EXPECT_LT(r.out_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_LT(r.lse_error, tolerance(p.dtype)) << "seed " << r.seed;
  // Sequence 1 has no keys: out 0, lse -inf, no NaN.
  for (int h = 0; h < p.Hq; ++h) {
    EXPECT_EQ(r.lse[size_t(1) * p.Hq + h], -std::numeric_limits<double>::infinity()) << "head " << h;
    for (int d = 0; d < p.Dv; ++d) ASSERT_EQ(r.out[(size_t(1) * p.Hq + h) * p.Dv + d], 0.0) << "head " << h;
  }
}

TEST(DecodeGpu, EveryRatioAndQueryCount) {
  FLEXJIT_REQUIRE_GPU();
  for (auto [hq, hkv] : {std::pair<int, int>{4, 4}, {8, 2}, {14, 2}, {16, 2}})
    for (int sq : {1, 3, 16, 64}) {
      DecodeProblem p;
      p.B = 2, p.Hq = hq, p.Hkv = hkv, p.Sq = sq, p.S = 700;
      p.lens = {700, 133};
      p.mask_mod = kCausalDecode;
      p.page_size = sq == 3 ? 64 : 0;
      expect_close(p, "Hq " + std::to_string(hq) + " Hkv " + std::to_string(hkv) + " Sq " + std::to_string(sq));
    }
}

TEST(DecodeGpu, ChunkedPrefillOverPages) {
  FLEXJIT_REQUIRE_GPU();
  DecodeProblem p;  // 200 new tokens of each sequence against its paged cache: 13 row tiles
  p.B = 2, p.Hq = 4, p.Hkv = 2, p.Sq = 200, p.S = 900;
  p.lens = {900, 333};
  p.page_size = 64;
  p.mask_mod = kCausalDecode;
  expect_close(p, "chunked prefill");
}

TEST(DecodeGpu, PageSizesWithShuffledPages) {
  FLEXJIT_REQUIRE_GPU();
  for (int page : {16, 64, 256}) {
    DecodeProblem p;
    p.B = 4, p.Hq = 16, p.Hkv = 2, p.Sq = 1, p.S = 1300;
    p.lens = {1300, 1, 257, 1000};  // none a multiple of a page or a tile except by chance
    p.page_size = page;
    expect_close(p, "page " + std::to_string(page));
  }
}

TEST(DecodeGpu, ModsReadLengthsBuffersAndParams) {
  FLEXJIT_REQUIRE_GPU();
  DecodeProblem p;
  p.B = 3, p.Hq = 8, p.Hkv = 1, p.Sq = 4, p.S = 2100;
  p.lens = {2100, 97, 1500};
  p.page_size = 64;
  p.buffers.push_back(alibi_slopes(p.Hq));
  p.param_decls.push_back(ParamDecl::parse("window:int"));
  p.params["window"] = 300;
  p.score_mod = "score - slope[h] * float(q_idx + kv_len - q_len - kv_idx)";
  p.mask_mod = "q_idx + kv_len - q_len >= kv_idx && q_idx + kv_len - q_len - kv_idx < window";
  expect_close(p, "alibi + sliding window");
  p.params["window"] = 1000;  // a new value: same kernel
  expect_close(p, "window 1000");
  p.score_mod = "30.0 * tanh(score / 30.0)";
  p.mask_mod = "kv_idx < kv_len / 2 || kv_idx >= kv_len - 7";  // a hole in the middle: tiles skipped
  p.buffers.clear();
  p.param_decls.clear();
  p.params.clear();
  expect_close(p, "softcap, prefix + suffix");
}

TEST(DecodeGpu, LongSequencesSplitAndRerunBitwiseIdentical) {
  FLEXJIT_REQUIRE_GPU();
  DecodeProblem p;
  p.B = 2, p.Hq = 8, p.Hkv = 2, p.Sq = 1, p.S = 20000;
  p.lens = {20000, 13001};
  p.page_size = 64;
  const DecodeOutcome r = run_decode_check(p, /*rerun=*/true);
  EXPECT_LT(r.out_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_LT(r.lse_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_TRUE(r.rerun_identical) << "a second run gave other bits";
}

TEST(DecodeGpu, WithoutHostLengthsAndWithAnUnderestimatedBound) {
  FLEXJIT_REQUIRE_GPU();
  DecodeProblem p;
  p.B = 2, p.Hq = 4, p.Hkv = 1, p.S = 9000;
  p.lens = {9000, 4000};
  p.host_lens = false;
  expect_close(p, "no host lengths");
  p.max_seq_len = 1000;  // wrong hint: slower, never wrong
  expect_close(p, "bound too small");
}

TEST(DecodeGpu, HalfPrecisionAndHeadDims) {
  FLEXJIT_REQUIRE_GPU();
  for (int d : {64, 256}) {
    DecodeProblem p;
    p.dtype = DType::f16;
    p.D = p.Dv = d;
    p.B = 2, p.Hq = 6, p.Hkv = 2, p.Sq = 2, p.S = 600;
    p.lens = {600, 31};
    p.page_size = 32;
    p.mask_mod = kCausalDecode;
    expect_close(p, "f16 d" + std::to_string(d));
  }
}

// Head dims that are no multiple of 64 (the tiles pad them with zero columns), contiguous and
// paged caches (cp.async and TMA tiles), one split and many (the combine kernel).
TEST(DecodeGpu, HeadDimsThatAreNoMultipleOf64) {
  FLEXJIT_REQUIRE_GPU();
  const std::pair<int, int> dims[] = {{96, 96}, {80, 80}, {32, 48}, {160, 96}};
  int i = 0;
  for (auto [d, dv] : dims)
    for (int page_size : {0, 32}) {
      DecodeProblem p;
      p.dtype = i % 2 == 0 ? DType::bf16 : DType::f16;
      p.D = d, p.Dv = dv;
      p.B = 3, p.Hq = 8, p.Hkv = 2, p.Sq = i % 3 == 0 ? 3 : 1, p.S = 9000;
      p.lens = {9000, 77, 4099};
      p.page_size = page_size;
      p.mask_mod = kCausalDecode;
      expect_close(p, "d" + std::to_string(d) + "/" + std::to_string(dv) + " page size " + std::to_string(page_size));
      ++i;
    }
}

// The mask classification (a kernel listing each sequence's kept tiles, the splits dividing that
// list): a window that lies wholly past the end of some sequences, on ragged lengths 0, 1, odd
// and long (many splits), GQA 7, pages of 64; entirely masked rows are out 0, lse -inf, no NaN;
// bitwise identical rerun.
TEST(DecodeGpu, WindowOnRaggedLengthsWithWhollyMaskedSequences) {
  FLEXJIT_REQUIRE_GPU();
  DecodeProblem p;
  p.B = 7, p.Hq = 14, p.Hkv = 2, p.Sq = 1, p.S = 20000;
  p.lens = {20000, 900, 1, 0, 5001, 1499, 2533};
  p.page_size = 64;
  p.param_decls.push_back(ParamDecl::parse("first:int"));
  p.param_decls.push_back(ParamDecl::parse("window:int"));
  p.params["first"] = 1500;  // keys before 1500 are never kept: sequences 1, 2, 3 and 5 keep none
  p.params["window"] = 1111;
  p.mask_mod = "kv_idx >= first && kv_len - kv_idx <= window";
  const DecodeOutcome r = run_decode_check(p, /*rerun=*/true);
  EXPECT_LT(r.out_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_LT(r.lse_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_TRUE(r.rerun_identical) << "a second run gave other bits";
  for (int b : {1, 2, 3, 5})
    for (int h = 0; h < p.Hq; ++h) {
      EXPECT_EQ(r.lse[size_t(b) * p.Hq + h], -std::numeric_limits<double>::infinity()) << "b " << b << " h " << h;
      for (int d = 0; d < p.Dv; ++d)
        ASSERT_EQ(r.out[(size_t(b) * p.Hq + h) * p.Dv + d], 0.0) << "b " << b << " h " << h;
    }
  // Sequence 4 keeps keys 3890 to 5000 and sequence 6 keys 1500 to 2532: real rows there.
  EXPECT_TRUE(std::isfinite(r.lse[size_t(4) * p.Hq])) << "seed " << r.seed;
  EXPECT_TRUE(std::isfinite(r.lse[size_t(6) * p.Hq])) << "seed " << r.seed;
}

// Masks the classification evaluates per packed row (reading h, GQA 7, Sq 3: two row tiles whose
// lists are kept per kv head), per query position (reading q_idx, not h) and once per key
// (neither), with a buffer indexed by a buffer's value, on a contiguous cache with lengths that
// are no multiple of a tile, and without host lengths.
TEST(DecodeGpu, MaskClassificationPerRowPerPositionAndPerKey) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  DecodeProblem p;
  p.B = 3, p.Hq = 14, p.Hkv = 2, p.Sq = 3, p.S = 3000;
  p.lens = {3000, 1, 1777};
  p.buffers.push_back(document_ids(p.S, rng));
  TestBuffer keep_doc;  // every third document is dropped entirely
  keep_doc.decl = BufferDecl{"keep_doc", DType::i32, {p.S}};
  for (int i = 0; i < p.S; ++i) keep_doc.values.push_back(i % 3 != 1 ? 1 : 0);
  p.buffers.push_back(keep_doc);
  p.mask_mod = "keep_doc[doc[kv_idx]] == 1";
  expect_close(p, "buffer by buffer, per key");
  p.mask_mod = "keep_doc[doc[kv_idx]] == 1 && q_idx + kv_len - q_len >= kv_idx";
  expect_close(p, "buffer by buffer, per position");
  p.mask_mod =
      "(keep_doc[doc[kv_idx]] == 1 || h % 3 == 0) && q_idx + kv_len - q_len >= kv_idx && kv_idx % 128 < 64 + h";
  expect_close(p, "buffer by buffer, per row");
  p.host_lens = false;
  p.page_size = 16;
  expect_close(p, "per row, paged 16, no host lengths");
}

// Enough lists (72 sequences x 2 kv heads, a mask reading h) that each is classified by a single
// CTA; the tests above have few lists, each split over several CTAs (parts). Ragged lengths
// from 0 to 333, GQA 4, pages of 16.
TEST(DecodeGpu, MaskClassificationWithManyLists) {
  FLEXJIT_REQUIRE_GPU();
  DecodeProblem p;
  p.B = 72, p.Hq = 8, p.Hkv = 2, p.Sq = 2, p.S = 333;
  for (int b = 0; b < p.B; ++b) p.lens.push_back(b * 37 % 334);
  p.page_size = 16;
  p.mask_mod = "q_idx + kv_len - q_len >= kv_idx && (kv_idx + h) % 100 < 70";
  const DecodeOutcome r = run_decode_check(p, /*rerun=*/true);
  EXPECT_LT(r.out_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_LT(r.lse_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_TRUE(r.rerun_identical) << "a second run gave other bits";
}

// Masks whose tiles interval bounds classify (Expr::has_tile_bounds) are classified inside the
// decode kernel; FLEXJIT_DECODE_CLASSIFY=kernel sends them through the classification kernel.
// Both against the reference on masks of every bounds rule: windows and causal over ragged
// lengths (0, 1, odd, long enough for several splits of a unit), GQA 7 with Sq 3 (row tiles
// spanning several query positions and part of a head group), h in the mask, % and /, abs, min,
// max, clamp, where, int(bool), an int buffer read at b and a u8 buffer read at h, paged and
// contiguous, with and without host lengths; bitwise identical reruns; and a cache longer than
// the in-kernel list holds (the classification kernel's then).
TEST(DecodeGpu, TileBoundsAndTheClassificationKernelBothMatchTheReference) {
  FLEXJIT_REQUIRE_GPU();
  TestBuffer limit;  // a per-sequence key limit
  limit.decl = BufferDecl{"limit", DType::i32, {4}};
  limit.values = {15000, 3, 700, 0};
  TestBuffer head_on;
  head_on.decl = BufferDecl{"head_on", DType::u8, {14}};
  for (int h = 0; h < 14; ++h) head_on.values.push_back(h % 4 != 2 ? 1 : 0);
  const char* masks[] = {
      "q_idx + kv_len - q_len >= kv_idx && q_idx + kv_len - q_len - kv_idx < 2500",
      "kv_idx < limit[b] || kv_len - kv_idx <= 100",
      "head_on[h] == 1 && q_idx + kv_len - q_len >= kv_idx",
      "(kv_idx / 256) % 3 != 1 && abs(kv_idx - kv_len / 2) > 300",
      "where(h % 2 == 0, kv_idx < min(kv_len, 4000), kv_idx >= max(0, kv_len - 1500)) && "
      "clamp(kv_idx, 1000, 9000) + int(q_idx > 0) != 1000",
  };
  for (const char* mode : {"bounds", "kernel"}) {
    const ScopedEnv env("FLEXJIT_DECODE_CLASSIFY", mode);
    for (const char* mask : masks) {
      for (int variant = 0; variant < 2; ++variant) {
        DecodeProblem p;
        p.B = 4, p.Hq = 14, p.Hkv = 2, p.Sq = 3, p.S = 17000;
        p.lens = {17000, 1, 9001, 0};
        p.buffers = {limit, head_on};
        p.mask_mod = mask;
        p.page_size = variant == 0 ? 64 : 0;
        p.host_lens = variant == 0;
        const std::string what = std::string(mode) + ", " + mask + (variant == 0 ? ", paged 64" : ", contiguous");
        const DecodeOutcome r = run_decode_check(p, /*rerun=*/true);
        EXPECT_LT(r.out_error, tolerance(p.dtype)) << what << ": seed " << r.seed;
        EXPECT_LT(r.lse_error, tolerance(p.dtype)) << what << ": seed " << r.seed;
        EXPECT_TRUE(r.rerun_identical) << what << ": a second run gave other bits";
      }
    }
  }
  {  // A cache of more tiles than the in-kernel list holds takes the classification kernel.
    DecodeProblem p;
    p.B = 2, p.Hq = 8, p.Hkv = 2, p.Sq = 2, p.S = 70000;
    p.lens = {70000, 5};
    p.mask_mod = "q_idx + kv_len - q_len >= kv_idx && kv_len - kv_idx < 3000";
    const DecodeOutcome r = run_decode_check(p);
    EXPECT_LT(r.out_error, tolerance(p.dtype)) << "a long cache: seed " << r.seed;
    EXPECT_LT(r.lse_error, tolerance(p.dtype)) << "a long cache: seed " << r.seed;
  }
  const ScopedEnv env("FLEXJIT_DECODE_CLASSIFY", "sometimes");
  DecodeProblem p;
  p.lens = {1000, 1, 517};
  p.mask_mod = "kv_idx < 10";
  try {
    run_decode_check(p);
    ADD_FAILURE() << "expected a UsageError for FLEXJIT_DECODE_CLASSIFY=sometimes";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("FLEXJIT_DECODE_CLASSIFY='sometimes' is not a classification; use 'bounds'"),
              std::string::npos)
        << e.what();
  }
}

// A bounded mask whose buffer read is out of bounds at an exact index: the tiles are "cannot
// tell", the kernel evaluates the mask per position there and reports the reads.
TEST(DecodeGpu, TileBoundsLeaveOutOfBoundsReadsToThePerPositionMask) {
  FLEXJIT_REQUIRE_GPU();
  check_buffer_errors();  // start clean
  TestBuffer limit;
  limit.decl = BufferDecl{"limit", DType::i32, {3}};
  limit.values = {500, 3, 700};
  DecodeProblem p;
  p.lens = {1000, 1, 517};
  p.buffers = {limit};
  p.mask_mod = "kv_idx < limit[b + 1]";  // b = 2 reads limit[3]
  try {
    run_decode_check(p);
    ADD_FAILURE() << "expected a ShapeError for the out-of-bounds reads";
  } catch (const ShapeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("indexed a buffer out of bounds"), std::string::npos) << what;
    EXPECT_NE(what.find("mask_mod=kv_idx < limit[b + 1]"), std::string::npos) << what;
    EXPECT_NE(what.find("tile_bounds=1"), std::string::npos) << what;
  }
  check_buffer_errors();
}

// Buffers whose offsets fit 31 bits are read with 32-bit offsets (KernelSpec::buffer_offsets_32),
// other views (here reversed ones, negative strides) with 64-bit ones: the decode kernel and its
// classification kernel alike, paged and contiguous, against the reference; out-of-bounds reads
// are reported through both forms, and the report names the form that ran.
TEST(DecodeGpu, BufferReadsWithThirtyTwoAndSixtyFourBitOffsets) {
  FLEXJIT_REQUIRE_GPU();
  check_buffer_errors();  // start clean
  std::mt19937_64 rng(fresh_seed());
  for (bool reversed : {false, true}) {
    for (int page_size : {0, 16}) {
      const std::string name = std::string(reversed ? "reversed views" : "contiguous") +
                               (page_size ? ", paged 16" : ", contiguous cache");
      DecodeProblem p;
      p.B = 3, p.Hq = 12, p.Hkv = 4, p.Sq = 2, p.S = 1500;
      p.lens = {1500, 2, 1111};  // at least Sq: the mask reads doc at every query's position
      p.page_size = page_size;
      p.reversed_buffers = reversed;
      p.buffers.push_back(document_ids(p.S, rng));
      TestBuffer rel;
      rel.decl = BufferDecl{"rel", DType::f32, {p.Hq, 2 * p.S - 1}};  // score_mod reads masked scores too
      std::normal_distribution<double> normal(0.0, 1.0);
      for (int i = 0; i < p.Hq * (2 * p.S - 1); ++i) rel.values.push_back(normal(rng));
      p.buffers.push_back(rel);
      p.score_mod = "score + rel[h][q_idx + kv_len - q_len - kv_idx + " + std::to_string(p.S - 1) + "]";
      p.mask_mod = "doc[kv_idx] == doc[q_idx + kv_len - q_len] && q_idx + kv_len - q_len >= kv_idx";
      expect_close(p, "documents and a distance bias, " + name);
      TestBuffer keep_doc;  // a read indexed by another read's value
      keep_doc.decl = BufferDecl{"keep_doc", DType::i32, {p.S}};
      for (int i = 0; i < p.S; ++i) keep_doc.values.push_back(i % 3 != 1 ? 1 : 0);
      p.buffers.push_back(keep_doc);
      p.score_mod = "";
      p.mask_mod = "keep_doc[doc[kv_idx]] == 1 && q_idx + kv_len - q_len >= kv_idx";
      expect_close(p, "nested reads, " + name);
      p.mask_mod = "doc[kv_idx + 3] >= 0";  // past the end for a full sequence's last 3 keys
      try {
        run_decode_check(p);
        ADD_FAILURE() << name << ": expected a ShapeError for the out-of-bounds reads";
      } catch (const ShapeError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("indexed a buffer out of bounds"), std::string::npos) << what;
        EXPECT_EQ(what.find("buffer_offsets=32") != std::string::npos, !reversed) << what;
      }
      check_buffer_errors();
    }
  }
}

// TMA configs ('t', sm_90a): tiles wholly before a sequence's end come through the tensor memory
// accelerator (a box per page, or per run of a page, for a paged pool), the tile that crosses the
// end row by row with cp.async. Page sizes 16, 48 (boxes of gcd(48, 128) = 16 rows), 64, 256 and
// a contiguous cache; GQA 1, 4, 7; Sq 1, 3, 16; lengths 0, 1, odd, a multiple of the tile and of
// no page; masks (the classification path), buffers and params; f16 and head dims 64 and 256;
// the same answer as the cp.async config, and bitwise identical reruns.
bool decode_on_hopper() { return no_gpu_reason().empty() && current_device().default_arch() == "sm_90a"; }
#define FLEXJIT_REQUIRE_HOPPER_DECODE()                                                                   \
  FLEXJIT_REQUIRE_GPU();                                                                                  \
  if (!decode_on_hopper()) GTEST_SKIP() << "TMA decode configs need an sm_90a GPU, this is " << current_device().name

TEST(DecodeGpu, TmaPagesOfEverySizeAndContiguous) {
  FLEXJIT_REQUIRE_HOPPER_DECODE();
  for (int page : {8, 16, 48, 64, 256, 0}) {
    DecodeProblem p;
    p.B = 5, p.Hq = 16, p.Hkv = 4, p.Sq = 1, p.S = 1500;
    p.lens = {1500, 1, 0, 1024, 1153};  // the longest is no multiple of a page or a tile; 1024 is of every tile
    p.page_size = page;
    p.config = BlockConfig::parse("m16n128w8s3t");
    const DecodeOutcome r = run_decode_check(p, /*rerun=*/true);
    const std::string what = page > 0 ? "TMA page " + std::to_string(page) : "TMA contiguous";
    EXPECT_LT(r.out_error, tolerance(p.dtype)) << what << ": output, seed " << r.seed;
    EXPECT_LT(r.lse_error, tolerance(p.dtype)) << what << ": LSE, seed " << r.seed;
    EXPECT_TRUE(r.rerun_identical) << what << ": a second run gave other bits";
    for (int h = 0; h < p.Hq; ++h) {  // sequence 2 is empty: out 0, lse -inf
      EXPECT_EQ(r.lse[size_t(2) * p.Hq + h], -std::numeric_limits<double>::infinity()) << what << " head " << h;
      for (int d = 0; d < p.Dv; ++d) ASSERT_EQ(r.out[(size_t(2) * p.Hq + h) * p.Dv + d], 0.0) << what << " head " << h;
    }
    // The same inputs through cp.async: the same tiles, the same order, so the same bits.
    DecodeProblem plain = p;
    plain.config = BlockConfig::parse("m16n128w8s3");
    const DecodeOutcome q = run_decode_check(plain, false, r.seed);
    EXPECT_EQ(q.out, r.out) << what << ": TMA and cp.async configs disagree, seed " << r.seed;
  }
}

TEST(DecodeGpu, TmaRatiosQueryCountsModsAndLongSplits) {
  FLEXJIT_REQUIRE_HOPPER_DECODE();
  for (auto [hq, hkv, sq] : {std::tuple<int, int, int>{4, 4, 1}, {14, 2, 3}, {8, 2, 16}}) {
    DecodeProblem p;
    p.B = 2, p.Hq = hq, p.Hkv = hkv, p.Sq = sq, p.S = 2000;
    p.lens = {2000, 383};
    p.page_size = 64;
    p.mask_mod = kCausalDecode;
    p.config = BlockConfig::parse(sq == 16 ? "m32n64w4s3t" : "m16n64w4s4t");
    expect_close(p, "TMA Hq " + std::to_string(hq) + " Hkv " + std::to_string(hkv) + " Sq " + std::to_string(sq));
  }
  DecodeProblem p;  // ALiBi and a window from a param, GQA 8, pages of 32, many splits
  p.B = 3, p.Hq = 8, p.Hkv = 1, p.Sq = 1, p.S = 20000;
  p.lens = {20000, 97, 13001};
  p.page_size = 32;
  p.buffers.push_back(alibi_slopes(p.Hq));
  p.param_decls.push_back(ParamDecl::parse("window:int"));
  p.params["window"] = 4100;
  p.score_mod = "score - slope[h] * float(q_idx + kv_len - q_len - kv_idx)";
  p.mask_mod = "q_idx + kv_len - q_len >= kv_idx && q_idx + kv_len - q_len - kv_idx < window";
  p.config = BlockConfig::parse("m16n128w8s3t");
  const DecodeOutcome r = run_decode_check(p, /*rerun=*/true);
  EXPECT_LT(r.out_error, tolerance(p.dtype)) << "TMA alibi window, seed " << r.seed;
  EXPECT_LT(r.lse_error, tolerance(p.dtype)) << "TMA alibi window, seed " << r.seed;
  EXPECT_TRUE(r.rerun_identical) << "a second run gave other bits";
  p.mask_mod = "";  // no mask: the splits of a long sequence, no classification
  p.buffers.clear();
  p.param_decls.clear();
  p.params.clear();
  p.score_mod = "";
  expect_close(p, "TMA unmasked long sequences");
}

TEST(DecodeGpu, TmaHalfPrecisionHeadDimsAndUnequalDv) {
  FLEXJIT_REQUIRE_HOPPER_DECODE();
  for (auto [d, dv, config] : {std::tuple<int, int, const char*>{64, 64, "m16n128w4s3t"}, {256, 256, "m16n64w4s3t"},
                               {64, 128, "m16n64w4s3t"}}) {
    DecodeProblem p;
    p.dtype = DType::f16;
    p.D = d, p.Dv = dv;
    p.B = 2, p.Hq = 6, p.Hkv = 2, p.Sq = 2, p.S = 900;
    p.lens = {900, 31};
    p.page_size = 128;
    p.mask_mod = kCausalDecode;
    p.config = BlockConfig::parse(config);
    expect_close(p, std::string("TMA f16 ") + config + " d" + std::to_string(d) + "/" + std::to_string(dv));
  }
}

// Pages that cut the key tiles, read one TMA copy per page (a 5-D box of every 64-column slab)
// where a tensor's rows are whole slabs, one per page and slab where they are not (72 and 96
// columns): pages of 8, 16, 32 and 64 in 64- and 128-key tiles, K and V of either kind, ragged
// lengths that end inside a page, GQA 5, one and two queries, short and long sequences.
TEST(DecodeGpu, TmaBoxesOfPageRowsWithWholeAndPartSlabs) {
  FLEXJIT_REQUIRE_HOPPER_DECODE();
  int i = 0;
  for (auto [d, dv] : {std::pair<int, int>{128, 128}, {128, 72}, {96, 128}})
    for (int page : {8, 16, 32, 64}) {
      DecodeProblem p;
      p.D = d, p.Dv = dv;
      const bool long_keys = i % 3 == 2;
      p.B = 3, p.Hq = 10, p.Hkv = 2, p.Sq = i % 2 == 0 ? 1 : 2, p.S = long_keys ? 20000 : 700;
      p.lens = long_keys ? std::vector<int32_t>{20000, 4099, 12345} : std::vector<int32_t>{700, 65, 333};
      p.page_size = page;
      p.mask_mod = i % 3 == 0 ? kCausalDecode : "";
      p.config = BlockConfig::parse(i % 2 == 0 ? "m16n64w4s3t" : "m16n128w8s3t");
      expect_close(p, "TMA d" + std::to_string(d) + "/" + std::to_string(dv) + " pages of " + std::to_string(page) +
                          " " + p.config->str());
      ++i;
    }
}

// The Hopper default for a paged d128 cache reads it through TMA when the page size makes whole
// swizzle atoms, and by cp.async when it does not.
TEST(DecodeGpu, HopperPagedDefaultReadsThroughTmaWherePagesAllow) {
  FLEXJIT_REQUIRE_HOPPER_DECODE();
  for (auto [page, expected] : {std::pair<int, const char*>{64, "m16n128w4s3t"}, {40, "m16n128w4s3t"}, {20, "m16n128w8s3"}}) {
    DecodeProblem p;
    p.B = 3, p.Hq = 12, p.Hkv = 3, p.Sq = 1, p.S = 3001;
    p.lens = {3001, 129, 2048};
    p.page_size = page;
    p.mask_mod = page == 40 ? kCausalDecode : "";
    const DecodeOutcome r = run_decode_check(p);
    EXPECT_EQ(r.config, expected) << "page " << page;
    EXPECT_LT(r.out_error, tolerance(p.dtype)) << "page " << page << ": output, seed " << r.seed;
    EXPECT_LT(r.lse_error, tolerance(p.dtype)) << "page " << page << ": LSE, seed " << r.seed;
  }
  // Short sequences in waves: at least two (sequence, kv head) units per SM, none longer than 2048
  // keys, take 64-key TMA tiles (two CTAs per SM); one sequence past 2048 keys keeps 128.
  const int sms = current_device().sm_count;
  for (int longest : {2048, 2049}) {
    DecodeProblem p;
    p.Hq = 8, p.Hkv = 2, p.S = longest;
    p.B = sms + 1;  // 2 x SMs + 2 units
    p.lens.clear();
    for (int b = 0; b < p.B; ++b) p.lens.push_back(b == 1 ? longest : 1 + (b * 389) % 1500);
    p.page_size = 16;
    const DecodeOutcome r = run_decode_check(p);
    EXPECT_EQ(r.config, longest <= 2048 ? "m16n64w4s3t" : "m16n128w4s3t") << "longest " << longest;
    EXPECT_LT(r.out_error, tolerance(p.dtype)) << "longest " << longest << ": output, seed " << r.seed;
    EXPECT_LT(r.lse_error, tolerance(p.dtype)) << "longest " << longest << ": LSE, seed " << r.seed;
  }
}

// Pages of 64 and 32 through TMA, 64 (sequence, kv head) units on a GPU of about 132 SMs: the
// split rule keeps one split (no combine) for equal lengths of up to 32 tiles of boxes of 64 rows
// and up to 16 tiles of boxes of 32 (attention::one_split_tile_limit): 2001 keys (16 tiles) in one
// split with pages of 64 or 32 and two with pages of 16, 1001 keys (8 tiles) in one with pages of
// 32, 4001 keys (32 tiles) in two. Odd lengths, pages shuffled by the harness, and a second run
// with the same bits.
TEST(DecodeGpu, TmaPagesOf64KeepOneSplitForHalfTheSlots) {
  FLEXJIT_REQUIRE_HOPPER_DECODE();
  for (auto [page, keys] :
       {std::pair<int, int>{64, 2001}, {16, 2001}, {32, 2001}, {32, 1001}, {32, 4001}}) {
    const std::string what = "page " + std::to_string(page) + ", " + std::to_string(keys) + " keys";
    DecodeProblem p;
    p.B = 8, p.Hq = 32, p.Hkv = 8, p.Sq = 1, p.S = keys;
    p.lens.assign(p.B, keys);
    p.page_size = page;
    const DecodeOutcome r = run_decode_check(p, /*rerun=*/true);
    EXPECT_EQ(r.config, "m16n128w4s3t") << what;
    EXPECT_LT(r.out_error, tolerance(p.dtype)) << what << ": output, seed " << r.seed;
    EXPECT_LT(r.lse_error, tolerance(p.dtype)) << what << ": LSE, seed " << r.seed;
    EXPECT_TRUE(r.rerun_identical) << what;
  }
}

// The Hopper default for a contiguous d128 cache whose longest sequence passes 16384 keys reads it
// through TMA at the cp.async tiles' shape (64 keys, 4 warps): GQA 4 and 7, Sq 1 and 3, odd
// lengths, an empty sequence, a mask; the same bits as those tiles by cp.async (same tiles, same
// order) and on a second run. Shorter caches take the cp.async tiles.
TEST(DecodeGpu, HopperContiguousDefaultReadsThroughTma) {
  FLEXJIT_REQUIRE_HOPPER_DECODE();
  for (int longest : {16384, 16385}) {
    DecodeProblem p;
    p.B = 2, p.Hq = 8, p.Hkv = 2, p.S = longest;
    p.lens = {longest, 1000};
    const DecodeOutcome r = run_decode_check(p);
    EXPECT_EQ(r.config, longest > 16384 ? "m16n64w4s3t" : "m16n64w4s3") << "longest " << longest;
    EXPECT_LT(r.out_error, tolerance(p.dtype)) << "longest " << longest << ": output, seed " << r.seed;
  }
  for (auto [hq, hkv, sq, mask] : {std::tuple<int, int, int, const char*>{16, 4, 1, ""}, {28, 4, 1, ""},
                                   {12, 4, 3, kCausalDecode}}) {
    DecodeProblem p;
    p.B = 3, p.Hq = hq, p.Hkv = hkv, p.Sq = sq, p.S = 16411;
    p.lens = {16411, 0, 777};
    p.mask_mod = mask;
    const std::string what = "Hq " + std::to_string(hq) + " Hkv " + std::to_string(hkv) + " Sq " + std::to_string(sq);
    const DecodeOutcome r = run_decode_check(p, /*rerun=*/true);
    EXPECT_EQ(r.config, "m16n64w4s3t") << what;
    EXPECT_LT(r.out_error, tolerance(p.dtype)) << what << ": output, seed " << r.seed;
    EXPECT_LT(r.lse_error, tolerance(p.dtype)) << what << ": LSE, seed " << r.seed;
    EXPECT_TRUE(r.rerun_identical) << what << ": a second run gave other bits";
    DecodeProblem plain = p;
    plain.config = BlockConfig::parse("m16n64w4s3");
    const DecodeOutcome q = run_decode_check(plain, false, r.seed);
    EXPECT_EQ(q.out, r.out) << what << ": TMA and cp.async tiles disagree, seed " << r.seed;
    EXPECT_EQ(q.lse, r.lse) << what << ": TMA and cp.async tiles disagree on the LSE, seed " << r.seed;
  }
}

// Steps that read each other's outputs: step i's q is step i-1's out, four steps on one stream.
// On sm_90+ the decode, classification and combine kernels are launched as programmatic
// dependents (their CTAs start while the previous kernel runs) and must wait for that kernel
// before reading q. Cases: one split (the decode kernel writes out), many splits (the combine
// writes it), and a mask the classification kernel lists. Run three ways: one step at a time with
// the stream synchronised between steps (each step checked against the float64 reference from the
// previous step's output), the four steps back to back without synchronisation, and the four
// captured in a CUDA graph and replayed; the last two give the first one's bits.
TEST(DecodeGpu, StepsThatReadEachOthersOutputsOnOneStreamAndInAGraph) {
  FLEXJIT_REQUIRE_GPU();
  const jit::Driver& d = jit::driver();
  if (!GraphReplay::available()) GTEST_SKIP() << "this driver has no stream capture entry points";
  const OwnedStream owned;
  const CUstream stream = owned.stream;
  constexpr int kSteps = 4;
  struct Case {
    const char* what;
    std::vector<int32_t> lens;
    const char* mask;
  };
  for (const Case& c : {Case{"one split", {64, 37}, ""}, Case{"many splits", {3001, 1700}, ""},
                        Case{"classified mask", {2900, 643}, "kv_idx % 3 != 1 && q_idx + kv_len - q_len >= kv_idx"}}) {
    const uint64_t seed = fresh_seed();
    std::mt19937_64 rng(seed);
    const int B = 2, Hq = 8, Hkv = 2, Sq = 1, D = 128, S = c.lens[0];
    AttentionSpec spec;
    spec.mask_mod = c.mask;
    spec.head_dim = spec.head_dim_v = D;
    const Attention attention(spec);
    const auto q = random_values(size_t(B) * Hq * Sq * D, rng, spec.dtype);
    const auto k = random_values(size_t(B) * Hkv * S * D, rng, spec.dtype);
    const auto v = random_values(size_t(B) * Hkv * S * D, rng, spec.dtype);
    auto dk = DeviceOperand::allocate(B, Hkv, S, D, spec.dtype, false);
    auto dv = DeviceOperand::allocate(B, Hkv, S, D, spec.dtype, false);
    dk.upload(k);
    dv.upload(v);
    DeviceBuffer lens = DeviceBuffer::from_host(c.lens);
    KVCache kv = KVCache::contiguous(dk.view, dv.view, TensorView::contiguous(lens.data(), DType::i32, {B}));
    kv.host_seq_lens = c.lens.data();
    std::vector<DeviceOperand> ops;  // ops[0] = q, ops[i] = step i's out
    for (int i = 0; i <= kSteps; ++i) ops.push_back(DeviceOperand::allocate(B, Hq, Sq, D, spec.dtype, false));
    ops[0].upload(q);
    const TensorView no_lse;
    auto poison_outputs = [&] {
      for (int i = 1; i <= kSteps; ++i) poison_with_nan(ops[i].buffer, spec.dtype);
    };
    auto run_steps = [&](bool synchronise_each) {
      for (int i = 1; i <= kSteps; ++i) {
        attention.decode(ops[i - 1].view, kv, ops[i].view, no_lse, stream);
        if (synchronise_each) FLEXJIT_CU(d.cuStreamSynchronize(stream));
      }
    };
    auto output_bits = [&] {
      std::vector<std::vector<unsigned char>> bits;
      for (int i = 1; i <= kSteps; ++i) bits.push_back(ops[i].buffer.to_host<unsigned char>());
      return bits;
    };
    const std::string what = std::string(c.what) + ", seed " + std::to_string(seed);

    poison_outputs();
    run_steps(true);
    check_buffer_errors(stream);
    const auto stepwise = output_bits();
    std::vector<std::vector<unsigned char>> storage;
    const EvalInputs inputs = host_inputs({}, {}, storage);
    const ReferenceShape shape{B, Hq, Hkv, Sq, S, D, D};
    for (int i = 1; i <= kSteps; ++i) {
      const ReferenceForward ref = reference_forward_ragged(attention.score_mod(), attention.mask_mod(), inputs, shape,
                                                            ops[i - 1].download(), k, v, c.lens, 1.0 / std::sqrt(double(D)));
      EXPECT_LT(flexjit::relative_error(ops[i].download(), ref.out), tolerance(spec.dtype)) << what << ", step " << i;
    }

    poison_outputs();
    run_steps(false);
    check_buffer_errors(stream);
    EXPECT_TRUE(output_bits() == stepwise) << what << ": back-to-back steps gave other bits than synchronised ones";

    poison_outputs();
    GraphReplay graph(stream);
    graph.replay([&] { run_steps(false); });
    check_buffer_errors(stream);
    EXPECT_TRUE(output_bits() == stepwise) << what << ": the replayed graph gave other bits than synchronised steps";
  }
}

// NaN in, NaN out: a NaN in a query row makes that row's output and LSE NaN; a NaN in a kept key
// of a sequence makes every row of that sequence and kv head NaN; other rows stay finite and right.
// Contiguous and paged (on Hopper: the TMA default), with and without a mask_mod (the NaN key is
// then at a kept position).
TEST(DecodeGpu, NanInputsGiveNanOutputsOnlyWhereTheyAreRead) {
  FLEXJIT_REQUIRE_GPU();
  for (int page : {0, 64})
    for (const char* mask : {"", kCausalDecode}) {
      DecodeProblem p;
      p.B = 2, p.Hq = 8, p.Hkv = 2, p.Sq = 2, p.S = 700;
      p.lens = {700, 333};
      p.page_size = page;
      p.mask_mod = mask;
      const double nan = std::numeric_limits<double>::quiet_NaN();
      p.edit_inputs = [&](std::vector<double>& q, std::vector<double>&, std::vector<double>&) {
        q[((size_t(0) * p.Hq + 5) * p.Sq + 1) * p.D + 17] = nan;  // b 0, head 5, query 1
      };
      auto edit_k = p.edit_inputs;
      p.edit_inputs = [&, edit_k](std::vector<double>& q, std::vector<double>& k, std::vector<double>& v) {
        edit_k(q, k, v);
        k[((size_t(1) * p.Hkv + 1) * p.S + 100) * p.D + 3] = nan;  // b 1, kv head 1 (heads 4-7), key 100
      };
      const DecodeOutcome r = run_decode_check(p);
      const std::string what = std::string(page ? "paged" : "contiguous") + (*mask ? " masked" : "");
      std::vector<double> out, ref, lse, ref_lse;
      for (int b = 0; b < p.B; ++b)
        for (int h = 0; h < p.Hq; ++h)
          for (int qi = 0; qi < p.Sq; ++qi) {
            const size_t row = (size_t(b) * p.Hq + h) * p.Sq + qi;
            const bool expect_nan = (b == 0 && h == 5 && qi == 1) || (b == 1 && h >= 4);
            EXPECT_EQ(std::isnan(r.lse[row]), expect_nan) << what << " b " << b << " h " << h << " q " << qi;
            for (int d = 0; d < p.Dv; ++d) {
              const double o = r.out[row * p.Dv + d];
              if (expect_nan) {
                ASSERT_TRUE(std::isnan(o)) << what << " b " << b << " h " << h << " q " << qi << " d " << d;
              } else {
                ASSERT_FALSE(std::isnan(o)) << what << " b " << b << " h " << h << " q " << qi << " d " << d;
                out.push_back(o);
                ref.push_back(r.ref_out[row * p.Dv + d]);
              }
            }
            if (!expect_nan) lse.push_back(r.lse[row]), ref_lse.push_back(r.ref_lse[row]);
          }
      EXPECT_LT(flexjit::relative_error(out, ref), tolerance(p.dtype)) << what << ": seed " << r.seed;
      EXPECT_LT(flexjit::relative_error(lse, ref_lse), tolerance(p.dtype)) << what << ": seed " << r.seed;
    }
}

// A page size whose boxes would not be whole swizzle atoms is a named error before any launch.
TEST(DecodeGpu, TmaPageSizeThatIsNoMultipleOfEight) {
  FLEXJIT_REQUIRE_HOPPER_DECODE();
  DecodeProblem p;
  p.B = 1, p.Hq = 2, p.Hkv = 1, p.S = 100;
  p.lens = {100};
  p.page_size = 20;
  p.config = BlockConfig::parse("m16n64w4s3t");
  try {
    run_decode_check(p);
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "decode config m16n64w4s3t reads the pages through TMA in boxes of gcd(page size, block_n) = gcd(20, "
                 "64) = 4 rows, which must be a multiple of 8 (the 128-byte swizzle's 8-row atom) — use a page size "
                 "that is a multiple of 8 or use a decode config without the trailing 't'");
  }
}

TEST(DecodeGpu, BadPageTableIsNeverReadAndIsReported) {
  FLEXJIT_REQUIRE_GPU();
  const int B = 2, Hq = 4, Hkv = 1, D = 128, page = 16, pages = 4, max_pages = 4;
  AttentionSpec spec;
  const Attention attention(spec);
  std::mt19937_64 rng(fresh_seed());
  auto dq = DeviceOperand::allocate(B, Hq, 1, D, DType::bf16, false);
  dq.upload(random_values(size_t(B) * Hq * D, rng, DType::bf16));
  auto dout = DeviceOperand::allocate(B, Hq, 1, D, DType::bf16, false);
  const auto pool = to_bytes(random_values(size_t(pages) * page * Hkv * D, rng, DType::bf16), DType::bf16);
  DeviceBuffer k = DeviceBuffer::allocate(pool.size()), v = DeviceBuffer::allocate(pool.size());
  k.upload(pool.data(), pool.size());
  v.upload(pool.data(), pool.size());
  // Entries far outside the pool (either sign) and a length beyond the table's 64 keys.
  const std::vector<int32_t> table = {0, 1 << 28, -5, 2, 3, 1, 0, 2};
  const std::vector<int32_t> lens = {50, 1000};
  DeviceBuffer table_dev = DeviceBuffer::from_host(table), lens_dev = DeviceBuffer::from_host(lens);
  KVCache kv = KVCache::paged(TensorView::contiguous(k.data(), DType::bf16, {pages, page, Hkv, D}),
                              TensorView::contiguous(v.data(), DType::bf16, {pages, page, Hkv, D}),
                              TensorView::contiguous(table_dev.data(), DType::i32, {B, max_pages}),
                              TensorView::contiguous(lens_dev.data(), DType::i32, {B}));
  // Through cp.async and, on Hopper, through TMA (16-key tiles: sequence 0's tiles 0 to 2, two of
  // them on bad pages, are boxes of a whole page; the tile crossing its end is read row by row).
  std::vector<Attention> readers;
  readers.push_back(attention);
  if (decode_on_hopper()) {
    AttentionSpec tma_spec;
    tma_spec.decode_config = BlockConfig::parse("m16n16w1s3t");
    readers.emplace_back(tma_spec);
  }
  for (const Attention& reader : readers) {
    poison_with_nan(dout.buffer, DType::bf16);
    reader.decode(dq.view, kv, dout.view, TensorView{}, nullptr);
    synchronize();  // a wild read would fault here
    try {
      check_buffer_errors();
      ADD_FAILURE() << "the bad page table was not reported";
    } catch (const ShapeError& e) {
      EXPECT_NE(std::string(e.what()).find("decode met a page-table entry outside the page pool"), std::string::npos)
          << e.what();
    }
  }
  // The same table visible on the host: a named error before any launch.
  kv.host_seq_lens = lens.data();
  kv.host_page_table = table.data();
  try {
    attention.decode(dq.view, kv, dout.view, TensorView{}, nullptr);
    ADD_FAILURE() << "no error for a bad host-visible table";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(),
                 "page_table[0][1] = 268435456 is outside the page pool (4 pages, 0 to 3); sequence 0 uses its "
                 "first 4 entries");
  }
  // The context is still usable: a good call afterwards is right.
  DecodeProblem p;
  p.lens = {300, 2, 999};
  p.page_size = 16;
  expect_close(p, "after a bad table");
}

// Decoding problems drawn at random from one seed (FLEXJIT_TEST_SEED repeats a run,
// FLEXJIT_RANDOM_PROBLEMS sets how many; default 8): 1-6 sequences of ragged lengths up to ~5000
// with empty, single-key and full ones, 1-4 kv heads with 1-16 query heads each, 1-16 queries,
// contiguous caches and pages of 1-256 rows (shuffled), head dims 64-256 with Dv != D, both
// dtypes, mods reading buffers at other buffers' values; each output row held to its own bound.
TEST(DecodeGpu, RandomProblems) {
  FLEXJIT_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (int i = 0, count = random_problem_count(8); i < count; ++i) {
    DecodeProblem p;
    p.B = uniform(rng, 1, 6);
    p.Hkv = uniform(rng, 1, 4);
    p.Hq = p.Hkv * pick<int>(rng, {1, 2, 3, 4, 5, 6, 7, 8, 16});
    p.Sq = pick<int>(rng, {1, 1, 1, 2, 3, 4, 7, 16});
    p.S = chance(rng, 0.5) ? uniform(rng, 1, 600) : uniform(rng, 601, 5000);
    p.D = pick<int>(rng, {64, 128, 128, 256});
    p.Dv = chance(rng, 0.2) ? pick<int>(rng, {64, 128, 256}) : p.D;
    p.dtype = chance(rng, 0.3) ? DType::f16 : DType::bf16;
    p.page_size = chance(rng, 0.3) ? 0 : pick<int>(rng, {1, 8, 16, 20, 32, 40, 64, 128, 256});
    p.host_lens = chance(rng, 0.7);
    p.lens.clear();
    for (int b = 0; b < p.B; ++b) {
      const int kind = uniform(rng, 0, 5);
      p.lens.push_back(kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? p.S : uniform(rng, 0, p.S));
    }
    std::string mods;
    switch (uniform(rng, 0, 7)) {
      case 0: mods = "noop"; break;
      case 1: p.mask_mod = kCausalDecode; mods = "causal"; break;
      case 2:
        p.param_decls.push_back(ParamDecl::parse("window:int"));
        p.params["window"] = uniform(rng, 0, 700);
        p.mask_mod = std::string(kCausalDecode) + " && q_idx + kv_len - q_len - kv_idx <= window";
        mods = "sliding window " + std::to_string(static_cast<int>(p.params["window"]));
        break;
      case 3:
        p.buffers.push_back(alibi_slopes(p.Hq));
        p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
        p.mask_mod = kCausalDecode;
        mods = "ALiBi causal";
        break;
      case 4: p.score_mod = "30.0 * tanh(score / 30.0)"; mods = "soft-capping"; break;
      case 5: {
        // Each sequence sees its keys from start[b] on (past its length: no keys at all).
        TestBuffer start{BufferDecl{"start", DType::i32, {p.B}}, {}};
        for (int b = 0; b < p.B; ++b) start.values.push_back(uniform(rng, 0, p.S));
        p.buffers.push_back(start);
        p.mask_mod = "kv_idx >= start[b]";
        mods = "keys from start[b]";
        break;
      }
      case 6: {
        // A bias per segment of the cache, read at the key's segment id.
        p.buffers.push_back(document_ids(p.S, rng, "seg"));
        p.buffers.push_back(f32_buffer("bias", static_cast<int>(p.buffers.back().values.back()) + 1, rng, -2.0, 2.0));
        p.score_mod = "score + bias[seg[kv_idx]]";
        mods = "per-segment bias";
        break;
      }
      default: p.mask_mod = "h % 2 == 0 || kv_idx < 100"; mods = "even heads all keys, odd heads the first 100";
    }
    std::ostringstream what;
    what << "problem " << i << " of seed " << seed << ": " << mods << ", B=" << p.B << " Hq=" << p.Hq
         << " Hkv=" << p.Hkv << " Sq=" << p.Sq << " S=" << p.S << " D=" << p.D << " Dv=" << p.Dv << " "
         << dtype_name(p.dtype) << ", " << (p.page_size ? "pages of " + std::to_string(p.page_size) : "contiguous")
         << (p.host_lens ? "" : ", device lengths only") << ", lengths";
    for (int len : p.lens) what << " " << len;
    SCOPED_TRACE(what.str());
    try {
      const DecodeOutcome r = run_decode_check(p, /*rerun=*/true, rng());
      const double tol = tolerance(p.dtype);
      EXPECT_LT(r.out_error, tol) << "out";
      const RowError out_row = worst_row_error(r.out, r.ref_out, p.Dv);
      EXPECT_LT(out_row.error, kRowTolerance * tol) << "out, worst row " << out_row;
      EXPECT_LT(worst_lse_error(r.lse, r.ref_lse), 0.02) << "lse, worst entry";
      EXPECT_TRUE(r.rerun_identical) << "a second call gave other bits";
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
    }
  }
}

}  // namespace
}  // namespace flexjit::test
