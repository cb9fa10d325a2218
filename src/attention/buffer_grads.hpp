#pragma once
// The host side of learnable-buffer gradients in Attention::backward: checking the caller's
// gradient tensors, and for each dQ launch the scratch, the zeroing and the reduce launches
// (templates/flexjit_buffer_grad.cuh describes the schemes).
#include <memory>
#include <string>
#include <vector>

#include "../../templates/flexjit_buffer_grad_params.cuh"
#include "attention/stream_scratch.hpp"
#include "attention/tensor_checks.hpp"
#include "codegen/buffer_grad.hpp"
#include "codegen/kernel_spec.hpp"
#include "flexjit/attention.hpp"

namespace flexjit::attention {

// Throws UsageError when score_mod has more distinct reads of learnable buffers than one dQ kernel
// takes (FLEXJIT_MAX_BUFFER_GRAD_READS).
void check_buffer_grad_reads(const Expr& score_mod);

// The reduce family's spec for a variant (its kernels depend only on the declarations and score_mod).
codegen::KernelSpec buffer_grad_reduce_spec(const codegen::KernelSpec& dq_spec);

// Checks options.buffer_grads against the learnable buffers of `score_mod`: one fp32 contiguous
// tensor per learnable buffer, shaped like the buffer in options.values, and no other names.
void check_buffer_grad_tensors(const Expr& score_mod, const CallOptions& options);

// The buffer-gradient work around one dQ launch of `dq_spec` (a spec with buffer_grads) on `stream`:
// the constructor allocates and zeroes the scratch and zeroes the gradients; params() is the dQ
// kernel's extra argument; reduce() enqueues the reduce kernels after the dQ launch.
class BufferGradLaunch {
 public:
  BufferGradLaunch(const codegen::KernelSpec& dq_spec, const CallOptions& options, const ProblemShape& shape,
                   const std::string& arch, Stream stream);
  FlexjitBufferGradParams* params() { return &params_; }
  void reduce(const std::vector<unsigned char>& mod_args);

 private:
  codegen::KernelSpec dq_spec_;
  codegen::BufferGradPlan plan_;
  ProblemShape shape_;
  std::string arch_;
  Stream stream_;
  int num_q_tiles_ = 0;
  FlexjitBufferGradParams params_{};
  std::vector<std::unique_ptr<StreamScratch>> scratch_;
  std::vector<float*> partial_;
};

}  // namespace flexjit::attention
