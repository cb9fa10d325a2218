#pragma once
/// \file
/// TensorView: a non-owning description of a tensor in device (or host) memory: pointer, element
/// type, shape and strides. flexjit never allocates or copies the caller's tensors.

#include <cstdint>
#include <string>
#include <vector>

#include "flexjit/dtype.hpp"

namespace flexjit {

/// A strided view of memory. Strides are in elements (not bytes), one per dimension.
struct TensorView {
  void* data = nullptr;          ///< first element (device pointer for kernel arguments)
  DType dtype = DType::bf16;     ///< element type
  std::vector<int64_t> shape;    ///< extent of each dimension
  std::vector<int64_t> strides;  ///< elements between neighbours along each dimension

  /// A row-major contiguous view of `shape` at `data`.
  static TensorView contiguous(void* data, DType dtype, std::vector<int64_t> shape);
  /// A view with explicit strides (must have one stride per dimension).
  static TensorView strided(void* data, DType dtype, std::vector<int64_t> shape,
                            std::vector<int64_t> strides);
  /// Number of dimensions.
  int rank() const noexcept { return static_cast<int>(shape.size()); }
  /// Product of the extents.
  int64_t numel() const noexcept;
  /// True when the strides are those of a row-major contiguous tensor of this shape.
  bool is_contiguous() const noexcept;
  /// "bf16[4, 16, 4096, 128] strides [8388608, 524288, 128, 1]", for messages.
  std::string describe() const;
};

}  // namespace flexjit
