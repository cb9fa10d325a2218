#include "tmpl/parser.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "tmpl/arguments.hpp"
#include "tmpl/filters.hpp"
#include "tmpl/suggest.hpp"

namespace flexjit::tmpl {
namespace {

const std::vector<std::string>& tag_names() {
  static const std::vector<std::string> names = {"if", "for", "set", "include", "macro", "filter", "raw"};
  return names;
}

// Keywords that continue or close a block; meeting one where no open block accepts it is an error.
const std::vector<std::string>& closing_keywords() {
  static const std::vector<std::string> keywords = {"elif", "else", "endif", "endfor", "endset",
                                                    "endmacro", "endfilter", "endraw"};
  return keywords;
}

bool block_accepts(const std::string& block, const std::string& keyword) {
  if (keyword == "end" + block) return true;
  if (block == "if") return keyword == "elif" || keyword == "else";
  if (block == "for") return keyword == "else";
  return false;
}

std::string blocks_accepting(const std::string& keyword) {
  if (keyword == "else") return "'if' or 'for'";
  if (keyword == "elif") return "'if'";
  return "'" + keyword.substr(3) + "'";
}

int depth_of(const ExprPtr& expr) { return expr ? expr->depth : 0; }
int depth_of(const std::vector<ExprPtr>& exprs) {
  int depth = 0;
  for (const auto& expr : exprs) depth = std::max(depth, depth_of(expr));
  return depth;
}

// The depth of a node's deepest operand; the renderer recurses this deep.
struct ChildDepth {
  int operator()(const LiteralExpr&) const { return 0; }
  int operator()(const NameExpr&) const { return 0; }
  int operator()(const ListExpr& e) const { return depth_of(e.items); }
  int operator()(const AttributeExpr& e) const { return depth_of(e.object); }
  int operator()(const IndexExpr& e) const { return std::max(depth_of(e.object), depth_of(e.key)); }
  int operator()(const CallExpr& e) const {
    int depth = std::max(depth_of(e.callee), depth_of(e.args.positional));
    for (const auto& keyword : e.args.keyword) depth = std::max(depth, depth_of(keyword.value));
    return depth;
  }
  int operator()(const FilterExpr& e) const { return std::max(depth_of(e.input), depth_of(e.application.args)); }
  int operator()(const TestExpr& e) const { return std::max(depth_of(e.input), depth_of(e.args)); }
  int operator()(const UnaryExpr& e) const { return depth_of(e.operand); }
  int operator()(const BinaryExpr& e) const { return std::max(depth_of(e.left), depth_of(e.right)); }
  int operator()(const CompareExpr& e) const {
    int depth = depth_of(e.first);
    for (const auto& step : e.steps) depth = std::max(depth, depth_of(step.operand));
    return depth;
  }
  int operator()(const ConditionalExpr& e) const {
    return std::max({depth_of(e.condition), depth_of(e.then_value), depth_of(e.else_value)});
  }
};

struct OpenBlock {
  std::string keyword;
  Position pos;
  bool seen_else = false;
};

class Parser {
 public:
  Parser(const std::string& name, std::vector<Token> tokens) : name_(name), tokens_(std::move(tokens)) {}

  Body parse() { return parse_body({}); }

 private:
  // ---- tokens ----

  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(index_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& token = peek();
    if (index_ < tokens_.size() - 1) ++index_;
    return token;
  }
  static bool is_operator(const Token& token, std::string_view op) {
    return token.kind == TokenKind::Operator && token.text == op;
  }
  static bool is_name(const Token& token, std::string_view name) {
    return token.kind == TokenKind::Name && token.text == name;
  }
  bool skip_operator(std::string_view op) {
    if (!is_operator(peek(), op)) return false;
    next();
    return true;
  }

