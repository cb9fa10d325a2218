#include "attention/tensor_checks.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <limits>

#include "flexjit/error.hpp"

namespace flexjit::attention {

namespace {

const char* const kDimNames[] = {"B", "H", "S", "D"};

std::string dim_label(int d) { return std::to_string(d) + " (" + kDimNames[d] + ")"; }

std::string list(std::initializer_list<long long> values) {
  std::string out = "[";
  bool first = true;
  for (long long v : values) {
    out += (first ? "" : ", ") + std::to_string(v);
    first = false;
  }
  return out + "]";
}

void check_fits_int(const TensorView& t, const char* name) {
  for (int d = 0; d < t.rank(); ++d)
    if (t.shape[d] > std::numeric_limits<int32_t>::max() || t.shape[d] < 1)
      throw ShapeError(std::string(name) + " dimension " + std::to_string(d) + " has extent " +
                       std::to_string(t.shape[d]) + "; extents must be between 1 and 2^31-1");
}

void expect_dim(const TensorView& t, const char* name, int d, long long want, const std::string& why) {
  if (t.shape[d] != want)
    throw ShapeError(std::string(name) + " dimension " + dim_label(d) + " is " +
                     std::to_string(t.shape[d]) + ", but " + why);
}

}  // namespace

void check_operand(const TensorView& t, const char* name, DType dtype) {
  if (t.data == nullptr) throw ShapeError(std::string(name) + " has a null data pointer");
  if (t.rank() != 4 || t.strides.size() != 4)
    throw ShapeError(std::string(name) + " must have 4 dimensions [B, H, S, D], got " + t.describe());
  check_fits_int(t, name);
  if (t.dtype != dtype)
    throw ShapeError(std::string(name) + " is " + std::string(dtype_name(t.dtype)) +
                     " but the variant computes in " + std::string(dtype_name(dtype)) +
                     "; convert the tensor or compile the variant for " +
                     std::string(dtype_name(t.dtype)));
  if (t.strides[3] != 1)
    throw ShapeError(std::string(name) + " dimension 3 (D) must be contiguous (stride 1), got stride " +
                     std::to_string(t.strides[3]) + " in " + t.describe());
  const int64_t vector = 16 / static_cast<int64_t>(dtype_size(dtype));
  for (int d = 0; d < 3; ++d)
    if (t.strides[d] % vector != 0)
      throw ShapeError(std::string(name) + " stride of dimension " + dim_label(d) + " is " +
                       std::to_string(t.strides[d]) + " elements; kernels load 16-byte vectors, so " +
                       "strides must be multiples of " + std::to_string(vector) +
                       " elements (pad the rows or make the tensor contiguous)");
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
    throw ShapeError(std::string(name) + " data pointer is not 16-byte aligned; kernels load "
                     "16-byte vectors (allocations from cuMemAlloc/cudaMalloc are aligned)");
}

ProblemShape check_forward_tensors(const TensorView& q, const TensorView& k, const TensorView& v,
                                   const TensorView& out, const TensorView& lse, DType dtype,
                                   int head_dim, int head_dim_v) {
  check_operand(q, "q", dtype);
  check_operand(k, "k", dtype);
  check_operand(v, "v", dtype);
  check_operand(out, "out", dtype);
  ProblemShape s;
  s.batch = static_cast<int>(q.shape[0]);
  s.q_heads = static_cast<int>(q.shape[1]);
  s.q_len = static_cast<int>(q.shape[2]);
  s.kv_heads = static_cast<int>(k.shape[1]);
  s.kv_len = static_cast<int>(k.shape[2]);
  s.head_dim = head_dim;
  s.head_dim_v = head_dim_v;
  expect_dim(q, "q", 3, head_dim, "the variant was compiled for head_dim " + std::to_string(head_dim));
  expect_dim(k, "k", 0, s.batch, "q has B = " + std::to_string(s.batch));
  expect_dim(k, "k", 3, head_dim, "the variant was compiled for head_dim " + std::to_string(head_dim));
  expect_dim(v, "v", 0, s.batch, "q has B = " + std::to_string(s.batch));
  expect_dim(v, "v", 1, s.kv_heads, "k has " + std::to_string(s.kv_heads) + " heads");
  expect_dim(v, "v", 2, s.kv_len, "k has S = " + std::to_string(s.kv_len));
  expect_dim(v, "v", 3, head_dim_v,
             "the variant was compiled for head_dim_v " + std::to_string(head_dim_v));
  if (s.q_heads % s.kv_heads != 0)
    throw ShapeError("q has " + std::to_string(s.q_heads) + " heads and k has " +
                     std::to_string(s.kv_heads) +
                     ": the query heads must be a multiple of the kv heads (GQA/MQA)");
  if (out.shape != std::vector<int64_t>{s.batch, s.q_heads, s.q_len, head_dim_v})
    throw ShapeError("out must be [B, Hq, Sq, Dv] = " +
                     list({s.batch, s.q_heads, s.q_len, head_dim_v}) + ", got " + out.describe());
  if (s.batch > 65535 || s.q_heads > 65535)
    throw ShapeError("batch and query heads must each be at most 65535 (grid limits), got B = " +
                     std::to_string(s.batch) + ", Hq = " + std::to_string(s.q_heads));
  if (s.q_len > kMaxSequenceLength || s.kv_len > kMaxSequenceLength)
    throw ShapeError("sequence lengths must be at most 2^30 = 1073741824 (the kernels count rows and keys in "
                     "32-bit integers), got Sq = " + std::to_string(s.q_len) + ", Skv = " + std::to_string(s.kv_len));
  if (lse.data != nullptr) check_row_stats(lse, "lse", s);
  return s;
}

void check_written(const TensorView& t, const char* name) {
  for (int d = 0; d < t.rank() && d < static_cast<int>(t.strides.size()); ++d)
    if (t.strides[d] == 0 && t.shape[d] > 1)
      throw ShapeError(std::string(name) + " has stride 0 in dimension " + std::to_string(d) + " (extent " +
                       std::to_string(t.shape[d]) + "): its elements would overwrite each other; pass an output "
                       "tensor of its own, got " + t.describe());
}

void check_row_stats(const TensorView& t, const char* name, const ProblemShape& s) {
  if (t.dtype != DType::f32 || t.shape != std::vector<int64_t>{s.batch, s.q_heads, s.q_len} ||
      t.strides.size() != 3)
    throw ShapeError(std::string(name) + " must be f32 [B, Hq, Sq] = " +
                     list({s.batch, s.q_heads, s.q_len}) + ", got " + t.describe());
  if (reinterpret_cast<uintptr_t>(t.data) % 4 != 0)
    throw ShapeError(std::string(name) + " data pointer is not 4-byte aligned");
}

void check_block_mask(const BlockMask& mask, const ProblemShape& s) {
  const BlockMaskShape& m = mask.shape();
  if (m.q_len != s.q_len || m.kv_len != s.kv_len)
    throw ShapeError("block mask was built for q_len " + std::to_string(m.q_len) + ", kv_len " +
                     std::to_string(m.kv_len) + " but the tensors have q_len " +
                     std::to_string(s.q_len) + ", kv_len " + std::to_string(s.kv_len) +
                     "; build the mask for these lengths");
  if (m.batch != 1 && m.batch != s.batch)
    throw ShapeError("block mask has batch " + std::to_string(m.batch) + " but q has B = " +
                     std::to_string(s.batch) + " (a mask batch must be 1 or B)");
  if (m.heads != 1 && m.heads != s.q_heads)
    throw ShapeError("block mask has " + std::to_string(m.heads) + " heads but q has " +
                     std::to_string(s.q_heads) + " (mask heads must be 1 or the query heads)");
}

// A scale the caller gives is used as given or refused: negative is legal (the forward then takes
// the general score path, KernelSpec::negative_scale), 0, infinities and NaN are not.
float checked_scale(std::optional<float> given, int head_dim, const char* what) {
  const float scale = given.value_or(1.0f / std::sqrt(static_cast<float>(head_dim)));
  if (std::isnan(scale) || std::isinf(scale) || scale == 0.f)
    throw UsageError(std::string(what) + ": scale must be a finite non-zero number (negative is allowed), got " +
                     (std::isnan(scale) ? std::string("nan") : std::isinf(scale) ? (scale > 0 ? "inf" : "-inf") : "0"));
  return scale;
}

}  // namespace flexjit::attention
