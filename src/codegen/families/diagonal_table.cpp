// Family `diagonal_table`: the score_mod's diagonal values of one call, for the warp-specialised
// forward's bias form (forward_diagonal_table) and the dK/dV kernel (dkdv_diagonal_table). One
// thread per (table entry, query head). Template: templates/diagonal_table.cu.j2.
#include "codegen/families/attention_common.hpp"
#include "codegen/families/fwd.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen::families {
namespace {

constexpr int kThreads = 256;

BlockConfig default_config(int, int) { return {128, 128, 8, 2}; }

void validate(const KernelSpec& s) {
  if (s.score_mod.diagonal_value_count() != 1)
    throw UsageError("diagonal_table: score_mod " + s.score_mod.canonical() +
                     " does not have one diagonal value (a relative-position table read, a T5 bucket's)");
}

size_t shared_memory_bytes(const KernelSpec&) { return 0; }

int threads(const KernelSpec&, int) { return kThreads; }

void add_constants(const KernelSpec&, nlohmann::json&, nlohmann::json& constants) {
  constants.push_back(int_constant("THREADS", kThreads));
}

// `shape.q_len` is the table's row length (a thread per entry, and one more for the last pair's
// second half); `shape.heads` its rows.
LaunchGeometry geometry(const KernelSpec&, const CallShape& shape, int) {
  LaunchGeometry g;
  g.block = {kThreads, 1, 1};
  g.grid = {ceil_div(static_cast<long long>(shape.q_len) + 1, kThreads), static_cast<unsigned>(shape.heads), 1};
  return g;
}

std::string describe(const KernelSpec& s) { return "diagonal_table score_mod=" + s.score_mod.canonical(); }

}  // namespace

FamilyDescriptor diagonal_table_family() {
  FamilyDescriptor f;
  f.family = Family::diagonal_table;
  f.name = "diagonal_table";
  f.template_name = "diagonal_table.cu.j2";
  f.source_name = "diagonal_table.cu";
  f.kernel_names = {"flexjit_diagonal_table"};
  f.default_config = default_config;
  f.validate = validate;
  f.shared_memory_bytes = shared_memory_bytes;
  f.threads = threads;
  f.add_constants = add_constants;
  f.geometry = geometry;
  f.describe = describe;
  return f;
}

}  // namespace flexjit::codegen::families
