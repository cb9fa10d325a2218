#include "problem_inputs.hpp"

#include <algorithm>
#include <numeric>

#include "common/half.hpp"
#include "common/values.hpp"
#include "flexjit/error.hpp"

namespace flexjit::cli {

namespace {

DeviceBuffer random_tensor(size_t n, DType dtype, std::mt19937_64& rng) {
  // Fresh normal values for the first 4M elements, repeated beyond: a decode problem's KV cache
  // holds a billion elements, which would take the host minutes to draw one by one.
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<uint16_t> bits(n);
  const size_t fresh = std::min<size_t>(n, size_t(1) << 22);
  for (size_t i = 0; i < fresh; ++i)
    bits[i] = dtype == DType::bf16 ? float_to_bf16_bits(normal(rng)) : float_to_f16_bits(normal(rng));
  for (size_t i = fresh; i < n; i += fresh) std::copy_n(bits.begin(), std::min(fresh, n - i), bits.begin() + i);
  DeviceBuffer buffer = DeviceBuffer::allocate(n * 2);
  buffer.upload(bits.data(), n * 2);
  return buffer;
}

DeviceBuffer upload_suite_buffer(const SuiteBuffer& b) {
  const std::vector<unsigned char> bytes = encode_values(b.values(), b.dtype);
  DeviceBuffer d = DeviceBuffer::allocate(std::max<size_t>(bytes.size(), 16));
  d.upload(bytes.data(), bytes.size());
  return d;
}

// fp32 gradients of the problem's learnable buffers, which the backward then writes.
void add_buffer_grads(const SuiteProblem& p, ProblemInputs& in) {
  for (const SuiteBuffer& b : p.buffers)
    for (const auto& name : p.grad_buffers)
      if (name == b.name) {
        size_t n = 1;
        for (int64_t e : b.shape()) n *= size_t(e);
        in.storage.push_back(DeviceBuffer::allocate(std::max<size_t>(n * 4, 16)));
        in.call.buffer_grads[name] = TensorView::contiguous(in.storage.back().data(), DType::f32, b.shape());
      }
}

}  // namespace

void mark_grad_buffers(std::vector<SuiteProblem>& problems, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    bool found = false;
    for (SuiteProblem& p : problems)
      for (const SuiteBuffer& b : p.buffers)
        if (b.name == name) {
          found = true;
          if (std::find(p.grad_buffers.begin(), p.grad_buffers.end(), name) == p.grad_buffers.end())
            p.grad_buffers.push_back(name);
        }
    if (!found) throw UsageError("--grad " + name + ": no selected problem has a buffer '" + name + "'");
  }
}

AttentionSpec problem_spec(const SuiteProblem& p) {
  AttentionSpec spec;
  spec.score_mod = p.score_mod;
  spec.mask_mod = p.mask_mod;
  spec.declarations = p.declarations();
  spec.dtype = p.dtype;
  spec.head_dim = p.head_dim;
  spec.head_dim_v = p.head_dim_v;
  return spec;
}

