// The family registry: the one place that lists every kernel family. Adding a family is one line
// here (plus its descriptor file, its template and its `Family` value).
#include "codegen/family.hpp"

#include <algorithm>
#include <array>

#include "flexjit/error.hpp"

namespace flexjit::codegen {

namespace families {
FamilyDescriptor fwd_family();
FamilyDescriptor bwd_preprocess_family();
FamilyDescriptor bwd_dq_family();
FamilyDescriptor bwd_dkdv_family();
FamilyDescriptor block_mask_family();
FamilyDescriptor builtin_family();
FamilyDescriptor bwd_buffer_grad_family();
FamilyDescriptor decode_family();
FamilyDescriptor decode_combine_family();
FamilyDescriptor diagonal_table_family();
}  // namespace families

namespace {

// In the order `flexjit emit --family` lists them.
const std::vector<FamilyDescriptor>& registry() {
  static const std::vector<FamilyDescriptor> all = {
      families::fwd_family(),
      families::bwd_preprocess_family(),
      families::bwd_dq_family(),
      families::bwd_dkdv_family(),
      families::bwd_buffer_grad_family(),
      families::decode_family(),
      families::decode_combine_family(),
      families::block_mask_family(),
      families::diagonal_table_family(),
      families::builtin_family(),
  };
  return all;
}

}  // namespace

const std::vector<const FamilyDescriptor*>& all_families() {
  static const std::vector<const FamilyDescriptor*> pointers = [] {
    std::vector<const FamilyDescriptor*> out;
    for (const FamilyDescriptor& f : registry()) out.push_back(&f);
    return out;
  }();
  return pointers;
}

const FamilyDescriptor& descriptor(Family family) {
  for (const FamilyDescriptor& f : registry())
    if (f.family == family) return f;
  throw UsageError("kernel family #" + std::to_string(static_cast<int>(family)) +
                   " has no descriptor (add it to src/codegen/families/registry.cpp)");
}

const FamilyDescriptor* find_descriptor(std::string_view name) {
  for (const FamilyDescriptor& f : registry())
    if (f.name == name) return &f;
  return nullptr;
}

HeadClass head_class(const KernelSpec& spec) {
  const int d = std::max(spec.head_dim, spec.head_dim_v);
  return d <= 64 ? HeadClass::d64 : d <= 128 ? HeadClass::d128 : HeadClass::d256;
}

nlohmann::json int_constant(const char* name, long long value) {
  return {{"type", "int"}, {"name", name}, {"value", std::to_string(value)}};
}
nlohmann::json bool_constant(const char* name, bool value) {
  return {{"type", "bool"}, {"name", name}, {"value", value ? "true" : "false"}};
}
unsigned ceil_div(long long a, long long b) { return static_cast<unsigned>((a + b - 1) / b); }

}  // namespace flexjit::codegen
