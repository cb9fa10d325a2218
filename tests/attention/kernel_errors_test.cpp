// The error a call raises from its kernels' error words (src/attention/kernel_errors.cpp): which
// kind leads when several kernels report, and the text of each kind. The kernel lines are written
// here as codegen::error_words writes them; the expected texts are the contract's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attention/kernel_errors.hpp"

namespace flexjit::attention {
namespace {

const std::string kBuffer = "fwd bf16 d64/64 m128n128w8s2ws mask_mod=doc[q_idx + 10] == doc[kv_idx]";
const std::string kOrder =
    "bwd_dkdv bf16 d128/128 m64n128w8s2ws dq_accumulate=1 [the deterministic dQ sum waited too long for its turn "
    "and added out of order: dQ is right but its last bits may differ between runs]";
const std::string kFirst =
    "bwd_dkdv bf16 d128/128 m64n128w8s2ws dq_accumulate=1 [the fast backward's dQ writer waited too long for a "
    "query tile's first store and added before it: that tile's dQ is wrong]";
const std::string kLength =
    "fwd bf16 d128/128 m128n128w8s2g seq_lens=1 [per-sequence length outside the padded length: clamped into range]";
const std::string kPage =
    "decode bf16 d128/128 m16n64w4s3 [page-table entry outside the page pool or sequence length beyond the cache: "
    "those keys were not read]";

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

const std::string kStandIn =
    "fwd bf16 d128/128 m128n128w8s2ws score_mod=score + rel[kv_idx - q_idx + 4095] [a row's largest score came "
    "from a finite stand-in beyond 2^126 times the scale: its lse, and its output where such values differ, are not "
    "exact]";

TEST(KernelErrors, AStandInRowSaysWhatIsNotExactAndWhatToUse) {
  const std::string m = kernel_error_message({kStandIn});
  EXPECT_EQ(m,
            "the forward met a row whose largest score came from a finite score_mod value beyond 2^126 times the "
            "scale in magnitude (such as -1e38 standing in for -inf in a bias table, on every key a row keeps; its "
            "accumulators hold such values at 2^126 times the scale), so that row's lse, and its output where those "
            "values differ, are not exact; use -inf, or a mask_mod, for the positions such values exclude. "
            "Kernels:\n  " +
                kStandIn);
}

TEST(KernelErrors, NoLinesNoMessage) { EXPECT_EQ(kernel_error_message({}), ""); }

TEST(KernelErrors, BufferIndicesNameTheExpressionsAndListEachKernel) {
  const std::string m = kernel_error_message({kBuffer});
  EXPECT_EQ(m,
            "a score_mod or mask_mod indexed a buffer out of bounds (those reads returned 0, so the results are "
            "wrong); check the buffers' shapes against the indices the expressions compute. Kernels:\n  " +
                kBuffer);
}

TEST(KernelErrors, ALostFirstStoreLeadsAndSaysDqIsWrong) {
  const std::string m = kernel_error_message({kBuffer, kFirst, kOrder});
  EXPECT_TRUE(starts_with(m,
                          "the fast backward's dK/dV kernel waited about ten seconds for a query tile's first dQ "
                          "store that did not come and added before it (dQ is wrong); this is a flexjit bug, please "
                          "report it with the problem's shapes and mask. Kernels:"))
      << m;
  EXPECT_NE(m.find("\n  " + kBuffer + "\n  " + kFirst + "\n  " + kOrder), std::string::npos) << m;
}

TEST(KernelErrors, ALostTurnLeadsOnlyWhereEveryKernelReportsOne) {
  EXPECT_TRUE(starts_with(kernel_error_message({kOrder}),
                          "the deterministic backward's dK/dV kernel waited about ten seconds for a dQ turn that did "
                          "not come and added out of order (dQ is right, but not bit for bit reproducible); this is a "
                          "flexjit bug, please report it with the problem's shapes and mask "
                          "(FLEXJIT_DETERMINISTIC_DQ=kernel avoids it). Kernels:"));
  EXPECT_TRUE(starts_with(kernel_error_message({kOrder, kBuffer}), "a score_mod or mask_mod indexed a buffer"));
}

TEST(KernelErrors, LengthsBeforePagesBeforeBuffers) {
  EXPECT_TRUE(starts_with(kernel_error_message({kBuffer, kPage, kLength}),
                          "forward or backward got a per-sequence length (CallOptions::seq_lens) outside [0, Sq] or "
                          "[0, Skv] (it was clamped into range, so the results are wrong); check the lengths "
                          "(SeqLens::host_q_lens / host_kv_lens check them on the host). Kernels:"));
  EXPECT_TRUE(starts_with(kernel_error_message({kBuffer, kPage}),
                          "decode met a page-table entry outside the page pool or a sequence length beyond the cache "
                          "(the keys involved were not read, so the results are wrong); check the page table and "
                          "seq_lens (KVCache::host_seq_lens / host_page_table check them on the host). Kernels:"));
}

}  // namespace
}  // namespace flexjit::attention
