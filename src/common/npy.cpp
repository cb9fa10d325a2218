#include "common/npy.hpp"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/values.hpp"
#include "flexjit/error.hpp"

namespace flexjit {

namespace {

const char kMagic[] = "\x93NUMPY";

std::string descr_of(DType dtype) {
  switch (dtype) {
    case DType::f16: return "<f2";
    case DType::bf16: return "bfloat16";
    case DType::f32: return "<f4";
    case DType::i32: return "<i4";
    case DType::u8: return "|u1";
  }
  return "?";
}

}  // namespace

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

std::vector<double> NpyArray::to_doubles() const {
  return decode_values(data.data(), static_cast<size_t>(numel()), dtype);
}

NpyArray NpyArray::from_doubles(const std::vector<double>& values, DType dtype, std::vector<int64_t> shape) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.data = encode_values(values, dtype);
  return a;
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot open '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto fail = [&](const std::string& why) -> NpyArray { throw UsageError("'" + path + "' " + why); };
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0) return fail("is not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return fail("is truncated");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    return fail("has .npy format version " + std::to_string(major) + " (supported: 1, 2, 3)");
  }
  if (bytes.size() < header_start + header_len) return fail("is truncated (header)");
  const std::string header = bytes.substr(header_start, header_len);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')")))
    return fail("has no 'descr' in its header");
  const std::string descr = m[1];
  NpyArray a;
  if (descr == "<f2") a.dtype = DType::f16;
  else if (descr == "<f4") a.dtype = DType::f32;
  else if (descr == "<i4") a.dtype = DType::i32;
  else if (descr == "|u1" || descr == "<u1") a.dtype = DType::u8;
  else if (descr == "<V2" || descr == "bfloat16" || descr == "<bf16") a.dtype = DType::bf16;
  else if (descr.size() > 0 && descr[0] == '>')
    return fail("is big-endian ('" + descr + "'); save it little-endian");
  else
    return fail("has element type '" + descr + "'; supported: float16, float32, int32, uint8, bfloat16 "
                "(convert with arr.astype(np.float32))");
  if (std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*True)")))
    return fail("is in Fortran order; save a C-ordered array (np.ascontiguousarray)");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")))
    return fail("has no 'shape' in its header");
  std::stringstream dims(m[1].str());
  for (std::string d; std::getline(dims, d, ',');) {
    d.erase(0, d.find_first_not_of(" "));
    if (d.empty()) continue;
    a.shape.push_back(std::stoll(d));
  }
  const size_t data_start = header_start + header_len;
  const size_t need = static_cast<size_t>(a.numel()) * dtype_size(a.dtype);
  if (bytes.size() - data_start < need)
    return fail("is truncated: " + std::to_string(bytes.size() - data_start) + " data bytes, the shape needs " +
                std::to_string(need));
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start),
                bytes.begin() + static_cast<std::ptrdiff_t>(data_start + need));
  return a;
}

void write_npy(const std::string& path, const NpyArray& a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i) shape += std::to_string(a.shape[i]) + ", ";
  if (a.shape.size() > 1) shape.erase(shape.size() - 2);  // "(3, 4)" but "(3,)"
  else if (a.shape.size() == 1) shape.erase(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + descr_of(a.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(a.data.data()), a.data.size());
  std::ofstream f(path, std::ios::binary);
  if (!f) throw UsageError("cannot write '" + path + "'");
  f << out;
  if (!f) throw UsageError("writing '" + path + "' failed");
}

}  // namespace flexjit
