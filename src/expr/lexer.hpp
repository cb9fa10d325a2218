#pragma once
// Splits expression text into tokens. Reports stray characters and malformed numbers to the sink
// and leaves them out of the token list, so one bad character gives one message.
#include <cstdint>
#include <string_view>
#include <vector>

#include "expr/ast.hpp"
#include "expr/diagnostics.hpp"

namespace flexjit::expr {

enum class TokenKind : uint8_t {
  end, integer, floating, identifier, kw_true, kw_false, kw_inf,
  lparen, rparen, lbracket, rbracket, comma, question, colon,
  plus, minus, star, slash, percent, bang,
  amp, amp_amp, pipe, pipe_pipe, caret,
  eq_eq, bang_eq, lt, le, gt, ge,
  // Mistakes recognised so that the parser can say what to write instead.
  assign,       // =
  arrow_ge,     // =>
  arrow_le,     // =<
  star_star,    // **
  shift_left,   // <<
  shift_right,  // >>
};

struct Token {
  TokenKind kind = TokenKind::end;
  SourceSpan span;
  uint64_t integer = 0;   // integer literal (range checked by the parser, which knows about '-')
  double floating = 0.0;  // float literal
  std::string_view text;  // the token's characters (identifiers)
};

/// "'+'", "'kv_idx'", "the number 3", "the end of the expression": how a message names a token.
std::string describe_token(const Token& token);

/// Tokenizes `source`; the last token is always `end`. Errors go to `sink`.
std::vector<Token> tokenize(std::string_view source, DiagnosticSink& sink);

}  // namespace flexjit::expr
