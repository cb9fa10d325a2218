#pragma once
// Element values as doubles <-> their bytes in a DType (16-bit floats rounded to nearest even,
// integers truncated): one conversion for .npy files, suite buffers and test data.
#include <vector>

#include "flexjit/dtype.hpp"

namespace flexjit {

std::vector<unsigned char> encode_values(const std::vector<double>& values, DType dtype);
std::vector<double> decode_values(const unsigned char* bytes, size_t count, DType dtype);

}  // namespace flexjit
