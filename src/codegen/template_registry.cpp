#include "codegen/template_registry.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/embedded_templates.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen {

namespace {

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TemplateRegistry::TemplateRegistry() {
  const char* dir = std::getenv("FLEXJIT_TEMPLATE_DIR");
  if (dir != nullptr) override_dir_ = dir;
}

TemplateRegistry::TemplateRegistry(std::string override_dir) : override_dir_(std::move(override_dir)) {}

std::optional<std::string> TemplateRegistry::load(const std::string& name) const {
  // Only plain file names: a template can never reach outside the template directory.
  if (name.empty() || name.find('/') != std::string::npos || name.find('\\') != std::string::npos)
    return std::nullopt;
  if (!override_dir_.empty()) {
    if (auto text = read_file(std::filesystem::path(override_dir_) / name)) return text;
  }
  for (const EmbeddedFile* f = embedded_files(); f->name != nullptr; ++f)
    if (name == f->name) return std::string(f->data, f->size);
  return std::nullopt;
}

std::string TemplateRegistry::read(const std::string& name) const {
  if (auto text = load(name)) return *text;
  std::string known;
  for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw UsageError("no template named '" + name + "' (available: " + known + ")");
}

std::vector<std::string> TemplateRegistry::names() const {
  std::vector<std::string> out;
  for (const EmbeddedFile* f = embedded_files(); f->name != nullptr; ++f) out.emplace_back(f->name);
  if (!override_dir_.empty()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(override_dir_, ec)) {
      const std::string n = entry.path().filename().string();
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string TemplateRegistry::origin() const {
  return override_dir_.empty() ? std::string("embedded") : override_dir_;
}

const TemplateRegistry& template_registry() {
  static const TemplateRegistry registry;
  return registry;
}

const tmpl::Environment& template_environment() {
  static const tmpl::Environment environment(
      std::shared_ptr<const tmpl::Loader>(&template_registry(), [](const tmpl::Loader*) {}));
  return environment;
}

}  // namespace flexjit::codegen
