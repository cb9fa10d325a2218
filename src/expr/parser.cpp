#include "expr/parser.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace flexjit::expr {
namespace {

std::string position_text(const DiagnosticSink& sink, SourceSpan span) {
  const Diagnostic d = sink.make(span, "");
  return std::to_string(d.line) + ":" + std::to_string(d.column);
}

SourceSpan cover(SourceSpan a, SourceSpan b) {
  const uint32_t begin = std::min(a.offset, b.offset);
  const uint32_t end = std::max(a.offset + a.length, b.offset + b.length);
  return {begin, end - begin};
}

bool starts_expression(TokenKind kind) {
  switch (kind) {
    case TokenKind::integer:
    case TokenKind::floating:
    case TokenKind::identifier:
    case TokenKind::kw_true:
    case TokenKind::kw_false:
    case TokenKind::kw_inf:
    case TokenKind::lparen:
    case TokenKind::minus:
    case TokenKind::plus:
    case TokenKind::bang: return true;
    default: return false;
  }
}

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, DiagnosticSink& sink) : tokens_(tokens), sink_(sink) {}

  SyntaxPtr run() {
    try {
      SyntaxPtr root = parse_expression();
      if (current().kind != TokenKind::end) report_trailing();
      return root;
    } catch (const Abort&) {
      return nullptr;
    }
  }

 private:
  struct Abort {};

  // Counts active recursive calls so that hostile nesting fails cleanly long before the stack.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& parser) : parser_(parser) {
      if (++parser_.active_depth_ > 2 * kMaxNestingDepth) parser_.too_deep(parser_.current().span);
    }
    ~DepthGuard() { --parser_.active_depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& parser_;
  };

  const Token& current() const { return tokens_[pos_]; }
  const Token& next() const { return tokens_[std::min(pos_ + 1, tokens_.size() - 1)]; }
  const Token& advance() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }

  [[noreturn]] void fail(SourceSpan span, std::string message, std::string hint = "") {
    sink_.error(span, std::move(message), std::move(hint));
    throw Abort{};
  }
  [[noreturn]] void too_deep(SourceSpan span) {
    fail(span, "expression is nested too deeply (the limit is " + std::to_string(kMaxNestingDepth) +
                   " levels)",
         "simplify the expression; a table of values belongs in a buffer");
  }

  SyntaxPtr node(SyntaxKind kind, SourceSpan span, SourceSpan op_span) {
    auto n = std::make_unique<Syntax>();
    n->kind = kind;
    n->span = span;
    n->op_span = op_span;
    return n;
  }
  void finish(Syntax& n) {
    int height = 0;
    for (const auto& operand : n.operands) height = std::max(height, operand->depth);
    n.depth = height + 1;
    if (n.depth > kMaxNestingDepth) too_deep(n.op_span);
  }

  SyntaxPtr parse_expression() { return parse_conditional(); }

  SyntaxPtr parse_conditional() {
    DepthGuard guard(*this);
    SyntaxPtr condition = parse_binary(1);
    if (current().kind != TokenKind::question) return condition;
    const Token question = advance();
    SyntaxPtr if_true = parse_expression();
    if (current().kind != TokenKind::colon)
      fail(current().span,
           "expected ':' for the '?' at " + position_text(sink_, question.span) + ", found " +
               describe_token(current()),
           "a conditional is written `condition ? value_if_true : value_if_false`");
    advance();
    SyntaxPtr if_false = parse_conditional();
    auto n = node(SyntaxKind::conditional, cover(condition->span, if_false->span), question.span);
    n->operands.push_back(std::move(condition));
    n->operands.push_back(std::move(if_true));
    n->operands.push_back(std::move(if_false));
    finish(*n);
    return n;
  }

  struct BinaryToken {
    BinaryOp op;
    int precedence;
    bool is_pow = false;  // `**`, parsed as pow(a, b) after reporting it
  };

  // The binary operator at the current token, including recognised mistakes (reported here).
  bool peek_binary(BinaryToken& out) const {
    switch (current().kind) {
      case TokenKind::pipe_pipe: out = {BinaryOp::logical_or, 1}; return true;
      case TokenKind::amp_amp: out = {BinaryOp::logical_and, 2}; return true;
      case TokenKind::pipe: out = {BinaryOp::bit_or, 3}; return true;
      case TokenKind::caret: out = {BinaryOp::bit_xor, 4}; return true;
      case TokenKind::amp: out = {BinaryOp::bit_and, 5}; return true;
      case TokenKind::eq_eq:
      case TokenKind::assign: out = {BinaryOp::eq, 6}; return true;
      case TokenKind::bang_eq: out = {BinaryOp::ne, 6}; return true;
      case TokenKind::lt: out = {BinaryOp::lt, 7}; return true;
      case TokenKind::le:
      case TokenKind::arrow_le: out = {BinaryOp::le, 7}; return true;
      case TokenKind::gt: out = {BinaryOp::gt, 7}; return true;
      case TokenKind::ge:
      case TokenKind::arrow_ge: out = {BinaryOp::ge, 7}; return true;
      case TokenKind::plus: out = {BinaryOp::add, 8}; return true;
      case TokenKind::minus: out = {BinaryOp::sub, 8}; return true;
      case TokenKind::star:
      case TokenKind::shift_left: out = {BinaryOp::mul, 9}; return true;
      case TokenKind::slash:
      case TokenKind::shift_right: out = {BinaryOp::div, 9}; return true;
      case TokenKind::percent: out = {BinaryOp::mod, 9}; return true;
      case TokenKind::star_star: out = {BinaryOp::mul, 10, true}; return true;
      case TokenKind::identifier:
        // Python's `and` / `or` between two operands.
        if (current().text == "and") { out = {BinaryOp::logical_and, 2}; return true; }
        if (current().text == "or") { out = {BinaryOp::logical_or, 1}; return true; }
        return false;
      default: return false;
    }
  }

  SyntaxPtr parse_binary(int min_precedence) {
    SyntaxPtr lhs = parse_unary();
    BinaryToken op;
    while (peek_binary(op) && op.precedence >= min_precedence) {
      const Token op_token = advance();
      SyntaxPtr rhs = parse_binary(op.precedence + 1);
      report_operator_mistake(op_token, *lhs, *rhs);
      const SourceSpan span = cover(lhs->span, rhs->span);
      SyntaxPtr n;
      if (op.is_pow) {
        n = node(SyntaxKind::call, span, op_token.span);
        n->text = "pow";
      } else {
        n = node(SyntaxKind::binary, span, op_token.span);
        n->binary_op = op.op;
      }
      n->operands.push_back(std::move(lhs));
      n->operands.push_back(std::move(rhs));
      finish(*n);
      lhs = std::move(n);
    }
    return lhs;
  }

  // A mistaken operator with an obvious intent: reported, then parsed as intended.
  void report_operator_mistake(const Token& op, const Syntax& lhs, const Syntax& rhs) {
    const std::string a = sink_.quote(lhs.span), b = sink_.quote(rhs.span);
    const bool quotable = !a.empty() && !b.empty();
    auto suggest = [&](std::string_view intended) {
      return quotable ? "did you mean `" + a + " " + std::string(intended) + " " + b + "`?"
                      : "did you mean '" + std::string(intended) + "'?";
    };
    switch (op.kind) {
      case TokenKind::assign:
        sink_.error(op.span, "'=' is not a comparison; " + suggest("=="),
                    "expressions cannot assign; '==' compares two values");
        break;
      case TokenKind::arrow_ge:
        sink_.error(op.span, "'=>' is not an operator; " + suggest(">="));
        break;
      case TokenKind::arrow_le:
        sink_.error(op.span, "'=<' is not an operator; " + suggest("<="));
        break;
      case TokenKind::star_star:
        sink_.error(op.span,
                    "'**' is not an operator; " +
                        (quotable ? "did you mean `pow(" + a + ", " + b + ")`?"
                                  : std::string("use `pow(x, y)`")));
        break;
      case TokenKind::shift_left:
        sink_.error(op.span, "'<<' (shift) is not supported",
                    "multiply by a power of two instead, e.g. `x * 4`");
        break;
      case TokenKind::shift_right:
        sink_.error(op.span, "'>>' (shift) is not supported",
                    "divide by a power of two instead, e.g. `x / 4`");
        break;
      case TokenKind::identifier:
        sink_.error(op.span, "'" + std::string(op.text) + "' is not an operator; " +
                                 (op.text == "and" ? suggest("&&") : suggest("||")));
        break;
      default: break;
    }
  }

  SyntaxPtr parse_unary() {
    DepthGuard guard(*this);
    const Token& token = current();
    const bool python_not = token.kind == TokenKind::identifier && token.text == "not" &&
                            starts_expression(next().kind);
    if (python_not) {
      // Python's `not` binds more loosely than comparisons: `not a >= b` is `!(a >= b)`.
      const Token op = advance();
      SyntaxPtr operand = parse_binary(3);
      const std::string text = sink_.quote(operand->span);
      sink_.error(op.span, "'not' is not an operator; " +
                               (text.empty() ? std::string("did you mean '!'?")
                                             : "did you mean `!(" + text + ")`?"));
      auto n = node(SyntaxKind::unary, cover(op.span, operand->span), op.span);
      n->unary_op = UnaryOp::logical_not;
      n->operands.push_back(std::move(operand));
      finish(*n);
      return n;
    }
    if (token.kind == TokenKind::minus || token.kind == TokenKind::bang) {
      const Token op = advance();
      if (op.kind == TokenKind::minus && current().kind == TokenKind::integer) {
        // `-2147483648` is a valid int even though 2147483648 is not.
        const Token literal = advance();
        auto n = node(SyntaxKind::integer, cover(op.span, literal.span), cover(op.span, literal.span));
        n->integer = -check_integer(literal, true);
        return parse_postfix(std::move(n));
      }
      SyntaxPtr operand = parse_unary();
      if (op.kind == TokenKind::minus &&
          (operand->kind == SyntaxKind::floating || operand->kind == SyntaxKind::integer)) {
        // A negative literal stays a literal (`-inf`, `-0.5`), as the canonical form prints it.
        operand->span = cover(op.span, operand->span);
        operand->op_span = operand->span;
        if (operand->kind == SyntaxKind::floating)
          operand->floating = -operand->floating;
        else
          operand->integer = static_cast<int32_t>(0u - static_cast<uint32_t>(operand->integer));
        return operand;
      }
      auto n = node(SyntaxKind::unary, cover(op.span, operand->span), op.span);
      n->unary_op = op.kind == TokenKind::minus ? UnaryOp::negate : UnaryOp::logical_not;
      n->operands.push_back(std::move(operand));
      finish(*n);
      return n;
    }
    if (token.kind == TokenKind::plus) {
      advance();  // unary plus changes nothing
      return parse_unary();
    }
    return parse_postfix(parse_primary());
  }

  int64_t check_integer(const Token& literal, bool negated) {
    const uint64_t limit = negated ? 2147483648ull : 2147483647ull;
    if (literal.integer <= limit) return static_cast<int64_t>(literal.integer);
    sink_.error(literal.span,
                "integer literal " + std::string(literal.text) +
                    " is too large for an int (the largest is 2147483647)",
                "write it as a float, e.g. `" + std::string(literal.text) + ".0`");
    return 0;
  }

  SyntaxPtr parse_primary() {
    const Token token = current();
    switch (token.kind) {
      case TokenKind::integer: {
        advance();
        auto n = node(SyntaxKind::integer, token.span, token.span);
        n->integer = check_integer(token, false);
        return n;
      }
      case TokenKind::floating:
      case TokenKind::kw_inf: {
        advance();
        auto n = node(SyntaxKind::floating, token.span, token.span);
        n->floating = token.kind == TokenKind::kw_inf ? HUGE_VAL : token.floating;
        return n;
      }
      case TokenKind::kw_true:
      case TokenKind::kw_false: {
        advance();
        auto n = node(SyntaxKind::boolean, token.span, token.span);
        n->boolean = token.kind == TokenKind::kw_true;
        return n;
      }
      case TokenKind::identifier: {
        advance();
        if (current().kind == TokenKind::lparen) return parse_call(token);
        auto n = node(SyntaxKind::name, token.span, token.span);
        n->text = token.text;
        return n;
      }
      case TokenKind::lparen: {
        advance();
        SyntaxPtr inner = parse_expression();
        if (current().kind != TokenKind::rparen)
          fail(current().span, "expected ')', found " + describe_token(current()),
               "is an operator missing between two values?");
        const Token close = advance();
        inner->span = cover(token.span, close.span);
        return inner;
      }
      default: break;
    }
    std::string hint;
    if (token.kind == TokenKind::end) hint = "the expression ends where a value is still needed";
    else if (token.kind == TokenKind::rparen) hint = "parentheses must hold an expression";
    else if (token.kind == TokenKind::comma) hint = "a value is missing before the ','";
    fail(token.span, "expected an expression, found " + describe_token(token), hint);
  }

  SyntaxPtr parse_call(const Token& callee) {
    advance();  // '('
    auto n = node(SyntaxKind::call, callee.span, callee.span);
    n->text = callee.text;
    if (current().kind != TokenKind::rparen) {
      while (true) {
        n->operands.push_back(parse_expression());
        if (current().kind == TokenKind::comma) {
          advance();
          continue;
        }
        if (current().kind == TokenKind::rparen) break;
        fail(current().span,
             "expected ',' or ')' in the call of '" + std::string(callee.text) + "', found " +
                 describe_token(current()),
             "arguments are separated by ','");
      }
    }
    const Token close = advance();
    n->span = cover(callee.span, close.span);
    finish(*n);
    return n;
  }

  SyntaxPtr parse_postfix(SyntaxPtr operand) {
    while (current().kind == TokenKind::lbracket) {
      const Token open = advance();
      bool first = true;
      while (true) {
        SyntaxPtr index = parse_expression();
        auto n = node(SyntaxKind::index, cover(operand->span, index->span), open.span);
        n->operands.push_back(std::move(operand));
        n->operands.push_back(std::move(index));
        finish(*n);
        operand = std::move(n);
        if (current().kind == TokenKind::comma) {
          const Token comma = advance();
          if (first) {
            const std::string name = operand->operands[0]->kind == SyntaxKind::name
                                         ? std::string(operand->operands[0]->text)
                                         : std::string("buffer");
            sink_.error(comma.span, "buffer indices go in separate brackets",
                        "write `" + name + "[i][j]`, not `" + name + "[i, j]`");
          }
          first = false;
          continue;
        }
        if (current().kind != TokenKind::rbracket)
          fail(current().span, "expected ']', found " + describe_token(current()),
               "is an operator missing between two values?");
        const Token close = advance();
        operand->span = cover(operand->span, close.span);
        break;
      }
    }
    return operand;
  }

  void report_trailing() {
    const Token& token = current();
    switch (token.kind) {
      case TokenKind::comma:
        fail(token.span, "unexpected ',' after a complete expression",
             "an expression has one value; ',' only separates function arguments");
      case TokenKind::colon:
        fail(token.span, "unexpected ':' without a matching '?'",
             "a conditional is written `condition ? value_if_true : value_if_false`");
      default:
        fail(token.span, "expected an operator, found " + describe_token(token),
             "two values in a row need an operator between them, e.g. `&&` or `+`");
    }
  }

  const std::vector<Token>& tokens_;
  DiagnosticSink& sink_;
  size_t pos_ = 0;
  int active_depth_ = 0;
};

}  // namespace

