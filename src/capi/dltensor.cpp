// DLTensor validation and conversion for the C API (see dltensor.hpp).
#include "capi/dltensor.hpp"

#include <cstdint>
#include <cstring>
#include <limits>

#include "common/half.hpp"
#include "flexjit/error.hpp"

namespace flexjit::capi {
namespace {

const char* device_type_name(int type) {
  switch (type) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLOpenCL: return "kDLOpenCL";
    case kDLVulkan: return "kDLVulkan";
    case kDLMetal: return "kDLMetal";
    case kDLVPI: return "kDLVPI";
    case kDLROCM: return "kDLROCM";
    case kDLROCMHost: return "kDLROCMHost";
    case kDLExtDev: return "kDLExtDev";
    case kDLCUDAManaged: return "kDLCUDAManaged";
    default: return "an unknown device type";
  }
}

std::string prefix(const char* function, const std::string& name) { return std::string(function) + ": " + name; }

// Element type of a DLPack dtype, or false.
bool dtype_of(DLDataType t, DType& out) {
  if (t.lanes != 1) return false;
  if (t.code == kDLFloat && t.bits == 16) out = DType::f16;
  else if (t.code == kDLBfloat && t.bits == 16) out = DType::bf16;
  else if (t.code == kDLFloat && t.bits == 32) out = DType::f32;
  else if (t.code == kDLInt && t.bits == 32) out = DType::i32;
  else if (t.code == kDLUInt && t.bits == 8) out = DType::u8;
  else return false;
  return true;
}

bool is_f64(DLDataType t) { return t.code == kDLFloat && t.bits == 64 && t.lanes == 1; }

// Checks what every tensor needs (pointer, rank, shape, strides, byte_offset) and returns its shape
// and element strides (row-major when strides is NULL).
struct Layout {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t numel = 1;
};

Layout checked_layout(const DLTensor* t, const char* function, const std::string& name, int ndim, size_t elem_size) {
  if (t->ndim < 0 || t->ndim > 8 || (ndim >= 0 && t->ndim != ndim))
    throw ShapeError(prefix(function, name) + " has ndim " + std::to_string(t->ndim) + ": expected " +
                     (ndim >= 0 ? std::to_string(ndim) +
                                      (ndim == 4 ? " ([B, H, S, D])" : ndim == 3 ? " ([B, Hq, Sq])" : "")
                                : std::string("1 to 8")));
  Layout l;
  if (t->ndim > 0 && t->shape == nullptr) throw ShapeError(prefix(function, name) + ".shape is NULL");
  l.shape.assign(t->shape, t->shape + t->ndim);
  for (int i = 0; i < t->ndim; ++i) {
    if (l.shape[i] < 0)
      throw ShapeError(prefix(function, name) + " has a negative extent " + std::to_string(l.shape[i]) +
                       " in dimension " + std::to_string(i) + " (shape " + shape_text(l.shape) + ")");
    if (l.shape[i] > 0 && l.numel > std::numeric_limits<int64_t>::max() / l.shape[i])
      throw ShapeError(prefix(function, name) + " has more elements than fit in 64 bits (shape " + shape_text(l.shape) + ")");
    l.numel *= l.shape[i];
  }
  l.strides.assign(static_cast<size_t>(t->ndim), 1);
  if (t->strides == nullptr) {
    for (int i = t->ndim - 2; i >= 0; --i) l.strides[i] = l.strides[i + 1] * l.shape[i + 1];
  } else {
    l.strides.assign(t->strides, t->strides + t->ndim);
    for (int i = 0; i < t->ndim; ++i)
      if (l.strides[i] < 0)
        throw ShapeError(prefix(function, name) + " has a negative stride " + std::to_string(l.strides[i]) +
                         " in dimension " + std::to_string(i) + ": pass a tensor with non-negative strides (e.g. a copy)");
  }
  // The bytes the tensor spans, from data + byte_offset to its last element: beyond 2^62 no real
  // tensor exists, and the address arithmetic below would overflow (and wrap onto other memory).
  if (l.numel > 0) {
    constexpr uint64_t kMaxSpan = uint64_t{1} << 62;
    uint64_t span = 0;
    bool overflow = false;
    for (size_t d = 0; d < l.shape.size(); ++d) {
      uint64_t reach = 0;
      overflow |= __builtin_mul_overflow(static_cast<uint64_t>(l.shape[d] - 1), static_cast<uint64_t>(l.strides[d]), &reach);
      overflow |= __builtin_add_overflow(span, reach, &span);
    }
    overflow |= __builtin_add_overflow(span, uint64_t{1}, &span);
    overflow |= __builtin_mul_overflow(span, static_cast<uint64_t>(elem_size), &span);
    overflow |= __builtin_add_overflow(span, static_cast<uint64_t>(t->byte_offset), &span);
    if (overflow || span > kMaxSpan)
      throw ShapeError(prefix(function, name) + " spans more than 2^62 bytes (shape " + shape_text(l.shape) +
                       ", strides " + shape_text(l.strides) + ", byte_offset " + std::to_string(t->byte_offset) +
                       "): no memory holds it; check the strides and byte_offset");
  }
  if (t->byte_offset % elem_size != 0)
    throw ShapeError(prefix(function, name) + ".byte_offset " + std::to_string(t->byte_offset) +
                     " is not a multiple of the element size " + std::to_string(elem_size) + " bytes");
  if (t->data == nullptr && l.numel > 0)
    throw ShapeError(prefix(function, name) + ".data is NULL but the tensor has " + std::to_string(l.numel) + " elements");
  return l;
}

void require_tensor(const DLTensor* t, const char* function, const std::string& name) {
  if (t == nullptr) throw UsageError(prefix(function, name) + " is NULL: pass a DLTensor");
}

// The device type as the int the caller stored: a value outside this header's enum (a newer
// DLPack's, or garbage) must not be loaded as the enum.
int raw_device_type(const DLTensor* t) {
  int value = 0;
  static_assert(sizeof(t->device.device_type) == sizeof(int), "DLDeviceType is an int-sized enum");
  std::memcpy(&value, &t->device.device_type, sizeof value);
  return value;
}

void require_host(const DLTensor* t, const char* function, const std::string& name) {
  const int type = raw_device_type(t);
  if (type != kDLCPU && type != kDLCUDAHost)
    throw ShapeError(prefix(function, name) + " is in " + device_type_name(type) +
                     " memory (device_type " + std::to_string(type) +
                     "): the CPU reference needs host tensors (kDLCPU)");
}

const unsigned char* base_of(const DLTensor* t) {
  return static_cast<const unsigned char*>(t->data) + t->byte_offset;
}

// Calls f(row-major index, element pointer) for every element, following the strides.
template <class F>
void for_each_element(const unsigned char* base, const Layout& l, size_t elem_size, F&& f) {
  if (l.numel == 0) return;
  const size_t rank = l.shape.size();
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < l.numel; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * l.strides[d];
    f(i, base + offset * static_cast<int64_t>(elem_size));
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < l.shape[d]) break;
      index[d] = 0;
    }
  }
}

