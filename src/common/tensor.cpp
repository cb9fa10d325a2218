#include "flexjit/tensor.hpp"

#include "flexjit/error.hpp"

namespace flexjit {

TensorView TensorView::contiguous(void* data, DType dtype, std::vector<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return {data, dtype, std::move(shape), std::move(strides)};
}

TensorView TensorView::strided(void* data, DType dtype, std::vector<int64_t> shape,
                               std::vector<int64_t> strides) {
  if (shape.size() != strides.size())
    throw ShapeError("tensor view has " + std::to_string(shape.size()) + " dimensions but " +
                     std::to_string(strides.size()) + " strides; give one stride per dimension");
  return {data, dtype, std::move(shape), std::move(strides)};
}

int64_t TensorView::numel() const noexcept {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

bool TensorView::is_contiguous() const noexcept {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

static std::string join(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out;
}

std::string TensorView::describe() const {
  return std::string(dtype_name(dtype)) + "[" + join(shape) + "] strides [" + join(strides) + "]";
}

}  // namespace flexjit
