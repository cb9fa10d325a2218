#include "attention/diagonal_table.hpp"

#include <cstring>

#include "codegen/families/fwd.hpp"
#include "codegen/kernel_store.hpp"
#include "codegen/launch.hpp"
#include "flexjit/error.hpp"
#include "jit/driver.hpp"

namespace flexjit::attention {

DiagonalTableLayout diagonal_table_layout(int heads, int q_len, int kv_len, bool raw) {
  DiagonalTableLayout layout;
  const long long origin = (static_cast<long long>(q_len) + 1) / 2 * 2 + 256;
  const long long row = (origin + kv_len + 384 + 3) / 4 * 4;
  if (row > (1ll << 30))
    throw ShapeError("the diagonal table of " + std::to_string(q_len) + " queries and " + std::to_string(kv_len) +
                     " keys would have " + std::to_string(row) +
                     " entries a head, more than 2^30; split the call into shorter sequences");
  layout.origin = static_cast<int>(origin);
  layout.row = static_cast<int>(row);
  layout.entries_bytes = static_cast<size_t>(heads) * static_cast<size_t>(row) * (raw ? 4 : 8);
  layout.errors_bytes = (static_cast<size_t>(heads) * static_cast<size_t>(row) * 4 + 15) / 16 * 16;
  return layout;
}

FlexjitDiagonalTable write_diagonal_table(const codegen::KernelSpec& reader, const codegen::ReadyKernel* kernel,
                                          const std::string& arch, int heads,
                                          int q_len, int kv_len, float score_scale, bool raw,
                                          const std::vector<unsigned char>& mod_args,
                                          std::optional<StreamScratch>& memory, Stream stream) {
  const DiagonalTableLayout layout = diagonal_table_layout(heads, q_len, kv_len, raw);
  std::shared_ptr<const codegen::ReadyKernel> looked_up;
  if (kernel == nullptr) {
    looked_up = codegen::ready_kernel(codegen::diagonal_table_kernel_spec(reader), arch);
    kernel = looked_up.get();
  }
  memory.emplace(layout.total_bytes(), stream);
  auto* base = static_cast<unsigned char*>(memory->data());
  FlexjitDiagonalTableParams p;
  std::memset(&p, 0, sizeof(p));
  p.entries = base;
  p.errors = reinterpret_cast<unsigned*>(base + layout.entries_bytes);
  p.any_error = reinterpret_cast<unsigned*>(base + layout.entries_bytes + layout.errors_bytes);
  p.heads = heads;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.origin = layout.origin;
  p.row = layout.row;
  // The forward's exp_scale is score_scale * 1.44269502f (attention_fwd_ws.cu.j2): the same
  // product (FLEXJIT_LOG2E is that float).
  p.to_accumulator = raw ? 1.f : 1.f / (score_scale * FLEXJIT_LOG2E);
  p.raw = raw ? 1 : 0;
  FLEXJIT_CU(jit::driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(p.any_error), 0, sizeof(unsigned), stream));
  codegen::CallShape shape;
  shape.heads = heads;
  shape.q_len = layout.row;
  codegen::ConfiguredKernel(*kernel, shape).launch(stream, {&p, const_cast<unsigned char*>(mod_args.data())});
  FlexjitDiagonalTable table;
  table.entries = p.entries;
  table.errors = p.errors;
  table.any_error = p.any_error;
  table.origin = layout.origin;
  table.row = layout.row;
  return table;
}

}  // namespace flexjit::attention
