// `flexjit run` with per-sequence lengths and paged caches, on the CPU (float64 reference): the
// lengths reach kv_len in the mods, paging by the CLI (--page-size) and explicit pages
// (--k-pages/--v-pages/--page-table) give exactly the contiguous result, and bad page tables or
// lengths are named errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/npy.hpp"
#include "common/subprocess.hpp"
#include "flexjit/reference.hpp"

namespace flexjit::test {
namespace {

constexpr int B = 3, Hq = 4, Hkv = 2, Sq = 2, S = 37, D = 64;

class CliDecode : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(11);
    std::normal_distribution<double> normal(0.0, 1.0);
    auto make = [&](size_t n) {
      std::vector<double> v(n);
      for (auto& x : v) x = NpyArray::from_doubles({normal(rng)}, DType::bf16, {1}).to_doubles()[0];
      return v;
    };
    q_ = make(size_t(B) * Hq * Sq * D);
    k_ = make(size_t(B) * Hkv * S * D);
    v_ = make(size_t(B) * Hkv * S * D);
    write_npy(path("q.npy"), NpyArray::from_doubles(q_, DType::f32, {B, Hq, Sq, D}));
    write_npy(path("k.npy"), NpyArray::from_doubles(k_, DType::f32, {B, Hkv, S, D}));
    write_npy(path("v.npy"), NpyArray::from_doubles(v_, DType::f32, {B, Hkv, S, D}));
    write_npy(path("lens.npy"), NpyArray::from_doubles({37, 0, 10}, DType::i32, {B}));
  }
  ProcessResult cli(std::vector<std::string> args) {
    args.insert(args.begin(), FLEXJIT_CLI_PATH);
    ProcessOptions options;
    options.working_dir = dir_.str();
    options.env["FLEXJIT_CACHE_DIR"] = dir_ / "cache";
    options.timeout_seconds = 120;
    return run_process(args, options);
  }
  std::string path(const std::string& name) const { return dir_ / name; }
  std::vector<std::string> run_args(const std::string& out) const {
    return {"run", "--device", "cpu", "--q", path("q.npy"), "--seq-lens", path("lens.npy"), "--mask",
            "q_idx + kv_len - q_len >= kv_idx", "--out", path(out)};
  }
  std::vector<double> load(const std::string& file) const { return read_npy(path(file)).to_doubles(); }

  ScratchDir dir_{"flexjit-cli-decode"};
  std::vector<double> q_, k_, v_;
};

TEST_F(CliDecode, ContiguousCacheMatchesTheRaggedReference) {
  auto args = run_args("c");
  for (const std::string& a : {std::string("--k"), path("k.npy"), std::string("--v"), path("v.npy")}) args.push_back(a);
  const ProcessResult r = cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out, "wrote " + path("c") + "/out.npy and " + path("c") +
                       "/lse.npy (float64 CPU reference, bf16, contiguous cache)\n");
  const ReferenceForward ref = reference_forward_ragged(
      Expr::identity_score(), Expr::parse(ModKind::mask, "q_idx + kv_len - q_len >= kv_idx"), {},
      ReferenceShape{B, Hq, Hkv, Sq, S, D, D}, q_, k_, v_, {37, 0, 10}, 1.0 / std::sqrt(double(D)));
  const auto out = load("c/out.npy"), lse = load("c/lse.npy");
  EXPECT_LT(relative_error(out, ref.out), 1e-6);
  EXPECT_LT(relative_error(lse, ref.lse), 1e-6);
  EXPECT_EQ(lse[size_t(1) * Hq * Sq], -INFINITY);  // sequence 1 has no keys
}

