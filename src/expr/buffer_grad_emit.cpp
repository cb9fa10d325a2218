#include "expr/buffer_grad_emit.hpp"

#include "expr/ast.hpp"
#include "expr/emitter.hpp"
#include "flexjit/error.hpp"

namespace flexjit::expr {

std::string emit_buffer_grad_reads(const std::vector<BufferReadGradient>& reads,
                                   const std::vector<BufferGradScheme>& schemes) {
  if (reads.size() != schemes.size()) throw UsageError("emit_buffer_grad_reads: one scheme per read");
  const std::string position = "int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args";
  bool staged = false, offsets = false, reads_score = false;
  std::string out;
  for (size_t r = 0; r < reads.size(); ++r) {
    const BufferReadGradient& g = reads[r];
    const std::string n = std::to_string(r);
    staged = staged || schemes[r] == BufferGradScheme::diagonal || schemes[r] == BufferGradScheme::arbitrary;
    offsets = offsets || schemes[r] == BufferGradScheme::arbitrary;
    reads_score = reads_score || g.derivative.uses("score");
    out += "// read " + n + ": " + g.read + " (" + std::string(index_pattern_name(g.pattern)) + ")\n";
    out += g.derivative.emit_cuda("flexjit_bg_derivative_" + n, "score_mod_buffer_grad");
    // The offset of the element read, or -1 outside the buffer: a read in a branch the forward
    // does not take may index anywhere, and its derivative there is 0.
    out += "__device__ __forceinline__ long long flexjit_bg_offset_" + n + "(" + position +
           ", unsigned& flexjit_errors) {\n";
    out += "  const long long idx[" + std::to_string(g.indices.size()) + "] = {";
    for (size_t d = 0; d < g.indices.size(); ++d)
      out += std::string(d ? ", " : "") + "static_cast<long long>(" + emit_cuda_expression(*g.indices[d].root()) + ")";
    out += "};\n  long long offset = 0;\n  bool inside = true;\n";
    out += "#pragma unroll\n  for (int d = 0; d < " + std::to_string(g.indices.size()) + "; ++d) {\n";
    out += "    inside = inside && static_cast<unsigned long long>(idx[d]) < static_cast<unsigned long long>(args.buf_" +
           g.buffer + ".extent[d]);\n";
    out += "    offset = offset * args.buf_" + g.buffer + ".extent[d] + idx[d];\n  }\n";
    out += "  return inside ? offset : -1;\n}\n";
    out += "template <> struct FlexjitBgRead<" + n + "> {\n";
    out += "  static constexpr int kScheme = " + std::to_string(static_cast<int>(schemes[r])) + ";\n";
    out += "  __device__ static __forceinline__ float derivative(float score, " + position +
           ", unsigned& errors) {\n    return flexjit_bg_derivative_" + n +
           "(score, b, h, q_idx, kv_idx, q_len, kv_len, args, errors);\n  }\n";
    out += "  __device__ static __forceinline__ long long offset(" + position +
           ", unsigned& errors) {\n    return flexjit_bg_offset_" + n +
           "(b, h, q_idx, kv_idx, q_len, kv_len, args, errors);\n  }\n};\n";
  }
  std::string head = "// Learnable-buffer reads of score_mod (flexjit_buffer_grad.cuh).\n";
  head += "#define FLEXJIT_BG_READS " + std::to_string(reads.size()) + "\n";
  head += std::string("#define FLEXJIT_BG_STAGED ") + (staged ? "1" : "0") + "\n";
  head += std::string("#define FLEXJIT_BG_OFFSETS ") + (offsets ? "1" : "0") + "\n";
  head += std::string("#define FLEXJIT_BG_READS_SCORE ") + (reads_score ? "1" : "0") + "\n";
  head += "template <int R> struct FlexjitBgRead;\n";
  out = head + out;
  out += "__device__ __forceinline__ long long flexjit_bg_offset(int read, " + position + ", unsigned& errors) {\n";
  out += "  switch (read) {\n";
  for (size_t r = 0; r < reads.size(); ++r)
    out += "    case " + std::to_string(r) + ": return flexjit_bg_offset_" + std::to_string(r) +
           "(b, h, q_idx, kv_idx, q_len, kv_len, args, errors);\n";
  out += "    default: return -1;\n  }\n}\n";
  return out;
}

}  // namespace flexjit::expr
