#pragma once
// Lexer: template text -> tokens. Plain text between tags becomes Text tokens with the
// whitespace control (`-`, `+`, trim_blocks, lstrip_blocks) already applied; the inside of
// `{{ }}` and `{% %}` becomes expression tokens; comments and `{% raw %}` are resolved here too,
// so the parser only ever sees text, tags and expression tokens.

#include <string>
#include <string_view>
#include <vector>

#include "tmpl/template.hpp"

namespace flexjit::tmpl {

/// 1-based line and column (in characters, not bytes) of a token in its template.
struct Position {
  int line = 1;
  int column = 1;
};

enum class TokenKind {
  Text,           // literal output
  VariableBegin,  // {{
  VariableEnd,    // }}
  BlockBegin,     // {%
  BlockEnd,       // %}
  Name,
  Integer,
  Float,
  String,
  Operator,
  End,  // end of the template
};

struct Token {
  TokenKind kind;
  std::string text;  // Text: the output; String: the decoded value; otherwise the source text
  Position pos;
};

/// How a token reads in "expected ... but found <this>" messages.
std::string describe(const Token& token);

/// Splits a whole template into tokens (ending with an End token). Throws TemplateError for an
/// unterminated tag, comment, string or raw block, and for characters no expression can contain.
std::vector<Token> tokenize(const std::string& template_name, std::string_view text,
                            const Options& options);

}  // namespace flexjit::tmpl
