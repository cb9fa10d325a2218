#include "tmpl/template.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tmpl/ast.hpp"
#include "tmpl/parser.hpp"
#include "tmpl/renderer.hpp"
#include "tmpl/suggest.hpp"

namespace flexjit::tmpl {

// ---- loaders ----

MapLoader::MapLoader(std::map<std::string, std::string> files) : files_(std::move(files)) {}

std::optional<std::string> MapLoader::load(const std::string& name) const {
  auto found = files_.find(name);
  if (found == files_.end()) return std::nullopt;
  return found->second;
}

std::vector<std::string> MapLoader::names() const {
  std::vector<std::string> names;
  for (const auto& entry : files_) names.push_back(entry.first);
  return names;
}

DirectoryLoader::DirectoryLoader(std::string root) : root_(std::move(root)) {}

std::optional<std::string> DirectoryLoader::load(const std::string& name) const {
  const std::filesystem::path relative(name);
  if (name.empty() || relative.is_absolute() || relative.has_root_name()) return std::nullopt;
  for (const auto& part : relative)
    if (part == "..") return std::nullopt;
  std::error_code error;
  const std::filesystem::path path = std::filesystem::path(root_) / relative;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> DirectoryLoader::names() const {
  std::vector<std::string> names;
  std::error_code error;
  for (std::filesystem::recursive_directory_iterator it(root_, error), end; !error && it != end; it.increment(error)) {
    if (it->is_regular_file(error))
      names.push_back(std::filesystem::relative(it->path(), root_, error).generic_string());
  }
  return names;
}

// ---- Template ----

namespace detail {
const TemplateData& data_of(const Template& tmpl) { return *tmpl.data_; }
}  // namespace detail

Template::Template(std::shared_ptr<const detail::TemplateData> data) : data_(std::move(data)) {}

Template Template::parse(std::string name, std::string_view text, Options options) {
  auto data = std::make_shared<detail::TemplateData>();
  data->body = parse_template(name, text, options);
  data->name = std::move(name);
  data->options = options;
  return Template(std::move(data));
}

std::string Template::render(const Json& context, const Environment* env) const {
  return render_template(*data_, context, env);
}

const std::string& Template::name() const { return data_->name; }
const Options& Template::options() const { return data_->options; }

// ---- Environment ----

Environment::Environment(std::shared_ptr<const Loader> loader, Options options)
    : loader_(std::move(loader)), options_(options) {}

Environment::~Environment() = default;

const Template* Environment::find(const std::string& name) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto cached = cache_.find(name); cached != cache_.end()) return &cached->second;
  }
  // Load and parse without the lock so that other threads are not held up; if two threads parse
  // the same template, the first one stored wins and the other copy is dropped.
  std::optional<std::string> text = loader_ ? loader_->load(name) : std::nullopt;
  if (!text) return nullptr;
  Template parsed = Template::parse(name, *text, options_);
  std::lock_guard<std::mutex> lock(mutex_);
  return &cache_.emplace(name, std::move(parsed)).first->second;
}

const Template& Environment::get(const std::string& name) const {
  if (const Template* found = find(name)) return *found;
  std::string suggestion = suggest_name(name);
  throw TemplateError(name, 1, 1, "template '" + name + "' not found" +
                                      (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)"));
}

std::string Environment::render(const std::string& name, const Json& context) const {
  return get(name).render(context, this);
}

std::string Environment::suggest_name(const std::string& name) const {
  return loader_ ? closest_name(name, loader_->names()) : std::string();
}

}  // namespace flexjit::tmpl