TEST_F(CliDecode, PagingByTheCliAndExplicitPagesChangeNothing) {
  auto contiguous = run_args("c");
  for (const std::string& a : {std::string("--k"), path("k.npy"), std::string("--v"), path("v.npy")}) contiguous.push_back(a);
  ASSERT_EQ(cli(contiguous).exit_code, 0);
  auto paged = contiguous;
  paged[paged.size() - 5] = path("p");  // --out
  paged.push_back("--page-size");
  paged.push_back("8");
  const ProcessResult r = cli(paged);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(load("p/out.npy"), load("c/out.npy"));
  EXPECT_EQ(load("p/lse.npy"), load("c/lse.npy"));

  // Explicit pages of 16 tokens in a hand-made shuffled order: sequence 0 uses pages 3, 0, 5;
  // sequence 2 uses page 1; sequence 1 none.
  const int page = 16, pool = 6, max_pages = 3;
  const std::vector<double> table = {3, 0, 5, 4, 4, 4, 1, 2, 2};
  std::vector<double> kp(size_t(pool) * page * Hkv * D, 0.0), vp(kp.size(), 0.0);
  const int lens[] = {37, 0, 10};
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < lens[b]; ++t)
      for (int h = 0; h < Hkv; ++h)
        for (int d = 0; d < D; ++d) {
          const size_t p = static_cast<size_t>(table[size_t(b) * max_pages + t / page]);
          const size_t dst = ((p * page + t % page) * Hkv + h) * D + d, src = ((size_t(b) * Hkv + h) * S + t) * D + d;
          kp[dst] = k_[src];
          vp[dst] = v_[src];
        }
  write_npy(path("kp.npy"), NpyArray::from_doubles(kp, DType::f32, {pool, page, Hkv, D}));
  write_npy(path("vp.npy"), NpyArray::from_doubles(vp, DType::f32, {pool, page, Hkv, D}));
  write_npy(path("table.npy"), NpyArray::from_doubles(table, DType::i32, {B, max_pages}));
  auto explicit_pages = run_args("e");
  for (const std::string& a : {std::string("--k-pages"), path("kp.npy"), std::string("--v-pages"), path("vp.npy"),
                               std::string("--page-table"), path("table.npy")})
    explicit_pages.push_back(a);
  const ProcessResult e = cli(explicit_pages);
  ASSERT_EQ(e.exit_code, 0) << e.describe();
  EXPECT_EQ(load("e/out.npy"), load("c/out.npy"));
  EXPECT_EQ(load("e/lse.npy"), load("c/lse.npy"));

  // An entry outside the pool, in a page sequence 0 uses: a named error, no output.
  write_npy(path("bad.npy"), NpyArray::from_doubles({3, 9, 5, 4, 4, 4, 1, 2, 2}, DType::i32, {B, max_pages}));
  explicit_pages[explicit_pages.size() - 1] = path("bad.npy");
  const ProcessResult bad = cli(explicit_pages);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(has_text(bad.err, "page_table[0][1] = 9 is outside the page pool (6 pages, 0 to 5); sequence 0 uses "
                                "its first 3 entries"))
      << bad.describe();
}

TEST_F(CliDecode, LengthsBeyondTheCacheAreNamed) {
  write_npy(path("long.npy"), NpyArray::from_doubles({37, 38, 1}, DType::i32, {B}));
  auto args = run_args("x");
  args[6] = path("long.npy");
  for (const std::string& a : {std::string("--k"), path("k.npy"), std::string("--v"), path("v.npy")}) args.push_back(a);
  const ProcessResult r = cli(args);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(has_text(r.err, "seq_lens[1] = 38 is beyond the cache's 37 positions (dimension 2 of k and v)"))
      << r.describe();
}