  [[noreturn]] void fail(Position pos, const std::string& message) const {
    throw TemplateError(name_, pos.line, pos.column, message);
  }
  [[noreturn]] void fail_expected(const std::string& what, const Token& found) const {
    fail(found.pos, "expected " + what + " but found " + describe(found));
  }
  void expect_operator(std::string_view op) {
    if (!skip_operator(op)) fail_expected("'" + std::string(op) + "'", peek());
  }
  const Token& expect_name(const char* what) {
    if (peek().kind != TokenKind::Name) fail_expected(what, peek());
    return next();
  }
  void expect_block_end() {
    if (peek().kind != TokenKind::BlockEnd) fail_expected("'%}'", peek());
    next();
  }

  // ---- statements ----

  // Parses text and tags until one of `terminators` (a tag keyword) or the end of the template.
  // On a terminator, returns with that keyword as the current token.
  Body parse_body(const std::vector<std::string>& terminators) {
    Body body;
    for (;;) {
      const Token& token = peek();
      switch (token.kind) {
        case TokenKind::Text:
          body.push_back(std::make_unique<Stmt>(Stmt{token.pos, TextStmt{token.text}}));
          next();
          break;
        case TokenKind::VariableBegin: {
          next();
          ExprPtr value = parse_expression();
          if (peek().kind != TokenKind::VariableEnd) fail_expected("'}}'", peek());
          next();
          body.push_back(std::make_unique<Stmt>(Stmt{token.pos, OutputStmt{std::move(value)}}));
          break;
        }
        case TokenKind::BlockBegin: {
          next();
          const Token& keyword = peek();
          if (keyword.kind != TokenKind::Name) fail_expected("a tag name", keyword);
          if (std::find(terminators.begin(), terminators.end(), keyword.text) != terminators.end())
            return body;
          const auto& closing = closing_keywords();
          if (std::find(closing.begin(), closing.end(), keyword.text) != closing.end())
            fail_misplaced(keyword);
          body.push_back(parse_tag());
          break;
        }
        case TokenKind::End:
          if (!terminators.empty()) {
            const OpenBlock& block = open_blocks_.back();
            fail(block.pos, "unclosed '" + block.keyword + "' block: expected '{% end" + block.keyword +
                                " %}' before the end of the template");
          }
          return body;
        default:
          fail_expected("text or a tag", token);
      }
    }
  }

  [[noreturn]] void fail_misplaced(const Token& keyword) const {
    const std::string& word = keyword.text;
    bool accepted = std::any_of(open_blocks_.begin(), open_blocks_.end(),
                                [&](const OpenBlock& block) { return block_accepts(block.keyword, word); });
    if (!accepted)
      fail(keyword.pos, "stray '{% " + word + " %}': no " + blocks_accepting(word) + " block is open");
    const OpenBlock& innermost = open_blocks_.back();
    if (innermost.seen_else && block_accepts(innermost.keyword, word) && word != "end" + innermost.keyword)
      fail(keyword.pos, "'" + word + "' after 'else' in the same '" + innermost.keyword + "' block");
    fail(keyword.pos, "unexpected '{% " + word + " %}': the '" + innermost.keyword + "' block opened at line " +
                          std::to_string(innermost.pos.line) + " is still open (close it with '{% end" +
                          innermost.keyword + " %}')");
  }

  // Records a block as open, so that errors inside it and an unclosed end can name it.
  void open_block(const Token& keyword) {
    if (static_cast<int>(open_blocks_.size()) >= Limits::kMaxBlockDepth)
      fail(keyword.pos, "blocks are nested too deeply (more than " + std::to_string(Limits::kMaxBlockDepth) +
                            " levels)");
    open_blocks_.push_back({keyword.text, keyword.pos});
  }

  // Consumes the terminator keyword the body stopped at and the '%}' after it.
  std::string take_terminator() {
    std::string keyword = next().text;
    expect_block_end();
    return keyword;
  }

  StmtPtr parse_tag() {
    const Token& keyword = peek();
    const std::string& word = keyword.text;
    if (word == "if") return parse_if();
    if (word == "for") return parse_for();
    if (word == "set") return parse_set();
    if (word == "include") return parse_include();
    if (word == "macro") return parse_macro();
    if (word == "filter") return parse_filter_block();
    if (word == "raw") {
      // The lexer takes every well-formed `{% raw %}`; here something follows the keyword.
      next();
      fail_expected("'%}'", peek());
    }
    fail(keyword.pos, "unknown tag '" + word + "'" + did_you_mean(word, tag_names()));
  }

