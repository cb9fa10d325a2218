// `flexjit run --seq-lens/--q-lens` with --do on padded tensors, on the CPU (float64 reference): the
// lengths reach the mods and the backward, rows past a sequence are 0 / -inf in out.npy and lse.npy
// and zero in the gradients, and bad length files are named errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/npy.hpp"
#include "common/subprocess.hpp"
#include "flexjit/reference.hpp"

namespace flexjit::test {
namespace {

constexpr int B = 3, Hq = 4, Hkv = 2, Sq = 9, S = 13, D = 64;
const char* kMask = "q_idx + kv_len - q_len >= kv_idx";

class CliSeqLens : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(5);
    std::normal_distribution<double> normal(0.0, 1.0);
    auto make = [&](size_t n) {
      std::vector<double> v(n);
      for (auto& x : v) x = NpyArray::from_doubles({normal(rng)}, DType::bf16, {1}).to_doubles()[0];
      return v;
    };
    q_ = make(size_t(B) * Hq * Sq * D);
    k_ = make(size_t(B) * Hkv * S * D);
    v_ = make(size_t(B) * Hkv * S * D);
    do_ = make(size_t(B) * Hq * Sq * D);
    write_npy(path("q.npy"), NpyArray::from_doubles(q_, DType::f32, {B, Hq, Sq, D}));
    write_npy(path("k.npy"), NpyArray::from_doubles(k_, DType::f32, {B, Hkv, S, D}));
    write_npy(path("v.npy"), NpyArray::from_doubles(v_, DType::f32, {B, Hkv, S, D}));
    write_npy(path("do.npy"), NpyArray::from_doubles(do_, DType::f32, {B, Hq, Sq, D}));
    write_npy(path("kv.npy"), NpyArray::from_doubles({13, 0, 5}, DType::i32, {B}));
    write_npy(path("qlens.npy"), NpyArray::from_doubles({9, 3, 1}, DType::i32, {B}));
    write_npy(path("long.npy"), NpyArray::from_doubles({13, 14, 5}, DType::i32, {B}));
    write_npy(path("float.npy"), NpyArray::from_doubles({13, 0, 5}, DType::f32, {B}));
  }
  ProcessResult cli(const std::vector<std::string>& extra) {
    std::vector<std::string> args{FLEXJIT_CLI_PATH, "run", "--device", "cpu", "--q", path("q.npy"), "--k", path("k.npy"),
                                  "--v", path("v.npy"), "--mask", kMask, "--out", path("o")};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessOptions options;
    options.working_dir = dir_.str();
    options.env["FLEXJIT_CACHE_DIR"] = dir_ / "cache";
    options.timeout_seconds = 120;
    return run_process(args, options);
  }
  std::string path(const std::string& name) const { return dir_ / name; }
  std::vector<double> load(const std::string& file) const { return read_npy(path(file)).to_doubles(); }

  ScratchDir dir_{"flexjit-cli-seq-lens"};
  std::vector<double> q_, k_, v_, do_;
};

TEST_F(CliSeqLens, ForwardAndBackwardWithBothLengthsMatchTheReference) {
  const ProcessResult r = cli({"--seq-lens", path("kv.npy"), "--q-lens", path("qlens.npy"), "--do", path("do.npy")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out, "wrote " + path("o") + "/out.npy and " + path("o") + "/lse.npy (float64 CPU reference, bf16)\nwrote " +
                       path("o") + "/dq.npy, dk.npy and dv.npy\n");
  const ReferenceShape shape{B, Hq, Hkv, Sq, S, D, D};
  const Expr mask = Expr::parse(ModKind::mask, kMask);
  const double scale = 1.0 / std::sqrt(double(D));
  const ReferenceForward f = reference_forward_varlen(Expr::identity_score(), mask, {}, shape, q_, k_, v_, {9, 3, 1},
                                                      {13, 0, 5}, scale);
  const ReferenceBackward g = reference_backward_varlen(Expr::identity_score(), mask, {}, shape, q_, k_, v_, do_,
                                                        {9, 3, 1}, {13, 0, 5}, scale);
  const auto out = load("o/out.npy"), lse = load("o/lse.npy"), dk = load("o/dk.npy"), dq = load("o/dq.npy");
  EXPECT_LT(relative_error(out, f.out), 1e-6);
  EXPECT_LT(relative_error(lse, f.lse), 1e-6);
  EXPECT_LT(relative_error(dq, g.dq), 1e-6);
  EXPECT_LT(relative_error(dk, g.dk), 1e-6);
  EXPECT_LT(relative_error(load("o/dv.npy"), g.dv), 1e-6);
  // By hand: sequence 2 has one query row that sees its 5 keys; row 1 of it is past q_len.
  EXPECT_TRUE(std::isfinite(lse[size_t(2) * Hq * Sq]));
  EXPECT_EQ(lse[size_t(2) * Hq * Sq + 1], -INFINITY);
  EXPECT_EQ(lse[size_t(1) * Hq * Sq], -INFINITY);  // sequence 1 has no keys
  // dk of sequence 2 (kv head 0) past its 5 keys is zero, key 4 is not.
  const size_t k2 = size_t(2) * Hkv * S * D;
  EXPECT_NE(dk[k2 + 4 * D], 0.0);
  EXPECT_EQ(dk[k2 + 5 * D], 0.0);
  // dq of sequence 0 is not zero, of sequence 2 row 1 (past q_len) it is.
  EXPECT_NE(dq[0], 0.0);
  EXPECT_EQ(dq[(size_t(2) * Hq * Sq + 1) * D], 0.0);
}

TEST_F(CliSeqLens, KvLengthsAloneWithDoRunTheBackward) {
  const ProcessResult r = cli({"--seq-lens", path("kv.npy"), "--do", path("do.npy")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const ReferenceBackward g = reference_backward_varlen(Expr::identity_score(), Expr::parse(ModKind::mask, kMask), {},
                                                        ReferenceShape{B, Hq, Hkv, Sq, S, D, D}, q_, k_, v_, do_,
                                                        {Sq, Sq, Sq}, {13, 0, 5}, 1.0 / std::sqrt(double(D)));
  EXPECT_LT(relative_error(load("o/dv.npy"), g.dv), 1e-6);
}

TEST_F(CliSeqLens, BadLengthFilesAreNamed) {
  ProcessResult r = cli({"--seq-lens", path("long.npy"), "--do", path("do.npy")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ShapeError: --seq-lens " + path("long.npy") + ": entry 1 is 14, outside [0, 13] (Skv, the key length of --k)\n");
  r = cli({"--q-lens", path("float.npy")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ShapeError: --q-lens " + path("float.npy") + ": expected int32 [B] = [3], got f32 of 1 dimensions [3]\n");
  r = cli({"--q-lens", path("qlens.npy"), "--page-size", "4", "--seq-lens", path("kv.npy")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: --q-lens is not available with pages (decoding has Sq rows per sequence)\n");
}

}  // namespace
}  // namespace flexjit::test
