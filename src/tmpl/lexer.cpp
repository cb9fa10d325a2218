#include "tmpl/lexer.hpp"

#include <algorithm>
#include <cstring>

namespace flexjit::tmpl {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// Jinja normalises every line break to "\n"; doing the same keeps columns and trimming simple.
std::string normalize_newlines(std::string_view text, bool keep_trailing_newline) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      out += text[i];
    }
  }
  if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

const char* closing_of(char opener_kind) {
  return opener_kind == '{' ? "}}" : opener_kind == '%' ? "%}" : "#}";
}

class Lexer {
 public:
  Lexer(const std::string& name, std::string_view text, const Options& options)
      : name_(name), options_(options), src_(normalize_newlines(text, options.keep_trailing_newline)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      size_t open = find_tag_start(pos_);
      if (open == std::string::npos) {
        emit_text(pos_, src_.substr(pos_));
        break;
      }
      const char kind = src_[open + 1];
      const char sign = open + 2 < src_.size() && (src_[open + 2] == '-' || src_[open + 2] == '+')
                            ? src_[open + 2] : '\0';
      emit_text(pos_, strip_before_tag(src_.substr(pos_, open - pos_), sign, kind == '{'));
      const size_t inner = open + 2 + (sign ? 1 : 0);
      if (kind == '#') {
        lex_comment(open, inner);
      } else if (kind == '%' && lex_raw_block(inner)) {
        // handled: the raw content became one Text token
      } else {
        lex_tag(open, inner, kind);
      }
    }
    tokens_.push_back({TokenKind::End, "", position_at(src_.size())});
    return std::move(tokens_);
  }

 private:
  Position position_at(size_t offset) const {
    auto next_line = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const int line = static_cast<int>(next_line - line_starts_.begin());
    // Tokens come in source order, so counting on from the previous position keeps a very long
    // line linear rather than quadratic.
    if (line != last_.line || offset < last_offset_) {
      last_ = {line, 1};
      last_offset_ = *(next_line - 1);
    }
    // Count characters, not bytes: UTF-8 continuation bytes do not start a character.
    for (; last_offset_ < offset && last_offset_ < src_.size(); ++last_offset_)
      if ((static_cast<unsigned char>(src_[last_offset_]) & 0xC0) != 0x80) ++last_.column;
    return last_;
  }

  [[noreturn]] void fail(size_t offset, const std::string& message) const {
    Position p = position_at(offset);
    throw TemplateError(name_, p.line, p.column, message);
  }

  // A tag that never closes: reported where it opened (the parse error it causes further on is
  // only a symptom), naming what came before the closing characters did.
  [[noreturn]] void fail_unterminated(size_t open, size_t found = std::string::npos,
                                      const std::string& what_found = "") const {
    const char kind = src_[open + 1];
    const Position opened = position_at(open);
    std::string before = "the end of the template";
    if (found != std::string::npos) {
      const Position p = position_at(found);
      before = what_found + " at " + std::to_string(p.line) + ":" + std::to_string(p.column);
    }
    fail(open, std::string(kind == '#' ? "unclosed comment '{" : "unclosed tag '{") + kind + "' opened at " +
                   std::to_string(opened.line) + ":" + std::to_string(opened.column) + ": expected '" +
                   closing_of(kind) + "' before " + before);
  }

  // Whether the tag being lexed is closed before the next tag starts: if not, an odd character
  // inside it means the tag was left open, not that the expression is wrong.
  bool closed_ahead(size_t at) const {
    const size_t close = src_.find(closing_of(src_[tag_open_ + 1]), at);
    const size_t next = find_tag_start(at);
    return close != std::string::npos && (next == std::string::npos || close < next);
  }

  size_t find_tag_start(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#'))
        return i;
    }
    return std::string::npos;
  }

  bool tag_start_at(size_t i) const {
    return i + 1 < src_.size() && src_[i] == '{' &&
           (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#');
  }

  // Whitespace control on the left of a tag, exactly as Jinja does it: `-` strips every
  // whitespace character; otherwise lstrip_blocks strips the spaces that are alone on the line
  // before a block tag or comment (never before `{{`; `+` opts out).
  std::string strip_before_tag(std::string text, char sign, bool is_variable) const {
    if (sign == '-') {
      size_t keep = text.size();
      while (keep > 0 && is_space(text[keep - 1])) --keep;
      text.resize(keep);
    } else if (sign != '+' && options_.lstrip_blocks && !is_variable) {
      size_t newline = text.rfind('\n');
      size_t line_start = newline == std::string::npos ? 0 : newline + 1;
      bool at_line_start = line_start > 0 || line_starting_;
      bool only_spaces = line_start < text.size() &&
                         std::all_of(text.begin() + static_cast<std::ptrdiff_t>(line_start),
                                     text.end(), is_space);
      if (at_line_start && only_spaces) text.resize(line_start);
    }
    return text;
  }

  // Whitespace control on the right of a tag: `-` strips all following whitespace; trim_blocks
  // drops one newline after a block tag or comment (`+` opts out).
  void finish_tag(size_t after, char sign, bool is_variable) {
    if (sign == '-') {
      while (after < src_.size() && is_space(src_[after])) ++after;
    } else if (sign != '+' && !is_variable && options_.trim_blocks && after < src_.size() &&
               src_[after] == '\n') {
      ++after;
    }
    // The next text starts a line when what this tag consumed ended with a newline; lstrip_blocks
    // needs to know that for text that holds no newline of its own.
    line_starting_ = src_[after - 1] == '\n';
    pos_ = after;
  }

  void emit_text(size_t offset, std::string text) {
    if (!text.empty()) tokens_.push_back({TokenKind::Text, std::move(text), position_at(offset)});
  }

  void lex_comment(size_t open, size_t inner) {
    size_t close = src_.find("#}", inner);
    if (close == std::string::npos) fail_unterminated(open);
    char sign = close > inner && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : '\0';
    finish_tag(close + 2, sign, false);
  }

  // Matches the end of a tag at `at`: "%}" / "}}" with an optional '-' or '+' before it.
  // Returns its length (0 when there is none) and sets `sign`.
  size_t match_tag_end(size_t at, char kind, char& sign) const {
    const char* close = closing_of(kind);
    sign = '\0';
    if (src_.compare(at, 2, close) == 0) return 2;
    if (at + 2 < src_.size() && (src_[at] == '-' || (src_[at] == '+' && kind == '%')) &&
        src_.compare(at + 1, 2, close) == 0) {
      sign = src_[at];
      return 3;
    }
    return 0;
  }

  size_t skip_spaces(size_t at) const {
    while (at < src_.size() && is_space(src_[at])) ++at;
    return at;
  }

  // `{% raw %}...{% endraw %}`: the content is output as it is, tags and all.
  bool lex_raw_block(size_t inner) {
    size_t keyword = skip_spaces(inner);
    if (src_.compare(keyword, 3, "raw") != 0 || (keyword + 3 < src_.size() && is_name_char(src_[keyword + 3])))
      return false;
    char sign;
    size_t at = skip_spaces(keyword + 3);
    size_t end_length = match_tag_end(at, '%', sign);
    if (end_length == 0) return false;  // let the parser report what follows 'raw'
    // Jinja applies no trim_blocks after `{% raw %}` (only `-%}` strips); the output matches.
    finish_tag(at + end_length, sign == '-' ? '-' : '+', false);
    const size_t content_start = pos_;
    for (size_t search = content_start;; ++search) {
      search = src_.find("{%", search);
      if (search == std::string::npos)
        fail(keyword, "unclosed 'raw' block: expected '{% endraw %}' before the end of the template");
      size_t tag_inner = search + 2;
      char open_sign = '\0';
      if (tag_inner < src_.size() && (src_[tag_inner] == '-' || src_[tag_inner] == '+'))
        open_sign = src_[tag_inner++];
      size_t name = skip_spaces(tag_inner);
      if (src_.compare(name, 6, "endraw") != 0) continue;
      size_t close_at = skip_spaces(name + 6);
      char close_sign;
      size_t close_length = match_tag_end(close_at, '%', close_sign);
      if (close_length == 0) continue;
      emit_text(content_start, strip_before_tag(src_.substr(content_start, search - content_start),
                                                open_sign, false));
      finish_tag(close_at + close_length, close_sign, false);
      return true;
    }
  }

  void lex_tag(size_t open, size_t inner, char kind) {
    const bool is_variable = kind == '{';
    tag_open_ = open;
    tokens_.push_back({is_variable ? TokenKind::VariableBegin : TokenKind::BlockBegin,
                       is_variable ? "{{" : "{%", position_at(open)});
    size_t at = inner;
    for (;;) {
      at = skip_spaces(at);
      if (at >= src_.size()) fail_unterminated(open);
      char sign;
      if (size_t length = match_tag_end(at, kind, sign)) {
        tokens_.push_back({is_variable ? TokenKind::VariableEnd : TokenKind::BlockEnd,
                           closing_of(kind), position_at(at)});
        finish_tag(at + length, sign, is_variable);
        return;
      }
      // A new tag before this one closed almost always means a forgotten '}}' or '%}'.
      if (tag_start_at(at)) fail_unterminated(open, at, "the next tag");
      at = lex_expression_token(at);
    }
  }

  size_t lex_expression_token(size_t at) {
    const char c = src_[at];
    const Position where = position_at(at);
    size_t end = at;
    if (is_name_start(c)) {
      while (end < src_.size() && is_name_char(src_[end])) ++end;
      tokens_.push_back({TokenKind::Name, src_.substr(at, end - at), where});
      return end;
    }
    if (is_digit(c)) return lex_number(at, where);
    if (c == '"' || c == '\'') return lex_string(at, where);
    static const char* const two_char_operators[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const char* op : two_char_operators) {
      if (src_.compare(at, 2, op) == 0) {
        tokens_.push_back({TokenKind::Operator, op, where});
        return at + 2;
      }
    }
    if (std::strchr("+-*/%~<>=()[].,|:", c) != nullptr) {
      tokens_.push_back({TokenKind::Operator, std::string(1, c), where});
      return at + 1;
    }
    // Show the whole character, not one byte of its UTF-8 encoding.
    end = at + 1;
    while (end < src_.size() && (static_cast<unsigned char>(src_[end]) & 0xC0) == 0x80) ++end;
    if (!closed_ahead(at)) fail_unterminated(tag_open_, at, "the unexpected character '" + src_.substr(at, end - at) + "'");
    fail(at, "unexpected character '" + src_.substr(at, end - at) + "'");
  }

  size_t lex_digits(size_t at, std::string& out) const {
    // Python-style '_' separators between digits ("1_000_000").
    while (at < src_.size() &&
           (is_digit(src_[at]) || (src_[at] == '_' && at + 1 < src_.size() && is_digit(src_[at + 1])))) {
      if (src_[at] != '_') out += src_[at];
      ++at;
    }
    return at;
  }

  size_t lex_number(size_t at, Position where) {
    std::string digits;
    size_t end = lex_digits(at, digits);
    bool is_float = false;
    if (end + 1 < src_.size() && src_[end] == '.' && is_digit(src_[end + 1])) {
      digits += '.';
      end = lex_digits(end + 1, digits);
      is_float = true;
    }
    if (end < src_.size() && (src_[end] == 'e' || src_[end] == 'E')) {
      size_t exponent = end + 1;
      std::string exponent_text = "e";
      if (exponent < src_.size() && (src_[exponent] == '+' || src_[exponent] == '-'))
        exponent_text += src_[exponent++];
      if (exponent < src_.size() && is_digit(src_[exponent])) {
        end = lex_digits(exponent, exponent_text);
        digits += exponent_text;
        is_float = true;
      }
    }
    tokens_.push_back({is_float ? TokenKind::Float : TokenKind::Integer, digits, where});
    return end;
  }

  size_t lex_string(size_t at, Position where) {
    const char quote = src_[at];
    std::string value;
    size_t i = at + 1;
    for (; i < src_.size() && src_[i] != quote; ++i) {
      if (src_[i] != '\\' || i + 1 >= src_.size()) {
        value += src_[i];
        continue;
      }
      const char escaped = src_[++i];
      switch (escaped) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case '0': value += '\0'; break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case '\n': break;  // a backslash at the end of a line continues the string
        default: value += '\\'; value += escaped; break;  // unknown escapes stay, as in Python
      }
    }
    if (i >= src_.size()) {
      if (!closed_ahead(at)) fail_unterminated(tag_open_, at, "the quote");
      fail(at, "unterminated string literal");
    }
    tokens_.push_back({TokenKind::String, std::move(value), where});
    return i + 1;
  }

  const std::string& name_;
  const Options& options_;
  const std::string src_;
  std::vector<size_t> line_starts_;
  mutable Position last_{0, 1};  // the position of last_offset_, a cache for position_at
  mutable size_t last_offset_ = 0;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  size_t tag_open_ = 0;  // where the tag being lexed opened
  bool line_starting_ = true;
};

}  // namespace

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::End: return "the end of the template";
    case TokenKind::Text: return "text";
    case TokenKind::String: return "'\"" + token.text + "\"'";
    default: return "'" + token.text + "'";
  }
}

std::vector<Token> tokenize(const std::string& template_name, std::string_view text,
                            const Options& options) {
  return Lexer(template_name, text, options).run();
}

}  // namespace flexjit::tmpl
