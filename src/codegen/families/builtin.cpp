// Family `builtin`: y = a * x + y, the self-test kernel of the main job and `flexjit emit` (no
// mods, no shared headers). Template: templates/builtin_axpy.cu.j2.
#include "codegen/families/attention_common.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen::families {
namespace {

BlockConfig default_config(int, int) { return {256, 1, 8, 2}; }

void validate(const KernelSpec& s) {
  if (s.config.num_warps < 1 || s.config.num_warps > 32)
    throw UsageError("builtin kernel: warps must be between 1 and 32");
}

size_t shared_memory_bytes(const KernelSpec&) { return 0; }

int threads(const KernelSpec& s, int) { return s.config.num_warps * 32; }

void add_constants(const KernelSpec& s, nlohmann::json&, nlohmann::json& constants) {
  constants.push_back(int_constant("THREADS", threads(s, 0)));
}

// One thread per element of `shape.elements`.
LaunchGeometry geometry(const KernelSpec& s, const CallShape& shape, int) {
  LaunchGeometry g;
  g.block = {static_cast<unsigned>(threads(s, 0)), 1, 1};
  g.grid = {ceil_div(shape.elements, threads(s, 0)), 1, 1};
  return g;
}

std::string describe(const KernelSpec& s) { return "builtin warps=" + std::to_string(s.config.num_warps); }

}  // namespace

FamilyDescriptor builtin_family() {
  FamilyDescriptor f;
  f.family = Family::builtin_axpy;
  f.name = "builtin";
  f.template_name = "builtin_axpy.cu.j2";
  f.source_name = "builtin_axpy.cu";
  f.kernel_names = {"flexjit_builtin_axpy"};
  f.shared_headers = false;
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
