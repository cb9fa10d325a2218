#include "common/npy.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <cstdlib>
#include <functional>

#include "common/files.hpp"

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
  // Shapes come from parse_npy (whose product of non-zero extents is overflow-checked) or from
  // our own code; a zero extent anywhere makes the array empty.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
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

namespace {

// NumPy itself refuses headers longer than 10000 bytes unless told otherwise; a little more room
// for hand-written files, but a fixed bound so that a hostile length field cannot make us allocate
// or scan without end.
constexpr size_t kMaxHeaderBytes = 65536;

// The header dict, parsed strictly: exactly the keys 'descr', 'fortran_order' and 'shape' (each
// once), Python literals for their values, nothing after the closing brace but spaces and the
// newline. Anything else is named with its offset in the header.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::function<void(const std::string&)>& fail)
      : text_(text), fail_(fail) {}

  struct Dict {
    std::string descr;
    bool fortran_order = false;
    std::vector<int64_t> shape;
    bool has_descr = false, has_fortran = false, has_shape = false;
  };

  Dict parse() {
    Dict d;
    skip_space();
    expect('{', "the header dict to start with '{'");
    skip_space();
    while (!at('}')) {
      const size_t key_at = pos_;
      const std::string key = string_literal("a quoted key");
      skip_space();
      expect(':', "':' after key '" + key + "'");
      skip_space();
      if (key == "descr") {
        if (d.has_descr) error_at(key_at, "repeats the key 'descr'");
        d.descr = string_literal("a quoted string as the value of 'descr'");
        d.has_descr = true;
      } else if (key == "fortran_order") {
        if (d.has_fortran) error_at(key_at, "repeats the key 'fortran_order'");
        d.fortran_order = boolean();
        d.has_fortran = true;
      } else if (key == "shape") {
        if (d.has_shape) error_at(key_at, "repeats the key 'shape'");
        d.shape = shape();
        d.has_shape = true;
      } else {
        error_at(key_at, "has the unknown key '" + key + "' (expected 'descr', 'fortran_order', 'shape')");
      }
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at('}')) {
        error_at(pos_, "needs ',' or '}' after the value of '" + key + "'");
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) error_at(pos_, "has text after the closing '}' of its dict");
    return d;
  }

 private:
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t')) ++pos_;
  }
  [[noreturn]] void error_at(size_t offset, const std::string& what) const {
    fail_("has a malformed header: it " + what + " (header offset " + std::to_string(offset) + ")");
    std::abort();  // fail_ throws
  }
  void expect(char c, const std::string& what) {
    if (!at(c)) error_at(pos_, pos_ < text_.size() ? "needs " + what : "ends early; expected " + what);
    ++pos_;
  }
  std::string string_literal(const std::string& what) {
    if (!at('\'') && !at('"')) error_at(pos_, "needs " + what);
    const char quote = text_[pos_++];
    const size_t begin = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' || text_[pos_] == '\n') error_at(pos_, "has an escape or line break inside a string");
      ++pos_;
    }
    if (pos_ == text_.size()) error_at(begin - 1, "has an unterminated string");
    return text_.substr(begin, pos_++ - begin);
  }
  bool boolean() {
    if (text_.compare(pos_, 4, "True") == 0) return pos_ += 4, true;
    if (text_.compare(pos_, 5, "False") == 0) return pos_ += 5, false;
    error_at(pos_, "needs True or False as the value of 'fortran_order'");
  }
  std::vector<int64_t> shape() {
    std::vector<int64_t> dims;
    expect('(', "a tuple '(...)' as the value of 'shape'");
    skip_space();
    while (!at(')')) {
      dims.push_back(dimension());
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at(')')) {
        error_at(pos_, "needs ',' or ')' after a dimension of 'shape'");
      }
    }
    ++pos_;
    return dims;
  }
  int64_t dimension() {
    const size_t begin = pos_;
    if (begin == text_.size()) error_at(begin, "ends early; expected a dimension or ')' in 'shape'");
    size_t end = pos_;
    while (end < text_.size() && std::strchr(" ,)}\n\t", text_[end]) == nullptr) ++end;
    const std::string word = text_.substr(begin, end - begin);
    const bool digits = !word.empty() && word.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      error_at(begin, "has the dimension '" + word + "' in 'shape'; dimensions are non-negative integers");
    int64_t value = 0;
    for (char c : word) {
      const int digit = c - '0';
      if (value > (INT64_MAX - digit) / 10) error_at(begin, "has the dimension " + word + " in 'shape', larger than 2^63-1");
      value = value * 10 + digit;
    }
    pos_ = end;
    return value;
  }

  const std::string& text_;
  const std::function<void(const std::string&)>& fail_;
  size_t pos_ = 0;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