  StmtPtr parse_if() {
    const Token& keyword = next();
    const Position pos = keyword.pos;
    open_block(keyword);
    IfStmt stmt;
    ExprPtr condition = parse_expression();
    expect_block_end();
    for (;;) {
      Body body = parse_body({"elif", "else", "endif"});
      stmt.branches.push_back({std::move(condition), std::move(body)});
      const std::string ended_by = next().text;
      if (ended_by == "elif") {
        condition = parse_expression();
        expect_block_end();
        continue;
      }
      expect_block_end();
      if (ended_by == "else") {
        open_blocks_.back().seen_else = true;
        stmt.else_body = parse_body({"endif"});
        take_terminator();
      }
      break;
    }
    open_blocks_.pop_back();
    return std::make_unique<Stmt>(Stmt{pos, std::move(stmt)});
  }

  StmtPtr parse_for() {
    const Token& keyword = next();
    const Position pos = keyword.pos;
    open_block(keyword);
    ForStmt stmt;
    do {
      stmt.targets.push_back(expect_name("a loop variable name").text);
    } while (skip_operator(","));
    if (!is_name(peek(), "in")) fail_expected("'in'", peek());
    next();
    stmt.iterable = parse_expression();
    expect_block_end();
    stmt.body = parse_body({"else", "endfor"});
    if (take_terminator() == "else") {
      open_blocks_.back().seen_else = true;
      stmt.else_body = parse_body({"endfor"});
      take_terminator();
    }
    open_blocks_.pop_back();
    return std::make_unique<Stmt>(Stmt{pos, std::move(stmt)});
  }

  StmtPtr parse_set() {
    const Token& keyword = next();
    const Position pos = keyword.pos;
    std::string target = expect_name("a variable name").text;
    if (skip_operator("=")) {
      ExprPtr value = parse_expression();
      expect_block_end();
      return std::make_unique<Stmt>(Stmt{pos, SetStmt{std::move(target), std::move(value)}});
    }
    if (peek().kind != TokenKind::BlockEnd) fail_expected("'=' or '%}'", peek());
    next();
    open_block(keyword);
    Body body = parse_body({"endset"});
    take_terminator();
    open_blocks_.pop_back();
    return std::make_unique<Stmt>(Stmt{pos, SetBlockStmt{std::move(target), std::move(body)}});
  }

  StmtPtr parse_include() {
    const Position pos = next().pos;
    ExprPtr template_name = parse_expression();
    bool ignore_missing = false;
    if (is_name(peek(), "ignore")) {
      next();
      if (!is_name(peek(), "missing")) fail_expected("'missing'", peek());
      next();
      ignore_missing = true;
    }
    expect_block_end();
    return std::make_unique<Stmt>(Stmt{pos, IncludeStmt{std::move(template_name), ignore_missing}});
  }

  StmtPtr parse_macro() {
    const Token& keyword = next();
    const Position pos = keyword.pos;
    MacroStmt stmt;
    stmt.name = expect_name("a macro name").text;
    expect_operator("(");
    while (!skip_operator(")")) {
      const Token& param = expect_name("a parameter name");
      for (const auto& earlier : stmt.params)
        if (earlier.name == param.text)
          fail(param.pos, "macro '" + stmt.name + "' has two parameters named '" + param.text + "'");
      ExprPtr default_value;
      if (skip_operator("=")) {
        default_value = parse_expression();
      } else if (!stmt.params.empty() && stmt.params.back().default_value) {
        fail(param.pos, "macro '" + stmt.name + "': parameter '" + param.text +
                            "' needs a default value (it follows a parameter with one)");
      }
      stmt.params.push_back({param.text, param.pos, std::move(default_value)});
      if (!is_operator(peek(), ")") && !skip_operator(",")) fail_expected("',' or ')'", peek());
    }
    expect_block_end();
    open_block(keyword);
    stmt.body = parse_body({"endmacro"});
    take_terminator();
    open_blocks_.pop_back();
    return std::make_unique<Stmt>(Stmt{pos, std::move(stmt)});
  }

