#include "tmpl/renderer.hpp"

#include <algorithm>
#include <cmath>

#include "tmpl/arguments.hpp"
#include "tmpl/filters.hpp"
#include "tmpl/operators.hpp"
#include "tmpl/scope.hpp"
#include "tmpl/suggest.hpp"

namespace flexjit::tmpl {
namespace {

template <class... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
template <class... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

// State shared by everything one render call does, across includes and macro calls.
struct Session {
  const Environment* env;
  std::vector<std::string> include_stack;  // names of the templates being rendered, outermost first
  int macro_depth = 0;
  long long loop_iterations = 0;  // over every loop of the render, includes and macros too
  size_t output_bytes = 0;        // every byte appended, captured text included
};

// Keeps a counter raised for as long as a scope runs.
class DepthGuard {
 public:
  explicit DepthGuard(int& depth) : depth_(depth) { ++depth_; }
  ~DepthGuard() { --depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  int& depth_;
};

// Keeps a template name on the include stack for as long as that template renders.
class IncludeGuard {
 public:
  IncludeGuard(std::vector<std::string>& stack, const std::string& name) : stack_(stack) { stack_.push_back(name); }
  ~IncludeGuard() { stack_.pop_back(); }
  IncludeGuard(const IncludeGuard&) = delete;
  IncludeGuard& operator=(const IncludeGuard&) = delete;

 private:
  std::vector<std::string>& stack_;
};

// How an expression reads in messages: `spec.tiles[0]`; anything computed reads "expression".
std::string describe(const Expr& expr) {
  return std::visit(Overloaded{
                        [](const NameExpr& e) { return e.name; },
                        [](const AttributeExpr& e) { return describe(*e.object) + "." + e.attribute; },
                        [](const IndexExpr& e) {
                          const auto* literal = std::get_if<LiteralExpr>(&e.key->node);
                          return describe(*e.object) + "[" + (literal ? python_repr(literal->value) : "...") + "]";
                        },
                        [](const CallExpr& e) { return describe(*e.callee) + "(...)"; },
                        [](const LiteralExpr& e) { return python_repr(e.value); },
                        [](const auto&) { return std::string("expression"); },
                    },
                    expr.node);
}

std::vector<std::string> keys_of(const Json& object) {
  std::vector<std::string> keys;
  for (const auto& entry : object.items()) keys.push_back(entry.key());
  return keys;
}

bool is_true(const Value& value) { return value.is_macro() || truthy(value.json()); }

// Renders one template body (the top-level one, an included one, or a macro's) and evaluates its
// expressions. Errors name `template_name_`, the template the running code comes from.
class Renderer {
 public:
  Renderer(Session& session, const std::string& template_name) : session_(session), template_name_(template_name) {}

  void execute(const Body& body, Frame& frame, std::string& out) {
    for (const auto& stmt : body) execute(*stmt, frame, out);
  }

 private:
  // The result of looking a name, attribute or key up: a value, or why there is none. Only
  // `default` and `is defined` accept the latter; everywhere else it becomes the error.
  struct Lookup {
    std::optional<Value> value;
    Position pos;
    std::string error;
  };

  [[noreturn]] void fail(Position pos, const std::string& message) const {
    throw TemplateError(template_name_, pos.line, pos.column, message);
  }

  // Runs an operation on values and reports its ValueError at `pos`.
  template <class Operation>
  auto at(Position pos, Operation&& operation) const -> decltype(operation()) {
    try {
      return operation();
    } catch (const ValueError& error) {
      fail(pos, error.what());
    }
  }

  const Json& data(const Value& value, Position pos, const std::string& use) const {
    if (value.is_macro())
      fail(pos, "cannot use macro '" + value.macro().definition->name + "' " + use + " (call it as '" +
                    value.macro().definition->name + "(...)')");
    return value.json();
  }

  // ---- statements ----

  // Every byte a render writes goes through here, so nested loops, recursive macros and captured
  // blocks together cannot produce more than Limits::kMaxOutputBytes.
  void emit(std::string& out, const std::string& text, Position pos) {
    session_.output_bytes += text.size();
    if (session_.output_bytes > Limits::kMaxOutputBytes)
      fail(pos, "the template writes more than " + std::to_string(Limits::kMaxOutputBytes) +
                    " bytes (a loop or macro that never stops growing?)");
    out += text;
  }

