#pragma once
/// \file
/// Problem suites: JSON lists of attention problems (shapes, dtype, mods, buffers) in the schema of
/// bench/suite.json, read by `flexjit bench`, `flexjit tune` and the tests.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "flexjit/dtype.hpp"
#include "flexjit/expr.hpp"

namespace flexjit {

/// How a suite buffer's contents are generated.
struct SuiteBuffer {
  std::string name;                  ///< identifier used in the expressions
  DType dtype = DType::f32;          ///< element type
  std::vector<int32_t> segments;     ///< "segments": document lengths; element i = its document id
  int alibi_heads = 0;               ///< "alibi_heads": n slopes 2^(-8 (h+1) / n)
  std::vector<int64_t> randn_shape;  ///< "randn": normal values (seed 0) of this shape
  std::vector<double> constant;      ///< "const": explicit values

  /// The declaration matching the generated data (shape from the generator).
  BufferDecl declaration() const;
  /// Generated contents, as doubles (converted to `dtype` when uploaded).
  std::vector<double> values() const;
  /// Extents of the generated data.
  std::vector<int64_t> shape() const;
};

/// One attention problem of a suite.
struct SuiteProblem {
  std::string name;       ///< unique within the suite
  int batch = 1;          ///< B
  int q_heads = 1;        ///< Hq
  int kv_heads = 1;       ///< Hkv
  int q_len = 1;          ///< Sq
  int kv_len = 1;         ///< Skv
  int head_dim = 64;      ///< D
  int head_dim_v = 64;    ///< Dv (defaults to D)
  DType dtype = DType::bf16;
  std::string score_mod;  ///< "" for none
  std::string mask_mod;   ///< "" for none
  std::vector<SuiteBuffer> buffers;
  bool decode = false;            ///< "kind": "decode": forward only, through Attention::decode
  /// "seq_lens": per-sequence KV lengths of a decode problem; of a forward / backward problem
  /// (Sq = Skv), each sequence's query and key length (a ragged batch). Empty: the padded lengths.
  std::vector<int32_t> seq_lens;
  int page_size = 0;              ///< "page_size": flexjit pages the KV cache (0: contiguous)
  /// "grad_buffers": float buffers made learnable; the backward then also computes their
  /// gradients (and `flexjit bench` times it so), as the peers' FlexAttention does.
  std::vector<std::string> grad_buffers;

  /// Declarations of every buffer (for parsing the mods); those in grad_buffers are learnable.
  Declarations declarations() const;
  /// Forward FLOPs at full density: 4 * B * Hq * Sq * Skv * D (the benchmark's convention).
  double dense_flops() const;
  /// KV length of each sequence (seq_lens, or kv_len for all).
  std::vector<int32_t> kv_lens() const;
  /// Bytes a decode step must move: Q and O once, K and V up to each sequence's length (the
  /// formula of bench/peers.py's fwd_gbps).
  double decode_bytes() const;
};

/// Reads a suite file. Throws UsageError naming the file, the problem and the field that is wrong.
std::vector<SuiteProblem> load_suite(const std::string& path);
/// Parses suite JSON text; `origin` names it in messages.
std::vector<SuiteProblem> parse_suite(const std::string& json_text, const std::string& origin);
/// Keeps the problems named in `only` (comma-separated; "" keeps all). Throws UsageError for a
/// name that is not in the suite, listing the names that are.
std::vector<SuiteProblem> select_problems(const std::vector<SuiteProblem>& problems,
                                          const std::string& only);

}  // namespace flexjit