  StmtPtr parse_filter_block() {
    const Token& keyword = next();
    const Position pos = keyword.pos;
    FilterBlockStmt stmt;
    do {
      stmt.filters.push_back(parse_filter_application());
    } while (skip_operator("|"));
    expect_block_end();
    open_block(keyword);
    stmt.body = parse_body({"endfilter"});
    take_terminator();
    open_blocks_.pop_back();
    return std::make_unique<Stmt>(Stmt{pos, std::move(stmt)});
  }

  // ---- expressions ----

  // Counts the parser's own recursion (parentheses, unary chains); node depth is checked in make().
  class NestingGuard {
   public:
    NestingGuard(Parser& parser, Position pos) : parser_(parser) {
      if (++parser_.nesting_ > Limits::kMaxExpressionDepth) parser_.fail_too_deep(pos);
    }
    ~NestingGuard() { --parser_.nesting_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

   private:
    Parser& parser_;
  };

  [[noreturn]] void fail_too_deep(Position pos) const {
    fail(pos, "expression is nested too deeply (more than " + std::to_string(Limits::kMaxExpressionDepth) +
                  " levels)");
  }

  ExprPtr make(Position pos, Expr::Node node) {
    const int depth = 1 + std::visit(ChildDepth{}, node);
    if (depth > Limits::kMaxExpressionDepth) fail_too_deep(pos);
    return std::make_unique<Expr>(Expr{pos, depth, std::move(node)});
  }

