#include "attention/buffer_grads.hpp"

#include <cstring>
#include <set>

#include "codegen/kernel_store.hpp"
#include "flexjit/error.hpp"
#include "jit/driver.hpp"

namespace flexjit::attention {
namespace {

using expr::BufferGradScheme;

// The arbitrary scheme keeps one copy of the buffer per warp of the dQ grid; past this it is
// refused rather than allowed to exhaust device memory.
constexpr size_t kMaxArbitraryScratchBytes = size_t(4) << 30;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

float* zeroed_scratch(std::vector<std::unique_ptr<StreamScratch>>& owner, size_t floats, Stream stream) {
  owner.push_back(std::make_unique<StreamScratch>(floats * sizeof(float), stream));
  void* data = owner.back()->data();
  FLEXJIT_CU(jit::driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(data), 0, std::max<size_t>(floats, 4) * 4, stream));
  return static_cast<float*>(data);
}

}  // namespace

void check_buffer_grad_reads(const Expr& score_mod) {
  const size_t reads = score_mod.buffer_gradients().size();
  if (reads > FLEXJIT_MAX_BUFFER_GRAD_READS)
    throw UsageError("score_mod reads learnable buffers at " + std::to_string(reads) +
                     " distinct places; the backward accumulates at most " +
                     std::to_string(FLEXJIT_MAX_BUFFER_GRAD_READS) +
                     " (write repeated reads identically so they count once, or mark fewer buffers learnable)");
}

void check_buffer_grad_tensors(const Expr& score_mod, const CallOptions& options) {
  std::set<std::string> learnable;
  for (const auto& r : score_mod.buffer_gradients()) learnable.insert(r.buffer);
  for (const auto& [name, view] : options.buffer_grads)
    if (!learnable.count(name))
      throw UsageError("backward: CallOptions::buffer_grads names '" + name +
                       "', which is not a learnable buffer read by score_mod");
  for (const auto& name : learnable) {
    const auto grad = options.buffer_grads.find(name);
    if (grad == options.buffer_grads.end())
      throw UsageError("backward: learnable buffer '" + name +
                       "' needs a gradient tensor in CallOptions::buffer_grads (fp32, the buffer's shape)");
    const auto value = options.values.buffers.find(name);
    if (value == options.values.buffers.end())
      throw UsageError("backward: no value given for buffer '" + name + "' (CallOptions::values.buffers)");
    const TensorView& g = grad->second;
    if (g.data == nullptr || g.dtype != DType::f32 || !g.is_contiguous() || g.shape != value->second.shape)
      throw ShapeError("backward: the gradient of buffer '" + name + "' must be a contiguous f32 tensor of shape " +
                       shape_text(value->second.shape) + ", got " + g.describe());
  }
}

BufferGradLaunch::BufferGradLaunch(const codegen::KernelSpec& dq_spec, const CallOptions& options,
                                   const ProblemShape& shape, const std::string& arch, Stream stream)
    : dq_spec_(dq_spec), plan_(codegen::buffer_grad_plan(dq_spec.score_mod)), shape_(shape), arch_(arch),
      stream_(stream) {
  std::memset(&params_, 0, sizeof(params_));
  const int block_m = dq_spec.config.block_m, warps = dq_spec.config.num_warps;
  num_q_tiles_ = (shape.q_len + block_m - 1) / block_m;
  const size_t ctas = size_t(shape.batch) * shape.q_heads * num_q_tiles_;
  const size_t heads = size_t(shape.batch) * shape.q_heads;
  params_.band_len = shape.kv_len + block_m - 1;
  std::set<std::string> zeroed;
  for (size_t r = 0; r < plan_.reads.size(); ++r) {
    const std::string& name = plan_.reads[r].buffer;
    const TensorView& grad = options.buffer_grads.at(name);
    const size_t numel = size_t(grad.numel());
    params_.read[r].grad = static_cast<float*>(grad.data);
    params_.numel[r] = static_cast<long long>(numel);
    if (zeroed.insert(name).second)
      FLEXJIT_CU(jit::driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(grad.data), 0, numel * 4, stream));
    float* partial = nullptr;
    switch (plan_.schemes[r]) {
      case BufferGradScheme::per_head:
        params_.read[r].scratch = zeroed_scratch(scratch_, ctas, stream);
        partial = zeroed_scratch(scratch_, heads, stream);
        break;
      case BufferGradScheme::diagonal:
        params_.read[r].scratch = zeroed_scratch(scratch_, ctas * size_t(params_.band_len), stream);
        partial = zeroed_scratch(scratch_, heads * size_t(shape.q_len + shape.kv_len - 1), stream);
        break;
      case BufferGradScheme::per_score: break;
      case BufferGradScheme::arbitrary: {
        const size_t bytes = ctas * size_t(warps) * numel * 4;
        if (numel >= (size_t(1) << 31) || bytes > kMaxArbitraryScratchBytes)
          throw UsageError("learnable buffer '" + name + "': the read " + plan_.reads[r].read +
                           " has an arbitrary index pattern, whose deterministic gradient keeps one copy of the "
                           "buffer per warp of the dQ grid: " + std::to_string(bytes >> 20) +
                           " MiB here, over the " + std::to_string(kMaxArbitraryScratchBytes >> 20) +
                           " MiB limit. Index it by h, by q_idx - kv_idx, or one element per score, or use a "
                           "smaller buffer or problem");
        params_.read[r].scratch = zeroed_scratch(scratch_, ctas * size_t(warps) * numel, stream);
        break;
      }
    }
    partial_.push_back(partial);
  }
}