ProblemInputs ProblemInputs::create(const SuiteProblem& p, const Attention& attention, bool backward,
                                    std::mt19937_64& rng, int mask_q_block) {
  ProblemInputs in;
  for (const SuiteBuffer& b : p.buffers) {
    in.storage.push_back(upload_suite_buffer(b));
    in.call.values.buffers[b.name] = TensorView::contiguous(in.storage.back().data(), b.dtype, b.shape());
  }
  const std::vector<int64_t> qshape{p.batch, p.q_heads, p.q_len, p.head_dim};
  const std::vector<int64_t> kshape{p.batch, p.kv_heads, p.kv_len, p.head_dim};
  const std::vector<int64_t> vshape{p.batch, p.kv_heads, p.kv_len, p.head_dim_v};
  const std::vector<int64_t> oshape{p.batch, p.q_heads, p.q_len, p.head_dim_v};
  auto numel = [](const std::vector<int64_t>& s) { return size_t(s[0]) * s[1] * s[2] * s[3]; };
  auto tensor = [&](const std::vector<int64_t>& shape, bool random) {
    in.storage.push_back(random ? random_tensor(numel(shape), p.dtype, rng) : DeviceBuffer::allocate(numel(shape) * 2));
    return TensorView::contiguous(in.storage.back().data(), p.dtype, shape);
  };
  in.q = tensor(qshape, true);
  if (p.decode) {
    // Per-sequence lengths; with a page size, a pool of just the pages the lengths need, handed
    // out in a shuffled order (as a serving cache ends up after many requests).
    in.decode = true;
    in.host_lens = p.kv_lens();
    in.storage.push_back(DeviceBuffer::from_host(in.host_lens));
    const TensorView lens = TensorView::contiguous(in.storage.back().data(), DType::i32, {p.batch});
    if (p.page_size > 0) {
      const int max_pages = (p.kv_len + p.page_size - 1) / p.page_size;
      int64_t num_pages = 0;
      for (int32_t len : in.host_lens) num_pages += (len + p.page_size - 1) / p.page_size;
      num_pages = std::max<int64_t>(num_pages, 1);
      std::vector<int32_t> order(num_pages);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      in.host_table.assign(size_t(p.batch) * max_pages, 0);
      size_t next = 0;
      for (int b = 0; b < p.batch; ++b)
        for (int j = 0; j < (in.host_lens[b] + p.page_size - 1) / p.page_size; ++j)
          in.host_table[size_t(b) * max_pages + j] = order[next++];
      const TensorView kp = tensor({num_pages, p.page_size, p.kv_heads, p.head_dim}, true);
      const TensorView vp = tensor({num_pages, p.page_size, p.kv_heads, p.head_dim_v}, true);
      in.storage.push_back(DeviceBuffer::from_host(in.host_table));
      in.kv = KVCache::paged(kp, vp, TensorView::contiguous(in.storage.back().data(), DType::i32, {p.batch, max_pages}),
                             lens);
      in.kv.host_page_table = in.host_table.data();
    } else {
      in.k = tensor(kshape, true);
      in.v = tensor(vshape, true);
      in.kv = KVCache::contiguous(in.k, in.v, lens);
    }
    in.kv.host_seq_lens = in.host_lens.data();
    in.out = tensor(oshape, false);
    in.storage.push_back(DeviceBuffer::allocate(size_t(p.batch) * p.q_heads * p.q_len * 4));
    in.lse = TensorView::contiguous(in.storage.back().data(), DType::f32, {p.batch, p.q_heads, p.q_len});
    return in;
  }
  in.k = tensor(kshape, true);
  in.v = tensor(vshape, true);
  in.out = tensor(oshape, false);
  in.storage.push_back(DeviceBuffer::allocate(size_t(p.batch) * p.q_heads * p.q_len * 4));
  in.lse = TensorView::contiguous(in.storage.back().data(), DType::f32, {p.batch, p.q_heads, p.q_len});
  if (backward) {
    in.dout = tensor(oshape, true);
    in.dq = tensor(qshape, false);
    in.dk = tensor(kshape, false);
    in.dv = tensor(vshape, false);
    add_buffer_grads(p, in);
  }
  if (!p.seq_lens.empty()) {  // a ragged batch: sequence b has seq_lens[b] queries and keys
    in.host_lens = p.seq_lens;
    in.storage.push_back(DeviceBuffer::from_host(in.host_lens));
    const TensorView lens = TensorView::contiguous(in.storage.back().data(), DType::i32, {p.batch});
    in.call.seq_lens.q_lens = lens;
    in.call.seq_lens.kv_lens = lens;
    in.call.seq_lens.host_q_lens = in.host_lens.data();
    in.call.seq_lens.host_kv_lens = in.host_lens.data();
    // Without a mask the work is each sequence's square; a mask's tables built with the lengths
    // count the blocks inside them.
    double pairs = 0;
    for (int32_t len : in.host_lens) pairs += double(len) * len;
    in.density = pairs / (double(p.batch) * p.q_len * p.kv_len);
  }
  if (!attention.mask_mod().is_always_true()) {
    in.mask = p.seq_lens.empty()
                  ? attention.block_mask(p.batch, p.q_heads, p.q_len, p.kv_len, nullptr, in.call.values)
                  : attention.block_mask(p.batch, p.q_heads, p.q_len, p.kv_len, in.call.seq_lens, nullptr, in.call.values);
    in.density = in.mask->density();
    if (mask_q_block != 128)  // the tables the call reads; the density stays the 128 x 128 ones'
      in.mask = p.seq_lens.empty()
                    ? BlockMask::build_on_gpu(attention.mask_mod(), p.batch, p.q_heads, p.q_len, p.kv_len,
                                              in.call.values, nullptr, mask_q_block, 128)
                    : BlockMask::build_on_gpu(attention.mask_mod(), p.batch, p.q_heads, p.q_len, p.kv_len,
                                              in.call.seq_lens, in.call.values, nullptr, mask_q_block, 128);
  }
  return in;
}

}  // namespace flexjit::cli
