#include "attention/kernel_errors.hpp"

namespace flexjit::attention {

std::string kernel_error_message(const std::vector<std::string>& kernels) {
  if (kernels.empty()) return "";
  const auto any = [&](const char* tag) {
    for (const auto& k : kernels)
      if (k.find(tag) != std::string::npos) return true;
    return false;
  };
  bool only_order = true;  // every kernel reported only (or also) a lost dQ order
  for (const auto& k : kernels) only_order = only_order && k.find("[the deterministic dQ sum") != std::string::npos;
  std::string message =
      any("[the fast backward's dQ writer")
          ? "the fast backward's dK/dV kernel waited about ten seconds for a query tile's first dQ store that did "
            "not come and added before it (dQ is wrong); this is a flexjit bug, please report it with the "
            "problem's shapes and mask. Kernels:"
      : only_order
          ? "the deterministic backward's dK/dV kernel waited about ten seconds for a dQ turn that did not come "
            "and added out of order (dQ is right, but not bit for bit reproducible); this is a flexjit bug, "
            "please report it with the problem's shapes and mask (FLEXJIT_DETERMINISTIC_DQ=kernel avoids it). "
            "Kernels:"
      : any("[per-sequence length")
          ? "forward or backward got a per-sequence length (CallOptions::seq_lens) outside [0, Sq] or [0, Skv] "
            "(it was clamped into range, so the results are wrong); check the lengths (SeqLens::host_q_lens / "
            "host_kv_lens check them on the host). Kernels:"
      : any("[a row's largest score came from a finite stand-in")
          ? "the forward met a row whose largest score came from a finite score_mod value beyond 2^126 times the "
            "scale in magnitude (such as -1e38 standing in for -inf in a bias table, on every key a row keeps; its "
            "accumulators hold such values at 2^126 times the scale), so that row's lse, and its output where "
            "those values differ, are not exact; use -inf, or a mask_mod, for the positions such values exclude. "
            "Kernels:"
      : any("[page-table entry")
          ? "decode met a page-table entry outside the page pool or a sequence length beyond the cache (the "
            "keys involved were not read, so the results are wrong); check the page table and seq_lens "
            "(KVCache::host_seq_lens / host_page_table check them on the host). Kernels:"
          : "a score_mod or mask_mod indexed a buffer out of bounds (those reads returned 0, so the results are "
            "wrong); check the buffers' shapes against the indices the expressions compute. Kernels:";
  for (const auto& k : kernels) message += "\n  " + k;
  return message;
}

}  // namespace flexjit::attention