codegen::KernelSpec buffer_grad_reduce_spec(const codegen::KernelSpec& dq_spec) {
  codegen::KernelSpec rs;
  rs.family = codegen::Family::bwd_buffer_grad;
  rs.dtype = dq_spec.dtype;
  rs.head_dim = dq_spec.head_dim;
  rs.head_dim_v = dq_spec.head_dim_v;
  rs.io_head_dim = dq_spec.io_head_dim;
  rs.io_head_dim_v = dq_spec.io_head_dim_v;
  rs.config = codegen::default_config(rs.family, rs.head_dim, rs.head_dim_v);
  rs.declarations = dq_spec.declarations;
  rs.score_mod = dq_spec.score_mod;
  return rs;
}

void BufferGradLaunch::reduce(const std::vector<unsigned char>& mod_args) {
  const auto ready = codegen::ready_kernel(buffer_grad_reduce_spec(dq_spec_), arch_);
  const unsigned threads = static_cast<unsigned>(ready->spec.threads());  // the family's, as the template's
  const int diagonals = shape_.q_len + shape_.kv_len - 1;
  const unsigned heads = static_cast<unsigned>(shape_.batch * shape_.q_heads);
  void* mod = const_cast<unsigned char*>(mod_args.data());
  for (size_t r = 0; r < plan_.reads.size(); ++r) {
    FlexjitBufferGradReduceParams p;
    std::memset(&p, 0, sizeof(p));
    p.grad = params_.read[r].grad;
    p.scratch = params_.read[r].scratch;
    p.partial = partial_[r];
    p.numel = params_.numel[r];
    p.total_warps = static_cast<long long>(heads) * num_q_tiles_ * dq_spec_.config.num_warps;
    p.read = static_cast<int>(r);
    p.batch = shape_.batch;
    p.num_q_heads = shape_.q_heads;
    p.q_len = shape_.q_len;
    p.kv_len = shape_.kv_len;
    p.num_q_tiles = num_q_tiles_;
    p.block_m = dq_spec_.config.block_m;
    p.band_len = params_.band_len;
    switch (plan_.schemes[r]) {
      case BufferGradScheme::per_head: {
        void* args[] = {&p, mod};
        ready->kernel(0).launch({1, 1, 1}, {threads, 1, 1}, 0, stream_, args);
        break;
      }
      case BufferGradScheme::diagonal: {
        void* args[] = {&p};
        ready->kernel(1).launch({(static_cast<unsigned>(diagonals) + threads - 1) / threads, heads, 1}, {threads, 1, 1}, 0,
                                stream_, args);
        int serial = plan_.serial_scatter[r] ? 1 : 0;
        void* scatter_args[] = {&p, mod, &serial};
        if (serial)
          ready->kernel(2).launch({1, 1, 1}, {1, 1, 1}, 0, stream_, scatter_args);
        else
          ready->kernel(2).launch({(static_cast<unsigned>(diagonals) + threads - 1) / threads, 1, 1}, {threads, 1, 1}, 0,
                                  stream_, scatter_args);
        break;
      }
      case BufferGradScheme::per_score: break;
      case BufferGradScheme::arbitrary: {
        void* args[] = {&p};
        ready->kernel(3).launch({static_cast<unsigned>((p.numel + threads - 1) / threads), 1, 1}, {threads, 1, 1}, 0,
                                stream_, args);
        break;
      }
    }
  }
}

}  // namespace flexjit::attention