  void execute(const Stmt& stmt, Frame& frame, std::string& out) {
    std::visit(Overloaded{
                   [&](const TextStmt& s) { emit(out, s.text, stmt.pos); },
                   [&](const OutputStmt& s) {
                     Value value = evaluate(*s.value, frame);
                     emit(out, to_output(data(value, s.value->pos, "as output")), stmt.pos);
                   },
                   [&](const IfStmt& s) { execute_if(s, frame, out); },
                   [&](const ForStmt& s) { execute_for(s, frame, out); },
                   [&](const SetStmt& s) { frame.set(s.target, evaluate(*s.value, frame).owned()); },
                   [&](const SetBlockStmt& s) { frame.set(s.target, Value::owning(capture(s.body, frame))); },
                   [&](const IncludeStmt& s) { execute_include(s, stmt.pos, frame, out); },
                   [&](const MacroStmt& s) { frame.set(s.name, Value::of_macro({&s, &frame, &template_name_})); },
                   [&](const FilterBlockStmt& s) {
                     Value value = Value::owning(capture(s.body, frame));
                     for (const auto& application : s.filters) value = apply_filter(application, &value, frame);
                     emit(out, to_output(data(value, stmt.pos, "as output")), stmt.pos);
                   },
               },
               stmt.node);
  }

  std::string capture(const Body& body, const Frame& frame) {
    Frame inner(&frame);
    std::string text;
    execute(body, inner, text);
    return text;
  }

  void execute_if(const IfStmt& stmt, Frame& frame, std::string& out) {
    for (const auto& branch : stmt.branches) {
      if (is_true(evaluate(*branch.condition, frame))) {
        execute(branch.body, frame, out);  // `if` opens no scope, as in Jinja
        return;
      }
    }
    execute(stmt.else_body, frame, out);
  }

  void execute_for(const ForStmt& stmt, const Frame& frame, std::string& out) {
    const Value iterable = evaluate(*stmt.iterable, frame);
    if (iterable.is_macro() || !(iterable.json().is_array() || iterable.json().is_object()))
      fail(stmt.iterable->pos, "'for' needs a list or an object, got " + type_name(iterable));
    // Items are views: `iterable` outlives the loop, whether it owns its list or not.
    std::vector<Value> items;
    if (iterable.json().is_array()) {
      for (const auto& element : iterable.json()) items.push_back(Value::view_of(element));
    } else {
      for (const auto& entry : iterable.json().items()) items.push_back(Value::owning(entry.key()));
    }
    if (items.empty()) {
      Frame inner(&frame);
      execute(stmt.else_body, inner, out);
      return;
    }
    const auto length = static_cast<std::int64_t>(items.size());
    for (std::int64_t i = 0; i < length; ++i) {
      if (++session_.loop_iterations > Limits::kMaxLoopIterations)
        fail(stmt.iterable->pos, "loops run more than " + std::to_string(Limits::kMaxLoopIterations) +
                                     " iterations in all (nested loops multiply)");
      Frame iteration(&frame);  // fresh each time: a `set` in one iteration is gone in the next
      iteration.set("loop", Value::owning(Json{{"index", i + 1},
                                               {"index0", i},
                                               {"revindex", length - i},
                                               {"revindex0", length - i - 1},
                                               {"first", i == 0},
                                               {"last", i == length - 1},
                                               {"length", length}}));
      const Value& item = items[static_cast<size_t>(i)];
      if (stmt.targets.size() == 1) {
        iteration.set(stmt.targets[0], item);
      } else {
        unpack(stmt, item, iteration);
      }
      execute(stmt.body, iteration, out);
    }
  }

  void unpack(const ForStmt& stmt, const Value& item, Frame& iteration) const {
    const size_t wanted = stmt.targets.size();
    if (item.is_macro() || !item.json().is_array() || item.json().size() != wanted) {
      std::string got = !item.is_macro() && item.json().is_array()
                            ? "a list of " + std::to_string(item.json().size()) + " values"
                            : type_name_with_article(type_name(item));
      fail(stmt.iterable->pos, "cannot unpack " + got + " into " + std::to_string(wanted) + " loop variables");
    }
    for (size_t k = 0; k < wanted; ++k) iteration.set(stmt.targets[k], item.part(item.json()[k]));
  }

