#pragma once
// Variable scopes while rendering. A Frame holds the variables one scope defines and points to
// the enclosing scope; the outermost frame also sees the render context. Scopes nest like
// Jinja's: each loop iteration, macro call, include, `{% set %}...{% endset %}` and
// `{% filter %}` body gets a new frame, so a `set` inside them never leaks out; `if` does not.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tmpl/value.hpp"

namespace flexjit::tmpl {

class Frame {
 public:
  /// The outermost scope: sees `context` (a JSON object, or null for none).
  explicit Frame(const Json* context) : parent_(nullptr), context_(context) {}
  /// A scope nested in `parent`, which must outlive it.
  explicit Frame(const Frame* parent) : parent_(parent), context_(nullptr) {}

  /// The innermost definition of `name` (a frame variable shadows a context key), as a view.
  std::optional<Value> find(const std::string& name) const {
    for (const Frame* frame = this; frame != nullptr; frame = frame->parent_) {
      if (auto found = frame->vars_.find(name); found != frame->vars_.end()) return found->second.view();
      if (frame->context_ && frame->context_->is_object()) {
        if (auto found = frame->context_->find(name); found != frame->context_->end()) return Value::view_of(*found);
      }
    }
    return std::nullopt;
  }

  /// Defines or replaces `name` in this frame. The value must own its data (see Value::owned)
  /// unless what it refers to outlives the frame.
  void set(const std::string& name, Value value) { vars_.insert_or_assign(name, std::move(value)); }

  /// Every name visible from here, for "did you mean" hints.
  std::vector<std::string> visible_names() const {
    std::vector<std::string> names;
    for (const Frame* frame = this; frame != nullptr; frame = frame->parent_) {
      for (const auto& entry : frame->vars_) names.push_back(entry.first);
      if (frame->context_ && frame->context_->is_object())
        for (const auto& entry : frame->context_->items()) names.push_back(entry.key());
    }
    return names;
  }

 private:
  const Frame* parent_;
  const Json* context_;
  // std::map: a view of one variable stays valid while others are added.
  std::map<std::string, Value> vars_;
};

}  // namespace flexjit::tmpl
