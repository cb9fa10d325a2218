#pragma once
// DLPack tensors as the C API receives them: validation with messages that name the function and
// the argument, conversion to TensorViews (GPU calls) and to float64 host arrays (the CPU
// reference).
#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flexjit/dtype.hpp"
#include "flexjit/reference.hpp"
#include "flexjit/tensor.hpp"

namespace flexjit::capi {

// The device of the first GPU tensor of a call, so a tensor on another device is named.
struct DeviceCheck {
  int device_id = -1;
  std::string first;
};

// "float16", "bfloat16", "float32", "int32", ... or "code C bits B lanes L".
std::string dl_dtype_name(DLDataType dtype);
// "[2, 3, 4]".
std::string shape_text(const std::vector<int64_t>& shape);

// A kDLCUDA / kDLCUDAManaged tensor as a TensorView (data + byte_offset, strides in elements;
// NULL strides: row-major). `ndim` -1 accepts rank 1..8. Throws UsageError for NULL, ShapeError
// for anything else that is wrong.
TensorView device_view(const DLTensor* tensor, const char* function, const std::string& name, int ndim,
                       DeviceCheck& devices);

// A host input of the reference, converted to float64, row-major.
struct HostTensor {
  std::vector<double> values;
  std::vector<int64_t> shape;
};
HostTensor host_input(const DLTensor* tensor, const char* function, const std::string& name, int ndim);

// A host buffer of the mods, copied row-major in its own dtype (the interpreter reads it).
struct HostArray {
  std::vector<unsigned char> bytes;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
};
HostArray host_copy(const DLTensor* tensor, const char* function, const std::string& name);

// Checks an output of the reference: kDLCPU, float32 or float64, exactly `shape`.
void check_host_output(const DLTensor* tensor, const char* function, const std::string& name,
                       const std::vector<int64_t>& shape);
// Writes row-major `values` into a checked output (through its strides).
void write_host_output(const DLTensor* tensor, const std::vector<double>& values);

// Sizes of q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv], checked to fit together.
ReferenceShape reference_shape(const HostTensor& q, const HostTensor& k, const HostTensor& v, const char* function);

}  // namespace flexjit::capi