  ExprPtr parse_expression() {
    NestingGuard guard(*this, peek().pos);
    ExprPtr value = parse_or();
    if (!is_name(peek(), "if")) return value;
    const Position pos = next().pos;
    ExprPtr condition = parse_or();
    if (!is_name(peek(), "else")) fail_expected("'else'", peek());
    next();
    ExprPtr else_value = parse_expression();
    return make(pos, ConditionalExpr{std::move(condition), std::move(value), std::move(else_value)});
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (is_name(peek(), "or")) {
      const Position pos = next().pos;
      ExprPtr right = parse_and();
      left = make(pos, BinaryExpr{BinaryOp::Or, std::move(left), std::move(right)});
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (is_name(peek(), "and")) {
      const Position pos = next().pos;
      ExprPtr right = parse_not();
      left = make(pos, BinaryExpr{BinaryOp::And, std::move(left), std::move(right)});
    }
    return left;
  }

  ExprPtr parse_not() {
    if (!is_name(peek(), "not")) return parse_compare();
    NestingGuard guard(*this, peek().pos);
    const Position pos = next().pos;
    return make(pos, UnaryExpr{UnaryOp::Not, parse_not()});
  }

  bool take_compare_operator(CompareOp& op) {
    static const std::pair<const char*, CompareOp> operators[] = {
        {"==", CompareOp::Equal}, {"!=", CompareOp::NotEqual},  {"<", CompareOp::Less},
        {"<=", CompareOp::LessEqual}, {">", CompareOp::Greater}, {">=", CompareOp::GreaterEqual}};
    for (const auto& [text, value] : operators) {
      if (skip_operator(text)) {
        op = value;
        return true;
      }
    }
    if (is_name(peek(), "in")) {
      next();
      op = CompareOp::In;
      return true;
    }
    if (is_name(peek(), "not") && is_name(peek(1), "in")) {
      next();
      next();
      op = CompareOp::NotIn;
      return true;
    }
    return false;
  }

  ExprPtr parse_compare() {
    ExprPtr first = parse_math1();
    std::vector<CompareStep> steps;
    for (;;) {
      const Position pos = peek().pos;
      CompareOp op;
      if (!take_compare_operator(op)) break;
      steps.push_back({op, pos, parse_math1()});
    }
    if (steps.empty()) return first;
    const Position pos = steps.front().pos;
    return make(pos, CompareExpr{std::move(first), std::move(steps)});
  }

  // One level of left-associative binary operators.
  template <class Operand>
  ExprPtr parse_binary(std::initializer_list<std::pair<const char*, BinaryOp>> operators, Operand operand) {
    ExprPtr left = (this->*operand)();
    for (;;) {
      auto match = std::find_if(operators.begin(), operators.end(),
                                [&](const auto& candidate) { return is_operator(peek(), candidate.first); });
      if (match == operators.end()) return left;
      const Position pos = next().pos;
      ExprPtr right = (this->*operand)();
      left = make(pos, BinaryExpr{match->second, std::move(left), std::move(right)});
    }
  }

  ExprPtr parse_math1() {
    return parse_binary({{"+", BinaryOp::Add}, {"-", BinaryOp::Subtract}}, &Parser::parse_concat);
  }
  ExprPtr parse_concat() { return parse_binary({{"~", BinaryOp::Concat}}, &Parser::parse_math2); }
  ExprPtr parse_math2() {
    return parse_binary({{"*", BinaryOp::Multiply}, {"/", BinaryOp::Divide}, {"//", BinaryOp::FloorDivide},
                         {"%", BinaryOp::Modulo}},
                        &Parser::parse_power);
  }
  ExprPtr parse_power() { return parse_binary({{"**", BinaryOp::Power}}, &Parser::parse_unary_with_filters); }
  ExprPtr parse_unary_with_filters() { return parse_unary(true); }

  // As in Jinja, `-x | abs` filters the negated value: the sign binds tighter than filters.
  ExprPtr parse_unary(bool with_filters) {
    ExprPtr node;
    if (is_operator(peek(), "-") || is_operator(peek(), "+")) {
      NestingGuard guard(*this, peek().pos);
      const Token& sign = next();
      UnaryOp op = sign.text == "-" ? UnaryOp::Negate : UnaryOp::Plus;
      node = make(sign.pos, UnaryExpr{op, parse_unary(false)});
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    return with_filters ? parse_filters_and_tests(std::move(node)) : std::move(node);
  }

  ExprPtr parse_primary() {
    const Token& token = peek();
    switch (token.kind) {
      case TokenKind::Name: {
        next();
        if (token.text == "true" || token.text == "True") return make(token.pos, LiteralExpr{true});
        if (token.text == "false" || token.text == "False") return make(token.pos, LiteralExpr{false});
        if (token.text == "none" || token.text == "None") return make(token.pos, LiteralExpr{nullptr});
        return make(token.pos, NameExpr{token.text});
      }
      case TokenKind::String: {
        std::string text = next().text;
        while (peek().kind == TokenKind::String) text += next().text;  // "a" "b" == "ab", as in Python
        return make(token.pos, LiteralExpr{std::move(text)});
      }
      case TokenKind::Integer: {
        next();
        errno = 0;
        long long value = std::strtoll(token.text.c_str(), nullptr, 10);
        if (errno == ERANGE) fail(token.pos, "integer literal '" + token.text + "' is too large");
        return make(token.pos, LiteralExpr{static_cast<std::int64_t>(value)});
      }
      case TokenKind::Float:
        next();
        return make(token.pos, LiteralExpr{std::strtod(token.text.c_str(), nullptr)});
      case TokenKind::Operator:
        if (token.text == "(") {
          next();
          ExprPtr inner = parse_expression();
          expect_operator(")");
          return inner;
        }
        if (token.text == "[") return parse_list();
        break;
      default:
        break;
    }
    fail_expected("an expression", token);
  }

  ExprPtr parse_list() {
    const Position pos = next().pos;
    ListExpr list;
    while (!skip_operator("]")) {
      list.items.push_back(parse_expression());
      if (!is_operator(peek(), "]") && !skip_operator(",")) fail_expected("',' or ']'", peek());
    }
    return make(pos, std::move(list));
  }

  ExprPtr parse_postfix(ExprPtr node) {
    for (;;) {
      if (skip_operator(".")) {
        const Token& attribute = peek();
        if (attribute.kind == TokenKind::Integer) {  // `dims.0` reads an index, as in Jinja
          next();
          ExprPtr key = make(attribute.pos, LiteralExpr{std::strtoll(attribute.text.c_str(), nullptr, 10)});
          node = make(attribute.pos, IndexExpr{std::move(node), std::move(key)});
          continue;
        }
        expect_name("an attribute name");
        node = make(attribute.pos, AttributeExpr{std::move(node), attribute.text});
      } else if (is_operator(peek(), "[")) {
        next();
        const Position pos = peek().pos;
        ExprPtr key = parse_expression();
        expect_operator("]");
        node = make(pos, IndexExpr{std::move(node), std::move(key)});
      } else if (is_operator(peek(), "(")) {
        next();
        const Position pos = node->pos;
        CallArgs args = parse_call_args();
        node = make(pos, CallExpr{std::move(node), std::move(args)});
      } else {
        return node;
      }
    }
  }

  // After '(' up to and including ')'.
  CallArgs parse_call_args() {
    CallArgs args;
    while (!skip_operator(")")) {
      if (peek().kind == TokenKind::Name && is_operator(peek(1), "=")) {
        const Token& name = next();
        next();
        args.keyword.push_back({name.text, name.pos, parse_expression()});
      } else {
        if (!args.keyword.empty()) fail(peek().pos, "positional argument after keyword argument");
        args.positional.push_back(parse_expression());
      }
      if (!is_operator(peek(), ")") && !skip_operator(",")) fail_expected("',' or ')'", peek());
    }
    return args;
  }

  // Binds parsed arguments to a filter's or test's parameters (see bind_arguments).
  std::vector<ExprPtr> bind(const std::string& callee, const std::vector<ParamSpec>& params, size_t required,
                            CallArgs args, Position pos) {
    std::vector<std::string> param_names;
    for (const auto& param : params) param_names.push_back(param.name);
    std::vector<NamedArgument> keywords;
    for (const auto& keyword : args.keyword) keywords.push_back({keyword.name, keyword.pos});
    std::vector<int> slots = bind_arguments(callee, param_names, required, args.positional.size(), keywords, pos,
                                            [this](Position where, const std::string& message) { fail(where, message); });
    std::vector<ExprPtr> bound(params.size());
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i] < 0) continue;
      auto index = static_cast<size_t>(slots[i]);
      bound[i] = index < args.positional.size() ? std::move(args.positional[index])
                                                : std::move(args.keyword[index - args.positional.size()].value);
    }
    return bound;
  }

