#pragma once
// Where kernel templates come from: the copies embedded in the library at build time, or, when
// FLEXJIT_TEMPLATE_DIR is set, that directory (for developing templates without rebuilding).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tmpl/template.hpp"

namespace flexjit::codegen {

class TemplateRegistry : public tmpl::Loader {
 public:
  // Reads FLEXJIT_TEMPLATE_DIR once; an empty value means the embedded templates.
  TemplateRegistry();
  explicit TemplateRegistry(std::string override_dir);

  std::optional<std::string> load(const std::string& name) const override;
  // Like load(), but throws UsageError listing the available names when `name` is unknown.
  std::string read(const std::string& name) const;
  // Every template and header name available (embedded ones, plus the override dir's files).
  std::vector<std::string> names() const override;
  // "embedded" or the override directory.
  std::string origin() const;

 private:
  std::string override_dir_;
};

// The process-wide registry and the template environment built on it (templates parsed once).
const TemplateRegistry& template_registry();
const tmpl::Environment& template_environment();

}  // namespace flexjit::codegen
