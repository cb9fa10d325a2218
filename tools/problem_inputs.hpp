#pragma once
// Device inputs for one suite problem (random q, k, v, dO; the suite's buffers; the block mask),
// shared by `flexjit bench` and `flexjit tune`.
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include "flexjit/attention.hpp"
#include "flexjit/error.hpp"
#include "flexjit/problem_suite.hpp"

namespace flexjit::cli {

// `--grad NAME`: makes buffer NAME learnable in every problem that has one; UsageError when none has.
void mark_grad_buffers(std::vector<SuiteProblem>& problems, const std::vector<std::string>& names);

// The AttentionSpec of a suite problem (configs left to the autotuner).
AttentionSpec problem_spec(const SuiteProblem& p);

// Runs `work` for one suite problem; an error names the problem on stderr before it propagates
// (to the CLI's one error line), so a failure in a long suite says which problem failed.
template <class Work>
void for_problem(const SuiteProblem& p, Work&& work) {
  try {
    work();
  } catch (const Error&) {
    std::fflush(stdout);
    std::fprintf(stderr, "\nsuite problem '%s' failed:\n", p.name.c_str());
    throw;
  }
}

struct ProblemInputs {
  std::vector<DeviceBuffer> storage;  // owns every device allocation below
  TensorView q, k, v, out, lse, dout, dq, dk, dv;
  CallOptions call;
  std::optional<BlockMask> mask;  // present when the variant has a mask_mod
  double density = 1.0;           // fraction of 128x128 blocks visited
  bool decode = false;            // a decode problem: `kv` (contiguous or paged) instead of k, v
  KVCache kv;
  std::vector<int32_t> host_lens, host_table;  // what kv.host_seq_lens / host_page_table point at

  // Fresh normal(0, 1) data; gradients allocated only when `backward`.
  // `mask_q_block`: query rows per block of the mask's tables (the density stays the 128 x 128
  // tables' either way).
  static ProblemInputs create(const SuiteProblem& p, const Attention& attention, bool backward, std::mt19937_64& rng,
                              int mask_q_block = 128);
  const BlockMask* block_mask() const { return mask ? &*mask : nullptr; }
  void forward(const Attention& a, Stream s) const {
    if (decode)
      a.decode(q, kv, out, lse, s, call);
    else
      a.forward(q, k, v, out, lse, block_mask(), s, call);
  }
  void backward(const Attention& a, Stream s) const {
    a.backward(q, k, v, out, lse, dout, dq, dk, dv, block_mask(), s, call);
  }
};

}  // namespace flexjit::cli