bool check_brackets(const std::vector<Token>& tokens, DiagnosticSink& sink) {
  const size_t before = sink.count();
  std::vector<const Token*> open;
  for (const Token& token : tokens) {
    if (token.kind == TokenKind::lparen || token.kind == TokenKind::lbracket) {
      open.push_back(&token);
    } else if (token.kind == TokenKind::rparen || token.kind == TokenKind::rbracket) {
      const bool paren = token.kind == TokenKind::rparen;
      const TokenKind opener = paren ? TokenKind::lparen : TokenKind::lbracket;
      if (open.empty()) {
        sink.error(token.span, std::string("unmatched '") + (paren ? ")" : "]") + "'",
                   std::string("remove it, or add the missing '") + (paren ? "(" : "[") +
                       "' before it");
        continue;
      }
      if (open.back()->kind != opener) {
        const bool open_paren = open.back()->kind == TokenKind::lparen;
        sink.error(token.span,
                   std::string("expected '") + (open_paren ? ")" : "]") + "' to close the '" +
                       (open_paren ? "(" : "[") + "' at " + position_text(sink, open.back()->span) +
                       ", found '" + (paren ? ")" : "]") + "'");
        return false;  // the rest of the nesting is ambiguous; one message is enough
      }
      open.pop_back();
    }
  }
  for (const Token* token : open) {
    const bool paren = token->kind == TokenKind::lparen;
    sink.error(token->span, std::string("'") + (paren ? "(" : "[") + "' is never closed",
               std::string("add the matching '") + (paren ? ")" : "]") + "'");
  }
  return sink.count() == before;
}

SyntaxPtr parse_tokens(const std::vector<Token>& tokens, DiagnosticSink& sink) {
  return Parser(tokens, sink).run();
}

}  // namespace flexjit::expr