  void execute_include(const IncludeStmt& stmt, Position pos, const Frame& frame, std::string& out) {
    const Value name_value = evaluate(*stmt.template_name, frame);
    if (name_value.is_macro() || !name_value.json().is_string())
      fail(stmt.template_name->pos, "include needs a template name string, got " + type_name(name_value));
    const std::string& name = name_value.json().get_ref<const std::string&>();
    if (session_.env == nullptr)
      fail(pos, "cannot include '" + name + "': no Environment to load it from (render through an Environment)");
    const Template* included = session_.env->find(name);
    if (included == nullptr) {
      if (stmt.ignore_missing) return;
      std::string suggestion = session_.env->suggest_name(name);
      fail(pos, "template '" + name + "' not found" +
                    (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)"));
    }
    auto& stack = session_.include_stack;
    if (std::find(stack.begin(), stack.end(), name) != stack.end()) {
      std::string cycle;
      for (auto it = std::find(stack.begin(), stack.end(), name); it != stack.end(); ++it) cycle += *it + " -> ";
      fail(pos, "include cycle: " + cycle + name);
    }
    if (static_cast<int>(stack.size()) > Limits::kMaxIncludeDepth)
      fail(pos, "includes are nested too deeply (more than " + std::to_string(Limits::kMaxIncludeDepth) + " levels)");
    IncludeGuard guard(stack, name);
    const detail::TemplateData& data = detail::data_of(*included);
    Frame inner(&frame);  // the included template sees everything visible here
    Renderer(session_, data.name).execute(data.body, inner, out);
  }

  // ---- expressions ----

  Value evaluate(const Expr& expr, const Frame& frame) {
    return std::visit(
        Overloaded{
            [&](const LiteralExpr& e) { return Value::view_of(e.value); },
            [&](const NameExpr&) { return require(lookup(expr, frame)); },
            [&](const AttributeExpr&) { return require(lookup(expr, frame)); },
            [&](const IndexExpr&) { return require(lookup(expr, frame)); },
            [&](const ListExpr& e) {
              Json list = Json::array();
              for (const auto& item : e.items) list.push_back(data(evaluate(*item, frame), item->pos, "in a list"));
              return Value::owning(std::move(list));
            },
            [&](const CallExpr& e) { return call(e, expr.pos, frame); },
            [&](const FilterExpr& e) {
              std::optional<Value> input = e.application.filter->accepts_undefined
                                               ? lookup(*e.input, frame).value
                                               : std::optional<Value>(evaluate(*e.input, frame));
              return apply_filter(e.application, input ? &*input : nullptr, frame);
            },
            [&](const TestExpr& e) { return Value::owning(run_test(e, expr.pos, frame)); },
            [&](const UnaryExpr& e) { return evaluate_unary(e, expr.pos, frame); },
            [&](const BinaryExpr& e) { return evaluate_binary(e, expr.pos, frame); },
            [&](const CompareExpr& e) { return Value::owning(evaluate_compare(e, frame)); },
            [&](const ConditionalExpr& e) {
              return is_true(evaluate(*e.condition, frame)) ? evaluate(*e.then_value, frame)
                                                            : evaluate(*e.else_value, frame);
            },
        },
        expr.node);
  }

 private:
  Value require(Lookup found) const {
    if (!found.value) fail(found.pos, found.error);
    return std::move(*found.value);
  }

  // Looks up names, attributes and keys without failing: an undefined result carries the reason.
  // Other expressions are evaluated as usual (their errors are real errors).
  Lookup lookup(const Expr& expr, const Frame& frame) {
    if (const auto* name = std::get_if<NameExpr>(&expr.node)) {
      if (auto value = frame.find(name->name)) return {std::move(value), expr.pos, ""};
      return {std::nullopt, expr.pos,
              "undefined variable '" + name->name + "'" + did_you_mean(name->name, frame.visible_names())};
    }
    if (const auto* attribute = std::get_if<AttributeExpr>(&expr.node)) {
      Lookup object = lookup(*attribute->object, frame);
      if (!object.value) return object;
      return member(*object.value, attribute->attribute, describe(*attribute->object), expr.pos);
    }
    if (const auto* index = std::get_if<IndexExpr>(&expr.node)) {
      Lookup object = lookup(*index->object, frame);
      if (!object.value) return object;
      Value key = evaluate(*index->key, frame);
      return element(*object.value, data(key, index->key->pos, "as a key"), describe(*index->object), expr.pos);
    }
    return {evaluate(expr, frame), expr.pos, ""};
  }

  Lookup member(const Value& object, const std::string& attribute, const std::string& what, Position pos) const {
    if (!object.is_macro() && object.json().is_object()) {
      const Json& json = object.json();
      if (auto found = json.find(attribute); found != json.end()) return {object.part(*found), pos, ""};
      return {std::nullopt, pos,
              "'" + what + "' has no attribute '" + attribute + "'" + did_you_mean(attribute, keys_of(json))};
    }
    return {std::nullopt, pos,
            "'" + what + "' has no attribute '" + attribute + "' (it is " +
                type_name_with_article(type_name(object)) + ", not an object)"};
  }

  Lookup element(const Value& object, const Json& key, const std::string& what, Position pos) const {
    const std::string type = type_name(object);
    if (type == "object") {
      const Json& json = object.json();
      if (key.is_string()) {
        if (auto found = json.find(key.get<std::string>()); found != json.end()) return {object.part(*found), pos, ""};
        return {std::nullopt, pos,
                "'" + what + "' has no key " + python_repr(key) + did_you_mean(key.get<std::string>(), keys_of(json))};
      }
      return {std::nullopt, pos, "'" + what + "' has no key " + python_repr(key) + " (keys are strings)"};
    }
    if (type == "list" || type == "string") {
      if (!key.is_number_integer())
        return {std::nullopt, pos, "index into '" + what + "' must be an int, got " + type_name(key)};
      const Json& json = object.json();
      const auto length = static_cast<std::int64_t>(
          json.is_string() ? json.get_ref<const std::string&>().size() : json.size());
      std::int64_t index = at(pos, [&] { return as_int(key); });
      if (index < 0) index += length;  // Python: -1 is the last item
      if (index < 0 || index >= length)
        return {std::nullopt, pos,
                "index " + python_repr(key) + " is out of range for '" + what + "' (length " +
                    std::to_string(length) + ")"};
      if (json.is_string())
        return {Value::owning(std::string(1, json.get_ref<const std::string&>()[static_cast<size_t>(index)])), pos, ""};
      return {object.part(json[static_cast<size_t>(index)]), pos, ""};
    }
    return {std::nullopt, pos, "'" + what + "' cannot be indexed (it is " + type_name_with_article(type) + ")"};
  }

  Value apply_filter(const FilterApplication& application, const Value* input, const Frame& frame) {
    const FilterSpec& filter = *application.filter;
    std::vector<Value> args;
    for (size_t i = 0; i < filter.params.size(); ++i)
      args.push_back(application.args[i] ? evaluate(*application.args[i], frame)
                                         : Value::view_of(filter.params[i].default_value));
    return at(application.pos, [&] { return Value::owning(filter.apply(filter, input, args)); });
  }

  bool run_test(const TestExpr& expr, Position pos, const Frame& frame) {
    const TestSpec& test = *expr.test;
    std::optional<Value> input =
        test.accepts_undefined ? lookup(*expr.input, frame).value : std::optional<Value>(evaluate(*expr.input, frame));
    std::vector<Value> args;
    for (size_t i = 0; i < test.params.size(); ++i)
      args.push_back(expr.args[i] ? evaluate(*expr.args[i], frame) : Value::view_of(test.params[i].default_value));
    bool result = at(pos, [&] { return test.check(test, input ? &*input : nullptr, args); });
    return expr.negated ? !result : result;
  }

  Value evaluate_unary(const UnaryExpr& expr, Position pos, const Frame& frame) {
    Value operand = evaluate(*expr.operand, frame);
    if (expr.op == UnaryOp::Not) return Value::owning(!is_true(operand));
    const Json& json = data(operand, expr.operand->pos, std::string("with unary '") + (expr.op == UnaryOp::Negate ? "-" : "+") + "'");
    return Value::owning(at(pos, [&] { return apply_unary(expr.op, json); }));
  }

  Value evaluate_binary(const BinaryExpr& expr, Position pos, const Frame& frame) {
    Value left = evaluate(*expr.left, frame);
    // `and` / `or` return an operand, not a bool, and skip the right one when they can (Python).
    if (expr.op == BinaryOp::And) return is_true(left) ? evaluate(*expr.right, frame) : left;
    if (expr.op == BinaryOp::Or) return is_true(left) ? left : evaluate(*expr.right, frame);
    Value right = evaluate(*expr.right, frame);
    const std::string use = std::string("with '") + symbol(expr.op) + "'";
    const Json& left_json = data(left, expr.left->pos, use);
    const Json& right_json = data(right, expr.right->pos, use);
    return Value::owning(at(pos, [&] { return apply_binary(expr.op, left_json, right_json); }));
  }

  bool evaluate_compare(const CompareExpr& expr, const Frame& frame) {
    Value left = evaluate(*expr.first, frame);
    const Expr* left_expr = expr.first.get();
    for (const auto& step : expr.steps) {
      Value right = evaluate(*step.operand, frame);
      const std::string use = std::string("with '") + symbol(step.op) + "'";
      const Json& left_json = data(left, left_expr->pos, use);
      const Json& right_json = data(right, step.operand->pos, use);
      if (!at(step.pos, [&] { return apply_compare(step.op, left_json, right_json); })) return false;
      left = std::move(right);
      left_expr = step.operand.get();
    }
    return true;
  }

  // ---- calls ----

  Value call(const CallExpr& expr, Position pos, const Frame& frame) {
    if (const auto* name = std::get_if<NameExpr>(&expr.callee->node)) {
      std::optional<Value> callee = frame.find(name->name);
      if (callee && callee->is_macro()) return call_macro(callee->macro(), expr.args, pos, frame);
      if (callee)
        fail(pos, "'" + name->name + "' is " + type_name_with_article(type_name(*callee)) + ", not a macro");
      if (name->name == "range") return call_range(expr.args, pos, frame);
      std::vector<std::string> callables = {"range"};
      for (const auto& visible : frame.visible_names()) {
        auto value = frame.find(visible);
        if (value && value->is_macro()) callables.push_back(visible);
      }
      fail(pos, "undefined macro '" + name->name + "'" + did_you_mean(name->name, callables));
    }
    if (const auto* method = std::get_if<AttributeExpr>(&expr.callee->node)) {
      static const std::vector<std::string> methods = {"items", "keys", "values"};
      if (std::find(methods.begin(), methods.end(), method->attribute) == methods.end()) {
        std::string hint = closest_name(method->attribute, methods);
        fail(pos, "unknown method '" + method->attribute + "'" +
                      (hint.empty() ? ": only items(), keys() and values() can be called on a value"
                                    : " (did you mean '" + hint + "'?)"));
      }
      const std::string signature = "'" + method->attribute + "()'";
      if (!expr.args.positional.empty() || !expr.args.keyword.empty())
        fail(pos, signature + " takes no arguments, got " +
                      std::to_string(expr.args.positional.size() + expr.args.keyword.size()));
      Value object = evaluate(*method->object, frame);
      if (object.is_macro() || !object.json().is_object())
        fail(pos, signature + " needs an object, got " + type_name(object));
      Json result = Json::array();
      for (const auto& entry : object.json().items()) {
        if (method->attribute == "items") result.push_back(Json::array({entry.key(), entry.value()}));
        if (method->attribute == "keys") result.push_back(entry.key());
        if (method->attribute == "values") result.push_back(entry.value());
      }
      return Value::owning(std::move(result));
    }
    fail(pos, "only macros, range() and the methods items(), keys() and values() can be called");
  }

  Value call_macro(const Macro& macro, const CallArgs& args, Position pos, const Frame& frame) {
    const MacroStmt& definition = *macro.definition;
    if (session_.macro_depth >= Limits::kMaxMacroDepth)
      fail(pos, "macro calls are nested too deeply (more than " + std::to_string(Limits::kMaxMacroDepth) +
                    " levels): does '" + definition.name + "' call itself without end?");
    std::vector<std::string> names;
    size_t required = 0;
    for (const auto& param : definition.params) {
      names.push_back(param.name);
      required += param.default_value ? 0 : 1;
    }
    std::vector<NamedArgument> keywords;
    for (const auto& keyword : args.keyword) keywords.push_back({keyword.name, keyword.pos});
    const std::vector<int> slots =
        bind_arguments("macro '" + definition.name + "'", names, required, args.positional.size(), keywords, pos,
                       [this](Position where, const std::string& message) { fail(where, message); });
    // Arguments are evaluated here, in the caller's scope; defaults in the macro's own template,
    // where they can see the parameters before them.
    std::vector<Value> values;
    for (const auto& arg : args.positional) values.push_back(evaluate(*arg, frame));
    for (const auto& keyword : args.keyword) values.push_back(evaluate(*keyword.value, frame));
    Frame call_frame(macro.scope);
    Renderer body(session_, *macro.template_name);
    for (size_t i = 0; i < definition.params.size(); ++i) {
      const auto& param = definition.params[i];
      call_frame.set(param.name, slots[i] >= 0 ? values[static_cast<size_t>(slots[i])]
                                               : body.evaluate(*param.default_value, call_frame).owned());
    }
    DepthGuard depth(session_.macro_depth);
    std::string out;
    body.execute(definition.body, call_frame, out);
    return Value::owning(std::move(out));
  }

  Value call_range(const CallArgs& args, Position pos, const Frame& frame) {
    if (!args.keyword.empty()) fail(args.keyword.front().pos, "range() takes no keyword arguments");
    if (args.positional.empty() || args.positional.size() > 3)
      fail(pos, "range() takes 1 to 3 arguments, got " + std::to_string(args.positional.size()));
    std::vector<std::int64_t> numbers;
    for (const auto& arg : args.positional) {
      Value value = evaluate(*arg, frame);
      if (value.is_macro() || !value.json().is_number_integer())
        fail(arg->pos, "range() arguments must be ints, got " + type_name(value));
      numbers.push_back(at(arg->pos, [&] { return as_int(value.json()); }));
    }
    const std::int64_t start = numbers.size() == 1 ? 0 : numbers[0];
    const std::int64_t stop = numbers.size() == 1 ? numbers[0] : numbers[1];
    const std::int64_t step = numbers.size() == 3 ? numbers[2] : 1;
    if (step == 0) fail(pos, "range() step must not be zero");
    // Python's len(range()): ceil(|stop - start| / |step|) when stop lies ahead of start in the
    // step's direction, else 0. Exact in unsigned 64-bit arithmetic: the distance and the step's
    // magnitude are below 2^64 (2^63 for step = INT64_MIN), where a signed stop - start may overflow.
    const bool up = step > 0;
    std::uint64_t count = 0;
    if (up ? stop > start : stop < start) {
      const std::uint64_t distance = up ? static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start)
                                        : static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(stop);
      const std::uint64_t stride = up ? static_cast<std::uint64_t>(step) : std::uint64_t{0} - static_cast<std::uint64_t>(step);
      count = distance / stride + (distance % stride != 0 ? 1 : 0);
    }
    if (count > static_cast<std::uint64_t>(Limits::kMaxRangeLength))
      fail(pos, "range() would produce more than " + std::to_string(Limits::kMaxRangeLength) + " items");
    // Each element by adding step to the previous one (start + i * step would overflow in i * step
    // for a large step): an element lies between start and stop, so every sum fits in 64 bits.
    Json list = Json::array();
    std::int64_t value = start;
    for (std::uint64_t i = 0; i < count; ++i) {
      list.push_back(value);
      if (i + 1 < count) value += step;
    }
    return Value::owning(std::move(list));
  }

  Session& session_;
  const std::string& template_name_;
};

}  // namespace

std::string render_template(const detail::TemplateData& tmpl, const Json& context, const Environment* env) {
  if (!context.is_null() && !context.is_object())
    throw TemplateError(tmpl.name, 1, 1, "the render context must be a JSON object, got " + type_name(context));
  Session session{env, {tmpl.name}};
  Frame globals(&context);
  std::string out;
  Renderer(session, tmpl.name).execute(tmpl.body, globals, out);
  return out;
}

}  // namespace flexjit::tmpl
