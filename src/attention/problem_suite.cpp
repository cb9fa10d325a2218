#include "flexjit/problem_suite.hpp"

#include <cmath>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "flexjit/error.hpp"

namespace flexjit {

namespace {

using nlohmann::json;

int get_int(const json& j, const char* key, const std::string& where, std::optional<int> fallback = {}) {
  if (!j.contains(key)) {
    if (fallback) return *fallback;
    throw UsageError(where + ": missing \"" + key + "\"");
  }
  if (!j[key].is_number_integer() || j[key].get<long long>() < 1 || j[key].get<long long>() > (1LL << 30))
    throw UsageError(where + ": \"" + key + "\" must be a positive integer, got " + j[key].dump());
  return j[key].get<int>();
}

std::string get_string(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return "";
  if (!j[key].is_string()) throw UsageError(where + ": \"" + key + "\" must be a string");
  return j[key].get<std::string>();
}

SuiteBuffer parse_buffer(const std::string& name, const json& j, const std::string& where) {
  SuiteBuffer b;
  b.name = name;
  const std::string w = where + ", buffer '" + name + "'";
  if (!j.is_object()) throw UsageError(w + ": must be an object");
  const std::string dtype = get_string(j, "dtype", w);
  auto parsed = parse_dtype(dtype.empty() ? "f32" : dtype);
  if (!parsed) throw UsageError(w + ": unknown dtype '" + dtype + "' (i32, f32, f16, bf16, u8)");
  b.dtype = *parsed;
  int kinds = 0;
  if (j.contains("segments")) {
    ++kinds;
    for (const auto& v : j["segments"]) {
      if (!v.is_number_integer() || v.get<long long>() < 1)
        throw UsageError(w + ": \"segments\" must list positive document lengths");
      b.segments.push_back(v.get<int32_t>());
    }
  }
  if (j.contains("alibi_heads")) {
    ++kinds;
    b.alibi_heads = get_int(j, "alibi_heads", w);
  }
  if (j.contains("randn")) {
    ++kinds;
    for (const auto& v : j["randn"]) {
      if (!v.is_number_integer() || v.get<long long>() < 1)
        throw UsageError(w + ": \"randn\" must list positive extents");
      b.randn_shape.push_back(v.get<int64_t>());
    }
  }
  if (j.contains("const")) {
    ++kinds;
    for (const auto& v : j["const"]) {
      if (!v.is_number()) throw UsageError(w + ": \"const\" must list numbers");
      b.constant.push_back(v.get<double>());
    }
  }
  if (kinds != 1)
    throw UsageError(w + ": give exactly one of \"segments\", \"alibi_heads\", \"randn\", \"const\"");
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
// lo + ((i + 1) * 2654435761 mod 2^32) mod (hi - lo + 1).
std::vector<int32_t> parse_seq_lens(const json& spec, const SuiteProblem& p, const std::string& w) {
  std::vector<int32_t> out;
  if (spec.is_object() && spec.contains("values") && spec["values"].is_array()) {
    for (const auto& x : spec["values"]) {
      if (!x.is_number_integer()) throw UsageError(w + ": \"seq_lens\" values must be integers, got " + x.dump());
      out.push_back(x.get<int32_t>());
    }
  } else if (spec.is_object() && spec.contains("uniform") && spec["uniform"].is_array() && spec["uniform"].size() == 2 &&
             spec["uniform"][0].is_number_integer() && spec["uniform"][1].is_number_integer()) {
    const int64_t lo = spec["uniform"][0].get<int64_t>(), hi = spec["uniform"][1].get<int64_t>();
    if (lo < 0 || hi < lo) throw UsageError(w + ": \"seq_lens\" uniform bounds must satisfy 0 <= lo <= hi");
    for (int64_t i = 0; i < p.batch; ++i)
      out.push_back(static_cast<int32_t>(lo + ((i + 1) * 2654435761LL % (1LL << 32)) % (hi - lo + 1)));
  } else {
    throw UsageError(w + ": \"seq_lens\" must be {\"values\": [...]} or {\"uniform\": [lo, hi]}");
  }
  if (out.size() != size_t(p.batch))
    throw UsageError(w + ": \"seq_lens\" gives " + std::to_string(out.size()) + " lengths for B = " + std::to_string(p.batch));
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] < 0 || out[i] > p.kv_len)
      throw UsageError(w + ": seq_lens[" + std::to_string(i) + "] = " + std::to_string(out[i]) + " is outside [0, Skv = " +
                       std::to_string(p.kv_len) + "]");
  return out;
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

std::vector<SuiteProblem> parse_suite(const std::string& text, const std::string& origin) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError(origin + ": not valid JSON: " + e.what());
  }
  if (!root.is_object() || !root.contains("problems") || !root["problems"].is_array())
    throw UsageError(origin + ": expected an object with a \"problems\" array");
  std::vector<SuiteProblem> out;
  std::set<std::string> names;
  size_t index = 0;
  for (const auto& j : root["problems"]) {
    const std::string where = origin + ": problem " + std::to_string(index++);
    if (!j.is_object()) throw UsageError(where + ": must be an object");
    SuiteProblem p;
    p.name = get_string(j, "name", where);
    if (p.name.empty()) throw UsageError(where + ": missing \"name\"");
    const std::string w = origin + ": problem '" + p.name + "'";
    if (!names.insert(p.name).second) throw UsageError(w + ": the name is used twice");
    p.batch = get_int(j, "B", w);
    p.q_heads = get_int(j, "Hq", w);
    p.kv_heads = get_int(j, "Hkv", w, p.q_heads);
    p.q_len = get_int(j, "Sq", w);
    p.kv_len = get_int(j, "Skv", w, p.q_len);
    p.head_dim = get_int(j, "D", w);
    p.head_dim_v = get_int(j, "Dv", w, p.head_dim);
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
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<SuiteProblem> load_suite(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read suite file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_suite(text.str(), path);
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