TEST_F(CliDecode, EmitDecodePaged) {
  const ProcessResult r = cli({"emit", "--family", "decode", "--paged", "--gqa", "7", "--mask",
                               "q_idx + kv_len - q_len >= kv_idx", "--format", "cu"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(has_text(r.out, "// Generated by flexjit from attention_decode.cu.j2: decode bf16 d128/128 m16n128w8s3 gqa7 "
                              "paged=1 "))
      << r.out.substr(0, 300);
  EXPECT_TRUE(has_text(r.out, "constexpr bool PAGED = true;"));
  EXPECT_TRUE(has_text(r.out, "constexpr int GQA_GROUP = 7;"));
  // With the page size the call will use, the Hopper default reads the pages through TMA.
  const ProcessResult t = cli({"emit", "--family", "decode", "--paged", "--page-size", "64", "--gqa", "4", "--format", "cu"});
  ASSERT_EQ(t.exit_code, 0) << t.describe();
  EXPECT_TRUE(has_text(t.out, "decode bf16 d128/128 m16n128w4s3t gqa4 paged=1 ")) << t.out.substr(0, 300);
  EXPECT_TRUE(has_text(t.out, "constexpr bool TMA = true;"));
  // A page size of 20 makes 4-row boxes, which TMA's swizzle cannot take: the cp.async tiles.
  const ProcessResult c = cli({"emit", "--family", "decode", "--paged", "--page-size", "20", "--gqa", "4", "--format", "cu"});
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_TRUE(has_text(c.out, "decode bf16 d128/128 m16n128w8s3 gqa4 paged=1 ")) << c.out.substr(0, 300);
}

// Hostile shapes and sizes: a cache of zero heads or slots, page sizes the cache cannot use, and a
// wide page table of short sequences (its capacity is not the memory the CPU run takes) — each a
// named error or a correct result, never a crash.
TEST_F(CliDecode, EmptyCachesAndHostilePageSizesAreNamed) {
  write_npy(path("k0.npy"), NpyArray::from_doubles({}, DType::f32, {B, 0, S, D}));
  auto args = run_args("z");
  for (const std::string& a : {std::string("--k"), path("k0.npy"), std::string("--v"), path("k0.npy")}) args.push_back(a);
  ProcessResult r = cli(args);
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_TRUE(has_text(r.err, "--k [B, H, S, D]: dimension 1 has extent 0; extents must be between 1 and 2^31-1 (a "
                              "sequence of no keys is a length of 0 in --seq-lens, not an empty cache)"))
      << r.describe();

  auto paged = run_args("p");
  for (const std::string& a : {std::string("--k"), path("k.npy"), std::string("--v"), path("v.npy")}) paged.push_back(a);
  paged.push_back("--page-size");
  paged.push_back("-5");
  r = cli(paged);
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_TRUE(has_text(r.err, "--page-size")) << r.describe();
  paged.back() = "2147483647";
  r = cli(paged);
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  paged.back() = "38";
  r = cli(paged);
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_TRUE(has_text(r.err, "--page-size 38 is longer than the cache (--k and --v hold S = 37 positions); give pages "
                              "of 1 to 37 tokens"))
      << r.describe();
  paged.back() = "37";  // one page a sequence: the same result as the contiguous cache
  ASSERT_EQ(cli(paged).exit_code, 0);

  // One head pair, one query, lengths 1 and 2 in a table of 2^20 columns of 64-token pages: the
  // capacity is 2^26 keys a sequence, but the sequences hold 1 and 2. Keys are all zero, so every
  // kept key scores 0 and the output is the mean of the kept values: 3 and (5 + 7) / 2 = 6 in
  // every column.
  const int pages = 2, page = 64, columns = 1 << 20;
  std::vector<double> kp(size_t(pages) * page * D, 0.0), vp(kp.size(), 0.0);
  for (int d = 0; d < D; ++d) {
    vp[(size_t(1) * page + 0) * D + d] = 3;  // sequence 0's key 0: page 1, slot 0
    vp[size_t(0) * D + d] = 5;               // sequence 1's keys 0, 1: page 0, slots 0, 1
    vp[size_t(1) * D + d] = 7;
  }
  std::vector<double> table(size_t(2) * columns, 1.0);
  table[columns] = 0;  // sequence 1's first page
  write_npy(path("wkp.npy"), NpyArray::from_doubles(kp, DType::f32, {pages, page, 1, D}));
  write_npy(path("wvp.npy"), NpyArray::from_doubles(vp, DType::f32, {pages, page, 1, D}));
  write_npy(path("wt.npy"), NpyArray::from_doubles(table, DType::i32, {2, columns}));
  write_npy(path("wq.npy"), NpyArray::from_doubles(std::vector<double>(size_t(2) * D, 0.5), DType::f32, {2, 1, 1, D}));
  write_npy(path("wl.npy"), NpyArray::from_doubles({1, 2}, DType::i32, {2}));
  r = cli({"run", "--device", "cpu", "--q", path("wq.npy"), "--seq-lens", path("wl.npy"), "--k-pages", path("wkp.npy"),
           "--v-pages", path("wvp.npy"), "--page-table", path("wt.npy"), "--out", path("w")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  std::vector<double> expected(size_t(2) * D, 3.0);
  std::fill(expected.begin() + D, expected.end(), 6.0);
  EXPECT_EQ(load("w/out.npy"), expected);
}

}  // namespace
}  // namespace flexjit::test
