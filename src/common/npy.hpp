#pragma once
// Reading and writing NumPy .npy files (format versions 1-3, little-endian, C order), for the CLI.
// Supported element types: float16 '<f2', float32 '<f4', int32 '<i4', uint8 '|u1', and bfloat16
// as written by ml_dtypes ('<V2' or 'bfloat16').
#include <cstdint>
#include <string>
#include <vector>

#include "flexjit/dtype.hpp"

namespace flexjit {

struct NpyArray {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;  // raw little-endian elements, C order

  int64_t numel() const;
  // Values as doubles (converted from the stored type).
  std::vector<double> to_doubles() const;
  // An array of `dtype` holding `values` (rounded to nearest even for 16-bit floats).
  static NpyArray from_doubles(const std::vector<double>& values, DType dtype, std::vector<int64_t> shape);
};

// Throws UsageError naming the file and what is wrong (not .npy, big-endian, Fortran order,
// unsupported dtype, truncated data).
// Only regular files are read (a directory, FIFO or device is refused by name).
NpyArray read_npy(const std::string& path);
// The same checks on the bytes of a file already in memory; `name` is used in messages. The
// header dict is parsed strictly and the element count is overflow-checked.
NpyArray parse_npy(const std::string& bytes, const std::string& name);
void write_npy(const std::string& path, const NpyArray& array);

}  // namespace flexjit
