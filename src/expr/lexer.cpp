#include "expr/lexer.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace flexjit::expr {
namespace {

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string hex_byte(unsigned char c) {
  static const char digits[] = "0123456789ABCDEF";
  std::string out = "0x";
  out += digits[c >> 4];
  out += digits[c & 15];
  return out;
}

// Hints for characters people type by habit from other languages.
std::string stray_character_hint(char c) {
  switch (c) {
    case ';': return "an expression is not a statement; remove the ';'";
    case '{':
    case '}': return "group with parentheses '(' and ')'";
    case '\'':
    case '"': return "the expression language has no strings";
    case '~': return "bitwise not is not supported; for a bool use '!'";
    case '#': return "the expression language has no comments or directives";
    case '\\': return "write the whole expression without line continuations";
    case '.': return "a float literal needs a digit before or after the '.', e.g. `0.5`";
    default: return "";
  }
}

class Lexer {
 public:
  Lexer(std::string_view source, DiagnosticSink& sink) : source_(source), sink_(sink) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      skip_whitespace();
      if (pos_ >= source_.size()) break;
      Token token;
      if (lex_one(token)) tokens.push_back(token);
    }
    Token end;
    end.kind = TokenKind::end;
    end.span = {static_cast<uint32_t>(source_.size()), 0};
    tokens.push_back(end);
    return tokens;
  }

 private:
  void skip_whitespace() {
    while (pos_ < source_.size() && std::isspace(static_cast<unsigned char>(source_[pos_]))) ++pos_;
  }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < source_.size() ? source_[pos_ + ahead] : '\0';
  }
  SourceSpan span_from(size_t start) const {
    return {static_cast<uint32_t>(start), static_cast<uint32_t>(pos_ - start)};
  }

  bool lex_one(Token& token) {
    const size_t start = pos_;
    const char c = source_[pos_];
    if (is_identifier_start(c)) return lex_word(token);
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return lex_number(token);
    token.kind = TokenKind::end;
    const char next = peek(1);
    auto two = [&](TokenKind kind) { pos_ += 2; token.kind = kind; };
    auto one = [&](TokenKind kind) { pos_ += 1; token.kind = kind; };
    switch (c) {
      case '(': one(TokenKind::lparen); break;
      case ')': one(TokenKind::rparen); break;
      case '[': one(TokenKind::lbracket); break;
      case ']': one(TokenKind::rbracket); break;
      case ',': one(TokenKind::comma); break;
      case '?': one(TokenKind::question); break;
      case ':': one(TokenKind::colon); break;
      case '+': one(TokenKind::plus); break;
      case '-': one(TokenKind::minus); break;
      case '*': next == '*' ? two(TokenKind::star_star) : one(TokenKind::star); break;
      case '/': one(TokenKind::slash); break;
      case '%': one(TokenKind::percent); break;
      case '^': one(TokenKind::caret); break;
      case '!': next == '=' ? two(TokenKind::bang_eq) : one(TokenKind::bang); break;
      case '&': next == '&' ? two(TokenKind::amp_amp) : one(TokenKind::amp); break;
      case '|': next == '|' ? two(TokenKind::pipe_pipe) : one(TokenKind::pipe); break;
      case '=':
        if (next == '=') two(TokenKind::eq_eq);
        else if (next == '>') two(TokenKind::arrow_ge);
        else if (next == '<') two(TokenKind::arrow_le);
        else one(TokenKind::assign);
        break;
      case '<':
        if (next == '=') two(TokenKind::le);
        else if (next == '<') two(TokenKind::shift_left);
        else one(TokenKind::lt);
        break;
      case '>':
        if (next == '=') two(TokenKind::ge);
        else if (next == '>') two(TokenKind::shift_right);
        else one(TokenKind::gt);
        break;
      default: return lex_stray();
    }
    token.span = span_from(start);
    token.text = source_.substr(start, pos_ - start);
    return true;
  }

  bool lex_word(Token& token) {
    const size_t start = pos_;
    while (pos_ < source_.size() && is_identifier_char(source_[pos_])) ++pos_;
    // `torch.tanh`, `math.inf`: kept as one dotted name so that the checker can say what to write.
    while (peek() == '.' && is_identifier_start(peek(1))) {
      ++pos_;
      while (pos_ < source_.size() && is_identifier_char(source_[pos_])) ++pos_;
    }
    token.span = span_from(start);
    token.text = source_.substr(start, pos_ - start);
    if (token.text == "true") token.kind = TokenKind::kw_true;
    else if (token.text == "false") token.kind = TokenKind::kw_false;
    else if (token.text == "inf") token.kind = TokenKind::kw_inf;
    else token.kind = TokenKind::identifier;
    return true;
  }

  bool lex_number(Token& token) {
    const size_t start = pos_;
    bool is_float = false;
    while (is_digit(peek())) ++pos_;
    if (peek() == '.') {
      is_float = true;
      ++pos_;
      while (is_digit(peek())) ++pos_;
    }
    bool bad_exponent = false;
    if (peek() == 'e' || peek() == 'E') {
      is_float = true;
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!is_digit(peek())) bad_exponent = true;
      while (is_digit(peek())) ++pos_;
    }
    // Letters, digits or dots glued to a number make it one malformed token (`12ab`, `1.2.3`,
    // `0x1F`, `1.5f`), reported once.
    bool glued = false;
    while (is_identifier_char(peek()) || peek() == '.') {
      glued = true;
      ++pos_;
    }
    token.span = span_from(start);
    token.text = source_.substr(start, pos_ - start);
    const std::string text(token.text);
    if (glued || bad_exponent) {
      std::string hint;
      if (text.size() > 1 && text.back() == 'f' && !bad_exponent)
        hint = "float literals take no suffix; write `" + text.substr(0, text.size() - 1) + "`";
      else if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        hint = "hexadecimal literals are not supported; write the number in decimal";
      else if (bad_exponent && !glued)
        hint = "an exponent needs digits, e.g. `1e-3`";
      sink_.error(token.span, "malformed number '" + text + "'", hint);
      return false;
    }
    if (is_float) {
      errno = 0;
      const double value = std::strtod(text.c_str(), nullptr);
      // At or past 2^128 - 2^103 a float rounds to infinity.
      if ((errno == ERANGE && std::isinf(value)) || std::fabs(value) >= 3.4028235677973366e38) {
        sink_.error(token.span, "float literal " + text + " is too large",
                    "the largest float is 3.4028235e38; write `inf` for infinity");
        return false;
      }
      token.kind = TokenKind::floating;
      token.floating = value;
      return true;
    }
    // Integers are range-checked by the parser; anything past 2^32 is certainly too large.
    uint64_t value = 0;
    for (char c : text) {
      value = value * 10 + static_cast<uint64_t>(c - '0');
      if (value > (uint64_t{1} << 32)) break;
    }
    token.kind = TokenKind::integer;
    token.integer = value;
    return true;
  }

  bool lex_stray() {
    const size_t start = pos_;
    const auto first = static_cast<unsigned char>(source_[pos_]);
    if (first >= 0x80) {
      while (pos_ < source_.size() && static_cast<unsigned char>(source_[pos_]) >= 0x80) ++pos_;
      sink_.error(span_from(start), "non-ASCII character in the expression",
                  "only ASCII letters, digits, operators and spaces are allowed");
      return false;
    }
    if (first < 0x20 || first == 0x7f) {
      ++pos_;
      sink_.error(span_from(start), "unexpected control character " + hex_byte(first));
      return false;
    }
    // A run of the same stray character is one mistake (`;;`, `$$`).
    ++pos_;
    while (pos_ < source_.size() && source_[pos_] == source_[start]) ++pos_;
    const std::string text(source_.substr(start, pos_ - start));
    const char quote = source_[start] == '\'' ? '"' : '\'';
    sink_.error(span_from(start),
                std::string(text.size() == 1 ? "unexpected character " : "unexpected characters ") +
                    quote + text + quote,
                stray_character_hint(source_[start]));
    return false;
  }

  std::string_view source_;
  DiagnosticSink& sink_;
  size_t pos_ = 0;
};

}  // namespace

std::string describe_token(const Token& token) {
  switch (token.kind) {
    case TokenKind::end: return "the end of the expression";
    case TokenKind::integer:
    case TokenKind::floating: return "the number " + std::string(token.text);
    default: return "'" + std::string(token.text) + "'";
  }
}

std::vector<Token> tokenize(std::string_view source, DiagnosticSink& sink) {
  return Lexer(source, sink).run();
}

}  // namespace flexjit::expr
