#include "flexjit/problem_suite.hpp"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/files.hpp"
#include "expr/declarations.hpp"
#include "flexjit/error.hpp"

namespace flexjit {

namespace {

using nlohmann::json;

// Shapes, lengths and head counts: the kernels count rows and keys in 32-bit integers (see
// tensor_checks.cpp), and every other extent is held in an int.
constexpr int64_t kMaxExtent = int64_t{1} << 30;
const char* const kMaxExtentText = "2^30 = 1073741824";
// Elements a generated buffer may hold: its values are built on the host (as doubles) before upload.
constexpr int64_t kMaxBufferElements = int64_t{1} << 30;
const char* const kMaxBufferElementsText = "2^30 = 1073741824";
// Largest suite file read (bench/suite.json is about 12 KiB).
constexpr uint64_t kMaxSuiteBytes = uint64_t{64} << 20;

// The integer a JSON number holds, or nullopt for a float, a string, .... Unsigned values above
// INT64_MAX come back as INT64_MAX: outside every limit checked here, and messages show the
// value as written (json::dump), never this clamped one.
std::optional<int64_t> integer_of(const json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    return u > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

// A JSON value as quoted in a message: scalars as written (long strings cut short), containers by
// kind (a deep one would make dump() recurse without bound, a big one the message unreadable).
std::string shown(const json& v) {
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  std::string text = v.dump();
  if (text.size() > 64) {
    size_t cut = 60;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    text = text.substr(0, cut) + "...";
  }
  return text;
}

int get_int(const json& j, const char* key, const std::string& where, std::optional<int> fallback = {}) {
  if (!j.contains(key)) {
    if (fallback) return *fallback;
    throw UsageError(where + ": missing \"" + key + "\"");
  }
  const json& v = j[key];
  const std::optional<int64_t> n = integer_of(v);
  if (!n || *n < 1) throw UsageError(where + ": \"" + key + "\" must be a positive integer, got " + shown(v));
  if (*n > kMaxExtent)
    throw UsageError(where + ": \"" + key + "\" = " + shown(v) + " is too large; the limit is " + kMaxExtentText);
  return static_cast<int>(*n);
}

std::string get_string(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return "";
  if (!j[key].is_string()) throw UsageError(where + ": \"" + key + "\" must be a string");
  return j[key].get<std::string>();
}

// The list under `key` of a buffer spec: a non-empty JSON array.
const json& get_list(const json& j, const char* key, const std::string& w, const std::string& what) {
  const json& v = j[key];
  if (!v.is_array() || v.empty())
    throw UsageError(w + ": \"" + key + "\" must be a non-empty array of " + what + ", got " +
                     (v.is_array() ? "[]" : shown(v)));
  return v;
}

// The finite range of each dtype, for "const" values (the tools convert them to the dtype when
// uploading; beyond it a float would become inf and an integer wrap).
struct DTypeRange {
  double lo, hi;
  bool whole;        // integers only
  const char* text;  // the range, as the message shows it
};

DTypeRange range_of(DType dtype) {
  switch (dtype) {
    case DType::f32: return {-FLT_MAX, FLT_MAX, false, "|x| <= 3.4028235e+38"};
    case DType::f16: return {-65504.0, 65504.0, false, "|x| <= 65504"};
    case DType::bf16: return {-3.3895313892515355e38, 3.3895313892515355e38, false, "|x| <= 3.3895314e+38"};
    case DType::i32: return {-2147483648.0, 2147483647.0, true, "whole numbers in [-2147483648, 2147483647]"};
    case DType::u8: return {0.0, 255.0, true, "whole numbers in [0, 255]"};
  }
  return {0.0, 0.0, true, "nothing"};
}

// Largest document id a "segments" buffer of this dtype holds exactly.
int64_t max_document_id(DType dtype) {
  switch (dtype) {
    case DType::f32: return int64_t{1} << 24;
    case DType::f16: return 2048;
    case DType::bf16: return 256;
    case DType::i32: return INT32_MAX;
    case DType::u8: return 255;
  }
  return 0;
}

bool is_float(DType dtype) { return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16; }

SuiteBuffer parse_buffer(const std::string& name, const json& j, const std::string& where) {
  SuiteBuffer b;
  b.name = name;
  const std::string w = where + ", buffer '" + name + "'";
  if (!j.is_object()) throw UsageError(w + ": must be an object");
  const std::string dtype = get_string(j, "dtype", w);
  auto parsed = parse_dtype(dtype.empty() ? "f32" : dtype);
  if (!parsed) throw UsageError(w + ": unknown dtype '" + dtype + "' (i32, f32, f16, bf16, u8)");
  b.dtype = *parsed;
  const std::string dtype_text(dtype_name(b.dtype));
  int kinds = 0;
  for (const char* key : {"segments", "alibi_heads", "randn", "const"}) kinds += j.contains(key) ? 1 : 0;
  if (kinds != 1)
    throw UsageError(w + ": give exactly one of \"segments\", \"alibi_heads\", \"randn\", \"const\"");
  if (j.contains("segments")) {
    int64_t total = 0;
    for (const auto& v : get_list(j, "segments", w, "positive document lengths")) {
      const std::optional<int64_t> n = integer_of(v);
      if (!n || *n < 1) throw UsageError(w + ": \"segments\" must list positive document lengths, got " + shown(v));
      if (*n > kMaxBufferElements - total)
        throw UsageError(w + ": \"segments\" add up to more than " + kMaxBufferElementsText + " elements (segments[" +
                         std::to_string(b.segments.size()) + "] = " + shown(v) + " passes it); give shorter documents");
      total += *n;
      b.segments.push_back(static_cast<int32_t>(*n));
    }
    if (static_cast<int64_t>(b.segments.size()) - 1 > max_document_id(b.dtype))
      throw UsageError(w + ": " + std::to_string(b.segments.size()) + " segments number their documents up to " +
                       std::to_string(b.segments.size() - 1) + ", which " + dtype_text + " cannot hold exactly (at most " +
                       std::to_string(max_document_id(b.dtype)) + "); use dtype \"i32\"");
  }
  if (j.contains("alibi_heads")) {
    b.alibi_heads = get_int(j, "alibi_heads", w);
    if (!is_float(b.dtype))
      throw UsageError(w + ": \"alibi_heads\" makes slopes in (0, 1), which " + dtype_text +
                       " would truncate to 0; use dtype \"f32\", \"f16\" or \"bf16\"");
  }
  if (j.contains("randn")) {
    const json& shape = get_list(j, "randn", w, "positive extents");
    if (shape.size() > expr::kMaxBufferRank)
      throw UsageError(w + ": \"randn\" has " + std::to_string(shape.size()) + " extents; the largest supported rank is " +
                       std::to_string(expr::kMaxBufferRank));
    for (const auto& v : shape) {
      const std::optional<int64_t> n = integer_of(v);
      if (!n || *n < 1) throw UsageError(w + ": \"randn\" must list positive extents, got " + shown(v));
      b.randn_shape.push_back(*n);
    }
    int64_t elements = 1;
    for (int64_t n : b.randn_shape) {
      if (n > kMaxBufferElements / elements)  // (shape holds at most 8 integers here: dump() is safe)
        throw UsageError(w + ": \"randn\" shape " + shape.dump() + " has more than " + kMaxBufferElementsText +
                         " elements");
      elements *= n;
    }
    if (!is_float(b.dtype))
      throw UsageError(w + ": \"randn\" makes normal floats, which " + dtype_text +
                       " cannot hold; use dtype \"f32\", \"f16\" or \"bf16\"");
  }
  if (j.contains("const")) {
    const DTypeRange range = range_of(b.dtype);
    for (const auto& v : get_list(j, "const", w, "numbers")) {
      if (!v.is_number()) throw UsageError(w + ": \"const\" must list numbers, got " + shown(v));
      const double x = v.get<double>();  // JSON numbers are finite: 1e999 fails to parse
      if (!(x >= range.lo && x <= range.hi) || (range.whole && std::floor(x) != x))
        throw UsageError(w + ": \"const\"[" + std::to_string(b.constant.size()) + "] = " + shown(v) +
                         " does not fit in " + dtype_text + " (" + range.text + ")");
      b.constant.push_back(x);
    }
  }
  return b;
}

}  // namespace

std::vector<int64_t> SuiteBuffer::shape() const {
  if (!segments.empty()) {
    int64_t n = 0;
    for (int32_t s : segments) n += s;
    return {n};
  }
  if (alibi_heads > 0) return {alibi_heads};
  if (!randn_shape.empty()) return randn_shape;
  return {static_cast<int64_t>(constant.size())};
}

BufferDecl SuiteBuffer::declaration() const {
  BufferDecl d;
  d.name = name;
  d.dtype = dtype;
  d.shape = shape();
  return d;
}

std::vector<double> SuiteBuffer::values() const {
  std::vector<double> out;
  if (!segments.empty()) {
    for (size_t doc = 0; doc < segments.size(); ++doc) out.insert(out.end(), segments[doc], double(doc));
  } else if (alibi_heads > 0) {
    for (int h = 0; h < alibi_heads; ++h) out.push_back(std::exp2(-8.0 * (h + 1) / alibi_heads));
  } else if (!randn_shape.empty()) {
    int64_t n = 1;
    for (int64_t e : randn_shape) n *= e;
    std::mt19937_64 rng(0);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int64_t i = 0; i < n; ++i) out.push_back(normal(rng));
  } else {
    out = constant;
  }
  return out;
}

Declarations SuiteProblem::declarations() const {
  Declarations d;
  for (const auto& b : buffers) {
    d.buffers.push_back(b.declaration());
    for (const auto& learnable : grad_buffers) d.buffers.back().learnable = d.buffers.back().learnable || learnable == b.name;
  }
  return d;
}

double SuiteProblem::dense_flops() const {
  return 4.0 * batch * q_heads * static_cast<double>(q_len) * kv_len * head_dim;
}

std::vector<int32_t> SuiteProblem::kv_lens() const {
  return seq_lens.empty() ? std::vector<int32_t>(batch, kv_len) : seq_lens;
}

double SuiteProblem::decode_bytes() const {
  double tokens = 0;
  for (int32_t len : kv_lens()) tokens += len;
  const double qo = double(batch) * q_heads * q_len * (head_dim + head_dim_v) * 2;
  return qo + tokens * kv_heads * (head_dim + head_dim_v) * 2;
}

namespace {

// "seq_lens": {"values": [...]} or {"uniform": [lo, hi]}, drawn as bench/peers.py's seq_lens():
// lo + ((i + 1) * 2654435761 mod 2^32) mod (hi - lo + 1). Every length, and so both bounds, lies
// in [0, Skv]; they are checked as the JSON gives them, before any arithmetic or narrowing.
std::vector<int32_t> parse_seq_lens(const json& spec, const SuiteProblem& p, const std::string& w) {
  const std::string range = "[0, Skv = " + std::to_string(p.kv_len) + "]";
  std::vector<int32_t> out;
  if (spec.is_object() && spec.contains("values") && spec["values"].is_array()) {
    for (const auto& x : spec["values"]) {
      const std::optional<int64_t> len = integer_of(x);
      if (!len) throw UsageError(w + ": \"seq_lens\" values must be integers, got " + shown(x));
      if (*len < 0 || *len > p.kv_len)
        throw UsageError(w + ": seq_lens[" + std::to_string(out.size()) + "] = " + shown(x) + " is outside " + range);
      out.push_back(static_cast<int32_t>(*len));
    }
  } else if (spec.is_object() && spec.contains("uniform") && spec["uniform"].is_array() && spec["uniform"].size() == 2 &&
             spec["uniform"][0].is_number_integer() && spec["uniform"][1].is_number_integer()) {
    const json& bounds = spec["uniform"];
    const int64_t lo = *integer_of(bounds[0]), hi = *integer_of(bounds[1]);
    if (lo < 0 || hi < lo || hi > p.kv_len)
      throw UsageError(w + ": \"seq_lens\" uniform bounds [" + shown(bounds[0]) + ", " + shown(bounds[1]) +
                       "] must satisfy 0 <= lo <= hi <= Skv = " + std::to_string(p.kv_len));
    // i + 1 <= B <= 2^30 and hi - lo + 1 <= 2^30 + 1: the products fit in 64 bits.
    for (int64_t i = 0; i < p.batch; ++i)
      out.push_back(static_cast<int32_t>(lo + ((i + 1) * 2654435761LL % (1LL << 32)) % (hi - lo + 1)));
  } else {
    throw UsageError(w + ": \"seq_lens\" must be {\"values\": [...]} or {\"uniform\": [lo, hi]}");
  }
  if (out.size() != size_t(p.batch))
    throw UsageError(w + ": \"seq_lens\" gives " + std::to_string(out.size()) + " lengths for B = " + std::to_string(p.batch));
  return out;
}

// The problem's tensors (Q [B, Hq, Sq, D], K [B, Hkv, Skv, D], V [B, Hkv, Skv, Dv], O [B, Hq, Sq,
// Dv], 2-byte elements) must have byte counts a 64-bit index can address: the tools size their
// allocations by these products, which would otherwise wrap.
void check_tensor_sizes(const SuiteProblem& p, const std::string& w) {
  struct Tensor {
    const char* name;
    const char* dims;
    int64_t extents[4];
  };
  const Tensor tensors[] = {{"Q", "[B, Hq, Sq, D]", {p.batch, p.q_heads, p.q_len, p.head_dim}},
                            {"K", "[B, Hkv, Skv, D]", {p.batch, p.kv_heads, p.kv_len, p.head_dim}},
                            {"V", "[B, Hkv, Skv, Dv]", {p.batch, p.kv_heads, p.kv_len, p.head_dim_v}},
                            {"O", "[B, Hq, Sq, Dv]", {p.batch, p.q_heads, p.q_len, p.head_dim_v}}};
  for (const Tensor& t : tensors) {
    int64_t bytes = 2;
    for (int64_t e : t.extents) {
      if (bytes > INT64_MAX / e) {
        std::string shape;
        for (int64_t x : t.extents) shape += (shape.empty() ? "" : ", ") + std::to_string(x);
        throw UsageError(w + ": " + t.name + " " + t.dims + " = [" + shape +
                         "] has more bytes than a 64-bit index can address; make the problem smaller");
      }
      bytes *= e;
    }
  }
}

// Where a JSON text stops being valid, for the errors nlohmann raises without a position (a
// number beyond double, "1e999"): the text is parsed again by this SAX handler, which records the
// offset of the failing token and the problem of the "problems" array it is in.
class ErrorLocator {
 public:
  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(json::number_integer_t) { return value(); }
  bool number_unsigned(json::number_unsigned_t) { return value(); }
  bool number_float(json::number_float_t, const json::string_t&) { return value(); }
  bool string(json::string_t& s) {
    if (depth_ == 3 && in_problems_ && key_ == "name") name_ = s;
    return value();
  }
  bool binary(json::binary_t&) { return value(); }
  bool start_object(std::size_t) { return open(); }
  bool start_array(std::size_t) {
    const bool problems = depth_ == 1 && key_ == "problems";
    open();
    in_problems_ = in_problems_ || problems;
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() {
    if (depth_ == 2) in_problems_ = false;
    return close();
  }
  bool key(json::string_t& k) {
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t offset, const std::string& token, const json::exception&) {
    failed_ = true;
    offset_ = offset;
    token_ = token;
    return false;
  }

  // "origin: problem 'name'" (or "problem N" before its name is read), or just "origin".
  std::string where(const std::string& origin) const {
    if (!failed_ || problem_ < 0) return origin;
    return origin + ": problem " + (name_.empty() ? std::to_string(problem_) : "'" + name_ + "'");
  }
  // " at line L, column C" of the failing token's first character, or "".
  std::string position(const std::string& text) const {
    if (!failed_) return "";
    const size_t end = std::min(offset_, text.size());
    const size_t start = end >= token_.size() ? end - token_.size() : 0;
    size_t line = 1, column = 1;
    for (size_t i = 0; i < start; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return " at line " + std::to_string(line) + ", column " + std::to_string(column);
  }

 private:
  bool value() {
    if (in_problems_ && depth_ == 2) {  // an element of "problems" begins
      ++problem_;
      name_.clear();
    }
    return true;
  }
  bool open() {
    value();
    ++depth_;
    key_.clear();
    return true;
  }
  bool close() {
    --depth_;
    key_.clear();
    return true;
  }

  int depth_ = 0;
  bool in_problems_ = false;
  std::string key_;
  long problem_ = -1;
  std::string name_;
  bool failed_ = false;
  size_t offset_ = 0;
  std::string token_;
};

json parse_json(const std::string& text, const std::string& origin) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError(origin + ": not valid JSON: " + e.what());
  } catch (const json::exception& e) {
    ErrorLocator locator;
    try {
      json::sax_parse(text, &locator);
    } catch (const json::exception&) {
    }
    throw UsageError(locator.where(origin) + ": not valid JSON: " + e.what() + locator.position(text));
  }
}

}  // namespace

// "grad_buffers": names of the problem's float buffers to make learnable.
static std::vector<std::string> parse_grad_buffers(const json& j, const std::vector<SuiteBuffer>& buffers, const std::string& w) {
  if (!j.is_array()) throw UsageError(w + ": \"grad_buffers\" must be an array of buffer names");
  std::vector<std::string> names;
  for (const auto& v : j) {
    if (!v.is_string()) throw UsageError(w + ": \"grad_buffers\" must be an array of buffer names");
    const std::string name = v.get<std::string>();
    bool found = false;
    for (const auto& b : buffers) found = found || b.name == name;
    if (!found) throw UsageError(w + ": \"grad_buffers\" names '" + name + "', which is not in \"buffers\"");
    names.push_back(name);
  }
  return names;
}

static SuiteProblem parse_problem(const json& j, const std::string& origin, const std::string& where,
                                  std::set<std::string>& names) {
  if (!j.is_object()) throw UsageError(where + ": must be an object");
  SuiteProblem p;
  p.name = get_string(j, "name", where);
  if (p.name.empty()) throw UsageError(where + ": missing \"name\"");
  const std::string w = origin + ": problem '" + p.name + "'";
  if (!names.insert(p.name).second) throw UsageError(w + ": the name is used twice");
  try {
    p.batch = get_int(j, "B", w);
    p.q_heads = get_int(j, "Hq", w);
    p.kv_heads = get_int(j, "Hkv", w, p.q_heads);
    p.q_len = get_int(j, "Sq", w);
    p.kv_len = get_int(j, "Skv", w, p.q_len);
    p.head_dim = get_int(j, "D", w);
    p.head_dim_v = get_int(j, "Dv", w, p.head_dim);
    check_tensor_sizes(p, w);
    const std::string dtype = get_string(j, "dtype", w);
    auto dt = parse_dtype(dtype.empty() ? "bf16" : dtype);
    if (!dt || (*dt != DType::bf16 && *dt != DType::f16))
      throw UsageError(w + ": dtype must be \"bf16\" or \"f16\", got \"" + dtype + "\"");
    p.dtype = *dt;
    p.score_mod = get_string(j, "score_mod", w);
    p.mask_mod = get_string(j, "mask_mod", w);
    if (j.contains("buffers")) {
      if (!j["buffers"].is_object()) throw UsageError(w + ": \"buffers\" must be an object");
      for (const auto& [name, spec] : j["buffers"].items()) p.buffers.push_back(parse_buffer(name, spec, w));
    }
    const std::string kind = get_string(j, "kind", w);
    if (!kind.empty() && kind != "decode") throw UsageError(w + ": \"kind\" must be \"decode\" (or absent), got \"" + kind + "\"");
    p.decode = kind == "decode";
    if (j.contains("seq_lens")) p.seq_lens = parse_seq_lens(j["seq_lens"], p, w);
    if (j.contains("page_size")) p.page_size = get_int(j, "page_size", w);
    if (j.contains("grad_buffers")) p.grad_buffers = parse_grad_buffers(j["grad_buffers"], p.buffers, w);
    // Outside decoding, "seq_lens" makes a ragged batch: each sequence's queries and keys.
    if (!p.decode && !p.seq_lens.empty() && p.q_len != p.kv_len)
      throw UsageError(w + ": \"seq_lens\" of a forward / backward problem gives each sequence's query and key "
                       "length, so it needs Sq = Skv (got " + std::to_string(p.q_len) + " and " +
                       std::to_string(p.kv_len) + ")");
    if (!p.decode && !p.seq_lens.empty() && !p.grad_buffers.empty())
      throw UsageError(w + ": \"seq_lens\" and \"grad_buffers\" do not go together (learnable-buffer gradients are "
                       "not computed with per-sequence lengths)");
  } catch (const json::exception& e) {  // a JSON access the checks above missed: still name the place
    throw UsageError(w + ": " + e.what());
  }
  return p;
}

std::vector<SuiteProblem> parse_suite(const std::string& text, const std::string& origin) {
  const json root = parse_json(text, origin);
  if (!root.is_object() || !root.contains("problems") || !root["problems"].is_array())
    throw UsageError(origin + ": expected an object with a \"problems\" array");
  std::vector<SuiteProblem> out;
  std::set<std::string> names;
  size_t index = 0;
  for (const auto& j : root["problems"])
    out.push_back(parse_problem(j, origin, origin + ": problem " + std::to_string(index++), names));
  return out;
}

std::vector<SuiteProblem> load_suite(const std::string& path) {
  // Only a regular file is read: a FIFO would block the reader forever, and a directory would
  // read as empty text ("not valid JSON").
  std::string text, error;
  switch (read_regular_file(path, kMaxSuiteBytes, &text, &error)) {
    case ReadStatus::ok: break;
    case ReadStatus::missing: throw UsageError("cannot read suite file '" + path + "': no such file");
    case ReadStatus::not_regular:
      throw UsageError("suite file '" + path + "' " + error + "; expected a JSON file (see bench/suite.json)");
    case ReadStatus::too_large:
    case ReadStatus::failed: throw UsageError("cannot read suite file '" + path + "': " + error);
  }
  return parse_suite(text, path);
}
std::vector<SuiteProblem> select_problems(const std::vector<SuiteProblem>& problems,
                                          const std::string& only) {
  if (only.empty()) return problems;
  std::vector<SuiteProblem> out;
  std::stringstream names(only);
  for (std::string name; std::getline(names, name, ',');) {
    if (name.empty()) continue;
    bool found = false;
    for (const auto& p : problems)
      if (p.name == name) {
        out.push_back(p);
        found = true;
      }
    if (!found) {
      std::string known;
      for (const auto& p : problems) known += (known.empty() ? "" : ", ") + p.name;
      throw UsageError("no problem named '" + name + "' in the suite (known: " + known + ")");
    }
  }
  return out;
}

}  // namespace flexjit