  FilterApplication parse_filter_application() {
    const Token& name = expect_name("a filter name");
    const FilterSpec* filter = find_filter(name.text);
    if (!filter) fail(name.pos, "unknown filter '" + name.text + "'" + did_you_mean(name.text, filter_names()));
    CallArgs args;
    if (skip_operator("(")) args = parse_call_args();
    return {filter, name.pos, bind("filter '" + filter->name + "'", filter->params, filter->required, std::move(args), name.pos)};
  }

  ExprPtr parse_filters_and_tests(ExprPtr node) {
    for (;;) {
      if (skip_operator("|")) {
        FilterApplication application = parse_filter_application();
        const Position pos = application.pos;
        node = make(pos, FilterExpr{std::move(node), std::move(application)});
      } else if (is_name(peek(), "is")) {
        next();
        bool negated = false;
        if (is_name(peek(), "not")) {
          next();
          negated = true;
        }
        const Token& name = expect_name("a test name");
        const TestSpec* test = find_test(name.text);
        if (!test) fail(name.pos, "unknown test '" + name.text + "'" + did_you_mean(name.text, test_names()));
        CallArgs args;
        if (skip_operator("(")) args = parse_call_args();
        auto bound = bind("test '" + test->name + "'", test->params, test->required, std::move(args), name.pos);
        node = make(name.pos, TestExpr{std::move(node), test, std::move(bound), negated});
      } else {
        return node;
      }
    }
  }

  const std::string& name_;
  std::vector<Token> tokens_;
  size_t index_ = 0;
  std::vector<OpenBlock> open_blocks_;
  int nesting_ = 0;
};

}  // namespace

Body parse_template(const std::string& template_name, std::string_view text, const Options& options) {
  return Parser(template_name, tokenize(template_name, text, options)).parse();
}

}  // namespace flexjit::tmpl
