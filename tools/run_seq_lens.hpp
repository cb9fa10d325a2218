#pragma once
// `flexjit run --seq-lens kv.npy [--q-lens q.npy]` on padded tensors (forward, and the backward with
// --do): each sequence's own lengths (CallOptions::seq_lens on the GPU, reference_*_varlen on the
// CPU). Kept out of cmd_run.cpp, which calls these few members. Without --do, --q-lens or pages,
// --seq-lens alone runs decode (run_decode.hpp); both give the same results.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/npy.hpp"
#include "flexjit/attention.hpp"
#include "flexjit/device.hpp"
#include "flexjit/error.hpp"
#include "flexjit/reference.hpp"

namespace flexjit::cli {

struct RunSeqLens {
  std::string q_file;                // --q-lens
  std::vector<int32_t> q, kv;        // B each once loaded; empty: no per-sequence lengths
  DeviceBuffer q_dev, kv_dev;

  void add_option(CLI::App& app) {
    app.add_option("--q-lens", q_file,
                   "int32 .npy [B]: the query rows of each sequence (q_len in the mods; rows past it are written "
                   "as out 0, lse -inf); with it, --seq-lens (keys of each sequence, default Skv) applies to "
                   "the forward and backward on padded tensors");
  }

  // Reads the files (either may be "") for a problem of `shape`: int32 [B], each length in range.
  void load(const std::string& kv_file, const ReferenceShape& shape) {
    if (kv_file.empty() && q_file.empty()) return;
    q = read(q_file, "--q-lens", shape.batch, shape.q_len, "Sq, the query length of --q");
    kv = read(kv_file, "--seq-lens", shape.batch, shape.kv_len, "Skv, the key length of --k");
  }
  bool active() const { return !kv.empty(); }

  // The call's lengths, uploaded (with host copies, so the library checks them too).
  void attach(CallOptions& call) {
    if (!active()) return;
    q_dev = DeviceBuffer::allocate(q.size() * 4);
    q_dev.upload(q.data(), q.size() * 4);
    kv_dev = DeviceBuffer::allocate(kv.size() * 4);
    kv_dev.upload(kv.data(), kv.size() * 4);
    const int64_t b = static_cast<int64_t>(q.size());
    call.seq_lens.q_lens = TensorView::contiguous(q_dev.data(), DType::i32, {b});
    call.seq_lens.kv_lens = TensorView::contiguous(kv_dev.data(), DType::i32, {b});
    call.seq_lens.host_q_lens = q.data();
    call.seq_lens.host_kv_lens = kv.data();
  }

  // Rows past each sequence's queries, which the kernels leave untouched, as the reference has
  // them: out 0 and lse -inf.
  void blank_padding(std::vector<double>& out, std::vector<double>& lse, const ReferenceShape& s) const {
    if (!active()) return;
    for (int b = 0; b < s.batch; ++b)
      for (int h = 0; h < s.q_heads; ++h)
        for (int i = q[b]; i < s.q_len; ++i) {
          const size_t row = (size_t(b) * s.q_heads + h) * s.q_len + i;
          lse[row] = -std::numeric_limits<double>::infinity();
          for (int d = 0; d < s.head_dim_v; ++d) out[row * s.head_dim_v + d] = 0.0;
        }
  }

 private:
  static std::vector<int32_t> read(const std::string& file, const char* flag, int batch, int padded,
                                   const char* padded_name) {
    if (file.empty()) return std::vector<int32_t>(size_t(batch), padded);
    const NpyArray a = read_npy(file);
    if (a.dtype != DType::i32 || a.shape.size() != 1 || a.shape[0] != batch)
      throw ShapeError(std::string(flag) + " " + file + ": expected int32 [B] = [" + std::to_string(batch) +
                       "], got " + std::string(dtype_name(a.dtype)) + " of " + std::to_string(a.shape.size()) +
                       " dimensions" + (a.shape.size() == 1 ? " [" + std::to_string(a.shape[0]) + "]" : ""));
    std::vector<int32_t> out;
    for (double x : a.to_doubles()) out.push_back(static_cast<int32_t>(x));
    for (int b = 0; b < batch; ++b)
      if (out[b] < 0 || out[b] > padded)
        throw ShapeError(std::string(flag) + " " + file + ": entry " + std::to_string(b) + " is " +
                         std::to_string(out[b]) + ", outside [0, " + std::to_string(padded) + "] (" + padded_name + ")");
    return out;
  }
};

}  // namespace flexjit::cli