double read_element(const unsigned char* p, DLDataType t) {
  if (is_f64(t)) {
    double x;
    std::memcpy(&x, p, 8);
    return x;
  }
  DType d = DType::f32;
  dtype_of(t, d);
  switch (d) {
    case DType::f16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return f16_bits_to_float(h);
    }
    case DType::bf16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16_bits_to_float(h);
    }
    case DType::f32: {
      float x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case DType::i32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case DType::u8: return *p;
  }
  return 0;
}

}  // namespace

std::string dl_dtype_name(DLDataType t) {
  std::string base;
  if (t.code == kDLFloat) base = "float" + std::to_string(t.bits);
  else if (t.code == kDLBfloat) base = "bfloat" + std::to_string(t.bits);
  else if (t.code == kDLInt) base = "int" + std::to_string(t.bits);
  else if (t.code == kDLUInt) base = "uint" + std::to_string(t.bits);
  else if (t.code == kDLComplex) base = "complex" + std::to_string(t.bits);
  else base = "code " + std::to_string(t.code) + " bits " + std::to_string(t.bits);
  if (t.lanes != 1) base += " x" + std::to_string(t.lanes) + " lanes";
  return base;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

TensorView device_view(const DLTensor* t, const char* function, const std::string& name, int ndim,
                       DeviceCheck& devices) {
  require_tensor(t, function, name);
  const int type = raw_device_type(t);
  if (type != kDLCUDA && type != kDLCUDAManaged)
    throw ShapeError(prefix(function, name) + " is in " + device_type_name(type) +
                     " memory (device_type " + std::to_string(type) +
                     "): GPU calls need CUDA tensors (kDLCUDA); host tensors go to the CPU reference of the same call "
                     "(flexjit_reference_forward, flexjit_reference_backward or flexjit_reference_decode)");
  if (devices.device_id < 0) {
    devices.device_id = t->device.device_id;
    devices.first = name;
  } else if (t->device.device_id != devices.device_id) {
    throw ShapeError(prefix(function, name) + " is on CUDA device " + std::to_string(t->device.device_id) + " but " +
                     devices.first + " on device " + std::to_string(devices.device_id) +
                     ": every tensor of a call must be on one device");
  }
  DType dtype = DType::f32;
  if (!dtype_of(t->dtype, dtype))
    throw ShapeError(prefix(function, name) + " has dtype " + dl_dtype_name(t->dtype) +
                     ": GPU tensors must be float16, bfloat16, float32, int32 or uint8 (one lane)");
  const Layout l = checked_layout(t, function, name, ndim, dtype_size(dtype));
  return TensorView::strided(const_cast<unsigned char*>(base_of(t)), dtype, l.shape, l.strides);
}

HostTensor host_input(const DLTensor* t, const char* function, const std::string& name, int ndim) {
  require_tensor(t, function, name);
  require_host(t, function, name);
  DType d = DType::f32;
  const bool floating = is_f64(t->dtype) || (dtype_of(t->dtype, d) && (d == DType::f16 || d == DType::bf16 || d == DType::f32));
  if (!floating)
    throw ShapeError(prefix(function, name) + " has dtype " + dl_dtype_name(t->dtype) +
                     ": the CPU reference reads float16, bfloat16, float32 or float64");
  const size_t elem = t->dtype.bits / 8;
  const Layout l = checked_layout(t, function, name, ndim, elem);
  // Attention operands: every extent from 1 (an empty q, cache or head has nothing to attend; a
  // sequence of no keys is a length of 0) to the reference's int; the copy is float64 on the host.
  for (size_t i = 0; i < l.shape.size(); ++i)
    if (l.shape[i] < 1 || l.shape[i] > std::numeric_limits<int32_t>::max())
      throw ShapeError(prefix(function, name) + " has extent " + std::to_string(l.shape[i]) + " in dimension " +
                       std::to_string(i) + " (shape " + shape_text(l.shape) + "); every extent must be between 1 and "
                       "2^31-1");
  constexpr int64_t kMaxElements = int64_t{1} << 31;
  if (l.numel > kMaxElements)
    throw ShapeError(prefix(function, name) + " has " + std::to_string(l.numel) + " elements; the CPU reference copies "
                     "its inputs to float64 and takes at most 2^31 elements a tensor");
  HostTensor out;
  out.shape = l.shape;
  out.values.resize(static_cast<size_t>(l.numel));
  for_each_element(base_of(t), l, elem, [&](int64_t i, const unsigned char* p) { out.values[i] = read_element(p, t->dtype); });
  return out;
}

HostArray host_copy(const DLTensor* t, const char* function, const std::string& name) {
  require_tensor(t, function, name);
  require_host(t, function, name);
  HostArray out;
  if (!dtype_of(t->dtype, out.dtype))
    throw ShapeError(prefix(function, name) + " has dtype " + dl_dtype_name(t->dtype) +
                     ": buffers are float16, bfloat16, float32, int32 or uint8 (as declared)");
  const size_t elem = dtype_size(out.dtype);
  const Layout l = checked_layout(t, function, name, -1, elem);
  out.shape = l.shape;
  out.bytes.resize(static_cast<size_t>(l.numel) * elem);
  for_each_element(base_of(t), l, elem,
                   [&](int64_t i, const unsigned char* p) { std::memcpy(&out.bytes[static_cast<size_t>(i) * elem], p, elem); });
  return out;
}

void check_host_output(const DLTensor* t, const char* function, const std::string& name,
                       const std::vector<int64_t>& shape) {
  require_tensor(t, function, name);
  require_host(t, function, name);
  if (!is_f64(t->dtype) && !(t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1))
    throw ShapeError(prefix(function, name) + " has dtype " + dl_dtype_name(t->dtype) +
                     ": the CPU reference writes float32 or float64");
  const Layout l = checked_layout(t, function, name, static_cast<int>(shape.size()), t->dtype.bits / 8);
  if (l.shape != shape)
    throw ShapeError(prefix(function, name) + " has shape " + shape_text(l.shape) + ": expected " + shape_text(shape));
  for (size_t d = 0; d < l.shape.size(); ++d)
    if (l.strides[d] == 0 && l.shape[d] > 1)
      throw ShapeError(prefix(function, name) + " has stride 0 in dimension " + std::to_string(d) + " (extent " +
                       std::to_string(l.shape[d]) + "): its elements would overwrite each other; pass an output "
                       "tensor of its own");
}

void write_host_output(const DLTensor* t, const std::vector<double>& values) {
  const size_t elem = t->dtype.bits / 8;
  Layout l;
  l.shape.assign(t->shape, t->shape + t->ndim);
  for (int64_t e : l.shape) l.numel *= e;
  l.strides.assign(static_cast<size_t>(t->ndim), 1);
  if (t->strides == nullptr) {
    for (int i = t->ndim - 2; i >= 0; --i) l.strides[i] = l.strides[i + 1] * l.shape[i + 1];
  } else {
    l.strides.assign(t->strides, t->strides + t->ndim);
  }
  unsigned char* base = static_cast<unsigned char*>(t->data) + t->byte_offset;
  for_each_element(base, l, elem, [&](int64_t i, const unsigned char* p) {
    unsigned char* out = const_cast<unsigned char*>(p);
    if (elem == 8) {
      std::memcpy(out, &values[static_cast<size_t>(i)], 8);
    } else {
      const float x = static_cast<float>(values[static_cast<size_t>(i)]);
      std::memcpy(out, &x, 4);
    }
  });
}

ReferenceShape reference_shape(const HostTensor& q, const HostTensor& k, const HostTensor& v, const char* function) {
  const auto& qs = q.shape;
  const auto& ks = k.shape;
  const auto& vs = v.shape;
  const std::string fn = function;
  if (ks[0] != qs[0] || vs[0] != qs[0] || vs[1] != ks[1] || vs[2] != ks[2] || ks[3] != qs[3])
    throw ShapeError(fn + ": q " + shape_text(qs) + ", k " + shape_text(ks) + " and v " + shape_text(vs) +
                     " do not fit together: q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv]");
  if (ks[1] == 0 || qs[1] % ks[1] != 0)
    throw ShapeError(fn + ": q has " + std::to_string(qs[1]) + " heads and k " + std::to_string(ks[1]) +
                     ": the kv heads must divide the query heads (GQA)");
  for (const auto* s : {&qs, &ks, &vs})
    for (int64_t e : *s)
      if (e > std::numeric_limits<int>::max())
        throw ShapeError(fn + ": extent " + std::to_string(e) + " does not fit in 32 bits");
  return ReferenceShape{static_cast<int>(qs[0]), static_cast<int>(qs[1]), static_cast<int>(ks[1]),
                        static_cast<int>(qs[2]), static_cast<int>(ks[2]), static_cast<int>(qs[3]),
                        static_cast<int>(vs[3])};
}

}  // namespace flexjit::capi