NpyArray parse_npy(const std::string& bytes, const std::string& name) {
  const std::function<void(const std::string&)> fail = [&](const std::string& why) {
    throw UsageError("'" + name + "' " + why);
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0) fail("is not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail("is truncated");
    for (int i = 0; i < 4; ++i) header_len |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    fail("has .npy format version " + std::to_string(major) + " (supported: 1, 2, 3)");
  }
  if (header_len > kMaxHeaderBytes)
    fail("has a header of " + std::to_string(header_len) + " bytes; at most " + std::to_string(kMaxHeaderBytes) +
         " are accepted (NumPy writes under 10000)");
  if (bytes.size() < header_start + header_len) fail("is truncated (header)");
  const std::string header = bytes.substr(header_start, header_len);
  const HeaderParser::Dict dict = HeaderParser(header, fail).parse();
  if (!dict.has_descr) fail("has no 'descr' in its header");
  if (!dict.has_fortran) fail("has no 'fortran_order' in its header");
  if (!dict.has_shape) fail("has no 'shape' in its header");
  const std::string& descr = dict.descr;
  // The descr as a message shows it: a NUL or control byte would cut or garble the message.
  auto shown = [](const std::string& text) {
    std::string out;
    for (unsigned char c : text) {
      if (c >= 0x20 && c != 0x7f) {
        out += static_cast<char>(c);
      } else {
        static const char* const hex = "0123456789abcdef";
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
      }
    }
    return out;
  };
  NpyArray a;
  if (descr == "<f2") a.dtype = DType::f16;
  else if (descr == "<f4") a.dtype = DType::f32;
  else if (descr == "<i4") a.dtype = DType::i32;
  else if (descr == "|u1" || descr == "<u1") a.dtype = DType::u8;
  else if (descr == "<V2" || descr == "bfloat16" || descr == "<bf16") a.dtype = DType::bf16;
  else if (descr.size() > 0 && descr[0] == '>')
    fail("is big-endian ('" + shown(descr) + "'); save it little-endian");
  else
    fail("has element type '" + shown(descr) + "'; supported: float16, float32, int32, uint8, bfloat16 "
         "(convert with arr.astype(np.float32))");
  if (dict.fortran_order) fail("is in Fortran order; save a C-ordered array (np.ascontiguousarray)");
  a.shape = dict.shape;
  const size_t data_start = header_start + header_len;
  const size_t available = bytes.size() - data_start;
  // Element count and byte count checked against overflow before they are compared with the
  // data: a wrapped product would pass the size check and be read out of bounds later. The
  // non-zero extents are checked even when one extent is 0, so that every partial product of the
  // shape (strides, element counts in any order) fits in 64 bits; the array is then empty.
  uint64_t need = dtype_size(a.dtype);
  for (int64_t d : a.shape) {
    if (d == 0) continue;
    if (need > static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(d))
      fail("declares shape " + shape_text(a.shape) + ", more bytes than a 64-bit size can count");
    need *= static_cast<uint64_t>(d);
  }
  if (std::find(a.shape.begin(), a.shape.end(), 0) != a.shape.end()) need = 0;
  if (available < need)
    fail("is truncated: " + std::to_string(available) + " data bytes, the shape " + shape_text(a.shape) +
         " needs " + std::to_string(need));
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start),
                bytes.begin() + static_cast<std::ptrdiff_t>(data_start + need));
  return a;
}

NpyArray read_npy(const std::string& path) {
  std::string error;
  std::string bytes;
  switch (read_regular_file(path, UINT64_MAX, &bytes, &error)) {
    case ReadStatus::ok: break;
    case ReadStatus::missing: throw UsageError("cannot open '" + path + "': no such file");
    case ReadStatus::not_regular: throw UsageError("'" + path + "' " + error + "; expected a .npy file");
    case ReadStatus::too_large:
    case ReadStatus::failed: throw UsageError("cannot read '" + path + "': " + error);
  }
  return parse_npy(bytes, path);
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
